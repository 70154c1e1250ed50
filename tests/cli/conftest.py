"""Fixtures of the ``rocpy info`` / ``rocpy bench`` tests (written for the stub; fast)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import rocpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BACKEND = rocpy.backend().name


def _compiler():
    from rocpy.bench.cases import find_hipcc, find_nvcc
    return find_nvcc() if BACKEND == "nvidia" else find_hipcc()


needs_compiler = pytest.mark.skipif(
    _compiler() is None, reason="no hipcc/nvcc: the benchmark kernels cannot be compiled")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """One kernel cache for the session: the benchmark kernels compile once."""
    return str(tmp_path_factory.mktemp("rocpy-cache"))


@pytest.fixture(autouse=True)
def _isolated(cache_dir, monkeypatch):
    """Kernels cached in the session's folder, never ~/.cache; no C reference program
    (3 s) unless a test asks for it."""
    monkeypatch.setenv("ROCPY_CACHE_DIR", cache_dir)
    monkeypatch.setenv("ROCPY_BENCH_C", os.path.join(cache_dir, "no-such-program"))


@pytest.fixture
def cli(capsys):
    """``cli(["bench", ...])`` -> (exit status, stdout, stderr), run in this process."""
    from rocpy.cli import main

    def run(argv):
        try:
            status = main(list(argv))
        except SystemExit as exc:     # argparse errors exit with 2
            status = exc.code
        out, err = capsys.readouterr()
        return status, out, err
    return run


@pytest.fixture
def subprocess_cli(cache_dir):
    """``subprocess_cli(["info"], timeout=..., env={...})`` runs ``python -m rocpy`` for real."""
    def run(argv, timeout=120, env=None):
        full = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
                    ROCPY_CACHE_DIR=cache_dir, **(env or {}))
        return subprocess.run([sys.executable, "-m", "rocpy", *argv], capture_output=True,
                              text=True, env=full, cwd=ROOT, timeout=timeout)
    return run
