"""Fixtures of the reliability suite: misuse, load, faults, lifetime, soak (issue 12).

Every test ends with nothing leaked: ``rocpy.debug.live_objects()`` back to
``{}`` and, on the stub, its live allocation count back to where it was, once
every device is idle.  Tests that must watch a process die, exit or fork run
their code in a subprocess on the stub (`run_py`).

On a real backend (amd, nvidia) the in-process tests run too: the misuse
tables, kernels and threads meet the real runtime.  What needs the stub — its
fault injection, allocation counters, two simulated devices, subprocesses
(`py`), crash corpus — is skipped there, saying why.

``ROCPY_SLOW=1`` runs the long variants (``slow``): 10^5 soak cycles, longer
thread runs, more hypothesis examples.
"""
from __future__ import annotations

import numpy as np
import pytest
from rel_support import SLOW, has_hsa, run_py

import rocpy
import rocpy.debug


# whole modules built on the stub's faults, counters or simulated devices
STUB_MODULES = {"test_faults.py", "test_soak.py", "test_crashfind.py", "test_misuse_devices.py",
                "test_state_machine.py"}


def _needs_stub(item) -> bool:
    return (item.fspath.basename in STUB_MODULES or "py" in getattr(item, "fixturenames", ())
            or item.get_closest_marker("stub_only") is not None)


def pytest_runtest_setup(item):
    """A runtest hook here sees only tests/reliability's items."""
    info = rocpy.backend()
    if not info.is_stub and _needs_stub(item):
        pytest.skip(f"needs the stub (fault injection, allocation counters, simulated "
                    f"devices or a stub subprocess); the backend is {info.name}")
    elif item.get_closest_marker("slow") and not SLOW:
        pytest.skip("long variant: set ROCPY_SLOW=1")


@pytest.fixture(scope="session", autouse=True)
def _frozen_heap():
    """Collections scan only what tests make: the import-time heap is frozen (gc.freeze)."""
    import gc
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def no_leaks(rocpy_leak_check):
    """The plugin's leak check (rocpy.testing.LeakCheck): nothing rocpy owns, no stub
    allocation and no armed fault outlives a test."""
    yield


@pytest.fixture(scope="session")
def kernel_paths(kernel_cache, request):
    """Compiled test kernels: ``{"vadd": path, ...}`` for gfx90a (the stub's default, and
    what the stub subprocesses load), cubins for Device(0) on nvidia."""
    names = ("vadd", "fill", "empty")
    if rocpy.backend().name == "nvidia":
        from kernels.compile import compile_cuda, find_nvcc
        from rocpy import hip
        if find_nvcc() is None:
            pytest.skip("nvcc not found: no kernels for the nvidia backend")
        return {n: compile_cuda(n, kernel_cache, hip.Device(0).arch) for n in names}
    if rocpy.backend().name == "amd":
        from rocpy import hip
        build = request.getfixturevalue("hip_kernel")
        return {n: build(n, (hip.Device(0).arch,)) for n in names}
    build = request.getfixturevalue("hip_kernel")
    return {name: build(name) for name in names}


@pytest.fixture
def dev():
    from rocpy import hip
    return hip.Device(0)


class _Kernels(dict):
    """Kernels loaded on first use: ``kernels["vadd"]``, their types declared."""

    def __init__(self, paths, dev):
        super().__init__()
        self.paths, self.dev, self.modules = paths, dev, []

    def __missing__(self, name):
        from kernels.compile import declared_types
        from rocpy import hip
        # typed from the source, as the suites' ``load`` fixture does (extern "C"
        # kernels from a file alone refuse bare numbers: tests/hip/test_typed_launch.py)
        mod = hip.Module.load(self.paths[name], self.dev, param_types=declared_types(name))
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
def hsa_env(hsa_rt, kernel_paths):
    """The HSA objects the misuse tables use: agents, a host pool, a fill kernel, a queue,
    a signal, a 4 KiB host buffer the GPU may access (closed at the end)."""
    from rocpy import hsa
    gpu, cpu = hsa_rt.gpu_agents[0], hsa_rt.cpu_agents[0]
    host_pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    exe = hsa.Executable.load(gpu, kernel_paths["fill"])
    e = {"rt": hsa_rt, "gpu": gpu, "cpu": cpu, "pool": host_pool, "exe": exe, "kernel": exe.kernel("fill"),
         "queue": gpu.create_queue(), "signal": hsa.Signal(1), "buf": host_pool.allocate(4096), "hsa": hsa}
    e["buf"].allow_access([gpu])
    e["args"] = (e["buf"], np.uint32(1), np.int32(64))
    yield e
    e["queue"].sync(timeout=5)
    for name in ("queue", "signal", "buf"):
        e[name].close()
    kernel = e.pop("kernel")
    del kernel
    exe.close()
    e.clear()


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
