"""Helpers of the reliability suite (imported by its conftest and tests)."""
from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import time

import rocpy
import rocpy.debug
from live import settle as _settle  # tests/live.py (tests/conftest.py puts tests/ on sys.path)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SLOW = os.environ.get("ROCPY_SLOW") == "1"


def has_hsa() -> bool:
    from rocpy import _backend
    return _backend.current().has_hsa


def has_graphs() -> bool:
    """Whether this backend's HIP has graphs and stream capture (HIP 5.x's NVIDIA platform has not)."""
    from rocpy.hip._api import api
    return api().has("hipGraphCreate")


def needs_graphs(case_id: str) -> bool:
    """Whether a misuse case (by its id) goes through graphs or stream capture."""
    graph_words = ("Graph", "add_memset", "add_kernel", "add_copy", "add_host", "add_empty",
                   "capture", "exec")
    return any(word in case_id for word in graph_words)


def skip_without_graphs(case_id: str) -> None:
    import pytest
    if needs_graphs(case_id) and not has_graphs():
        pytest.skip("this backend's HIP has no graphs or stream capture")


def quiesce() -> dict:
    """Wait for every device, collect garbage, drain the reaper once; what is still alive."""
    from rocpy import hip
    for i in range(hip.device_count()):
        hip.Device(i).sync()
    rocpy.debug.collect()
    return rocpy.debug.live_objects()


def wait_live(expected: dict, timeout: float = 5.0) -> dict:
    """`quiesce` until ``live_objects() == expected`` (fences are polled every few ms)."""
    deadline = time.monotonic() + timeout
    while True:
        live = quiesce()
        if live == expected or time.monotonic() > deadline:
            return live
        time.sleep(0.005)


def settle(timeout: float = 10.0) -> dict:
    """`live.settle` with this suite's longer timeout and shorter poll: what is alive at the end."""
    return _settle(timeout, poll=0.01)


def allocations() -> int | None:
    """The stub's live allocation count; None on a real backend (no such counter)."""
    if not rocpy.backend().is_stub:
        return None
    return importlib.import_module("rocpy.stub").live_allocations()


def run_py(code: str, env: dict | None = None, timeout: float = 60.0,
           args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter on the stub; the finished process (not checked)."""
    full = dict(os.environ)
    full["ROCPY_BACKEND"] = "stub"
    full["PYTHONPATH"] = ROOT + os.pathsep + full.get("PYTHONPATH", "")
    full.pop("PYTHONFAULTHANDLER", None)
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=full, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)
