"""Fixtures of the rocpy.hsa tests: a Runtime, its agents, the test kernels, leak checks."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

import rocpy
from rocpy import debug, hsa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _has_hsa() -> bool:
    from rocpy import _backend
    return _backend.current().has_hsa


def pytest_collection_modifyitems(config, items):
    if _has_hsa():
        return
    skip = pytest.mark.skip(reason=f"the {rocpy.backend().name} backend has no HSA runtime")
    for item in items:
        if "tests/hsa/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def no_leaks():
    """Every test leaves no owned native handle behind (and no armed stub fault).

    What enqueued work keeps alive is released by the reaper's next sweep
    once the work is done, so the check waits (briefly) for the sweeps.
    """
    yield
    if rocpy.backend().is_stub:
        from rocpy import stub
        stub.clear_faults()
    deadline = time.monotonic() + 10
    while True:
        assert debug.collect(), "the reaper did not finish in time"
        if not debug.live_objects() or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    assert debug.live_objects() == {}


@pytest.fixture
def rt():
    from rocpy import hsa
    with hsa.Runtime() as runtime:
        yield runtime


@pytest.fixture
def gpu(rt):
    agents = rt.gpu_agents
    if not agents:
        pytest.skip("no GPU agent")
    return agents[0]


@pytest.fixture
def cpu(rt):
    return rt.cpu_agents[0]


@pytest.fixture
def host_pool(cpu):
    """The CPU's fine-grained system pool (not the kernarg one)."""
    return cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]


@pytest.fixture
def vadd_path(hip_kernel, gpu):
    return hip_kernel("vadd", archs=(gpu.name,))


@pytest.fixture
def fill_path(hip_kernel, gpu):
    return hip_kernel("fill", archs=(gpu.name,))


@pytest.fixture
def empty_path(hip_kernel, gpu):
    return hip_kernel("empty", archs=(gpu.name,))


@pytest.fixture
def vadd(gpu, vadd_path):
    """The vadd kernel of the test code object, its executable closed afterwards."""
    with hsa.Executable.load(gpu, vadd_path) as exe:
        yield exe.kernel("vadd")


@pytest.fixture
def fill(gpu, fill_path):
    """The fill kernel, likewise."""
    with hsa.Executable.load(gpu, fill_path) as exe:
        yield exe.kernel("fill")


@pytest.fixture
def stub_only():
    if not rocpy.backend().is_stub:
        pytest.skip("controls the stub runtime")


def _run_python(code: str, env: dict | None = None, timeout: float = 60
                ) -> subprocess.CompletedProcess:
    full = dict(os.environ)
    full.setdefault("ROCPY_BACKEND", rocpy.backend().name)
    full["PYTHONPATH"] = ROOT + os.pathsep + full.get("PYTHONPATH", "")
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture
def run_python():
    """``run_python(code, env=None)``: run `code` in a fresh interpreter on this backend."""
    return _run_python
