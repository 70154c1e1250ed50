"""The crash-finder (tools/crashfind.py) against this tree's normal build of the stub.

Every invalid raw call in its corpus must return a status or abort with the
stub's clear message; every public-layer case (tools/crashfind_public.py:
numpy integers, out-of-range and wrong-typed values, object dtypes, SIGINT
during every blocking wait) must work or raise a clear error naming the
argument; a crash (a signal, a silent abort, a hang, a Python error
in the harness) is a bug.  The ASan+UBSan variant is ``python tools/crashfind.py
--asan`` (it builds its own copy of the stub; too slow for every CI run).
"""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from rel_support import ROOT


@pytest.fixture(scope="module")
def crashfind():
    spec = importlib.util.spec_from_file_location("rocpy_tools_crashfind",
                                                  os.path.join(ROOT, "tools", "crashfind.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_corpus_is_systematic(crashfind):
    cases = crashfind.corpus()
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    assert len(cases) > 400
    for variant in ("null", "forged", "dangling"):
        assert sum(f":{variant}" in n for n in names) > 30, variant
    assert {c.api for c in cases} == {"hip", "hsa", "hsa-raw", "py"}
    # the public layer's classes (issue 20): each covers many parameters
    for cls, least in (("numpy-int", 80), ("out-of-range", 25), ("wrong-type", 60),
                       ("dtype", 30), ("sigint", 10)):
        assert sum(n.startswith(f"py:{cls}:") for n in names) >= least, cls


def test_no_invalid_raw_call_crashes(crashfind, kernel_cache, capsys):
    kernels = crashfind.build_kernels(kernel_cache)
    results = crashfind.run(crashfind.corpus(), kernels)
    counts = crashfind.summary(results)
    with capsys.disabled():
        print(f"\n[crashfind] {len(results)} cases: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    crashes = [f"{r.name}: {r.detail}\n{r.stderr[-800:]}" for r in results if r.outcome == "crash"]
    assert not crashes, "\n".join(crashes)
    unexpected = [f"{r.name}: {r.detail} (expected {r.expect})" for r in results if r.outcome == "unexpected"]
    assert not unexpected, "\n".join(unexpected)
    assert counts["abort"] > 0 and counts["status"] > 0
