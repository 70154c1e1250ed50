"""Fixtures of the reliability suite: misuse, load, faults, lifetime, soak (issue 12).

Every test here runs on the stub (it counts the stub's allocations and
injects its faults) and ends with nothing leaked: ``rocpy.debug.live_objects()``
back to ``{}`` and the stub's live allocation count back to where it was,
once every device is idle.  Tests that must watch a process die, exit or
fork run their code in a subprocess (`run_py`).

``ROCPY_SLOW=1`` runs the long variants (``slow``): 10^5 soak cycles, longer
thread runs, more hypothesis examples.
"""
from __future__ import annotations

import time

import pytest
from rel_support import HERE, SLOW, allocations, has_hsa, run_py, settle

import rocpy
import rocpy.debug


def pytest_collection_modifyitems(config, items):
    info = rocpy.backend()
    for item in items:
        if not str(item.fspath).startswith(HERE):
            continue
        if not info.is_stub:
            item.add_marker(pytest.mark.skip(
                reason=f"the reliability suite drives the stub's faults and counters; "
                       f"the backend is {info.name}"))
        elif "slow" in item.keywords and not SLOW:
            item.add_marker(pytest.mark.skip(reason="long variant: set ROCPY_SLOW=1"))


@pytest.fixture(scope="session", autouse=True)
def _frozen_heap():
    """Collections scan only what tests make: the import-time heap is frozen (gc.freeze)."""
    import gc
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def no_leaks():
    """Nothing rocpy owns, and no stub allocation, outlives a test; no fault stays armed."""
    import rocpy.stub
    before_live = rocpy.debug.live_objects()
    if before_live:
        before_live = settle()   # the previous test (elsewhere) left work in flight
    before = allocations()
    yield
    rocpy.stub.clear_faults()
    live = settle()
    assert live == {}, f"rocpy objects alive after the test: {live} (before: {before_live})"
    deadline = time.monotonic() + 5.0
    while allocations() != before and time.monotonic() < deadline:
        time.sleep(0.01)  # a stream's last release may still be on its way
    assert allocations() == before, f"stub allocations: {before} before, {allocations()} after"


@pytest.fixture(scope="session")
def kernel_paths(hip_kernel):
    """Compiled test kernels for gfx90a (the stub's default): ``{"vadd": path, ...}``."""
    return {name: hip_kernel(name) for name in ("vadd", "fill", "empty")}


@pytest.fixture
def dev():
    from rocpy import hip
    return hip.Device(0)


class _Kernels(dict):
    """Kernels loaded on first use: ``kernels["vadd"]``."""

    def __init__(self, paths, dev):
        super().__init__()
        self.paths, self.dev, self.modules = paths, dev, []

    def __missing__(self, name):
        from rocpy import hip
        mod = hip.Module.load(self.paths[name], self.dev)
        self.modules.append(mod)
        k = self[name] = mod[name]
        return k


@pytest.fixture
def kernels(kernel_paths, dev):
    """This test's kernels on Device(0), loaded on first use: ``kernels["vadd"]``."""
    found = _Kernels(kernel_paths, dev)
    yield found
    mods = found.modules
    found.clear()
    for mod in mods:
        mod.close()


@pytest.fixture
def hsa_rt():
    if not has_hsa():
        pytest.skip("this backend has no HSA runtime")
    from rocpy import hsa
    with hsa.Runtime() as rt:
        yield rt


@pytest.fixture
def py():
    """``py(code, env=None, timeout=60)``: run `code` in a subprocess (see `run_py`)."""
    return run_py
