"""Fixtures of the rocpy.hsa tests: a Runtime, its agents, the test kernels, leak checks."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

import rocpy
from rocpy import hsa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _has_hsa() -> bool:
    from rocpy import _backend
    return _backend.current().has_hsa


def pytest_runtest_setup(item):
    """This folder's tests need an HSA runtime (a runtest hook here sees only tests/hsa)."""
    if not _has_hsa():
        pytest.skip(f"the {rocpy.backend().name} backend has no HSA runtime")


@pytest.fixture(autouse=True)
def no_leaks(rocpy_leak_check):
    """The plugin's leak check (rocpy.testing.LeakCheck): no owned native handle, no stub
    allocation and no armed stub fault outlives a test."""
    yield


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
def empty(gpu, empty_path):
    """The empty kernel, its executable closed afterwards."""
    with hsa.Executable.load(gpu, empty_path) as exe:
        yield exe.kernel("empty")


@pytest.fixture
def q(gpu):
    """A queue on the GPU agent, closed afterwards."""
    with gpu.create_queue() as queue:
        yield queue


@pytest.fixture
def q_factory(gpu):
    """``q_factory(**options)``: queues on the GPU agent, all closed afterwards."""
    made = []

    def make(**options):
        made.append(gpu.create_queue(**options))
        return made[-1]
    yield make
    for queue in made:
        queue.close()


@pytest.fixture
def shared(host_pool, gpu):
    """``shared(n)``: n bytes of host memory the GPU may access."""
    def make(nbytes: int) -> hsa.Buffer:
        buf = host_pool.allocate(nbytes)
        buf.allow_access([gpu])
        return buf
    return make


def _wait_for(predicate, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.005)


@pytest.fixture
def wait_for():
    """``wait_for(predicate, timeout=30)``: poll until true; AssertionError on timeout."""
    return _wait_for


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
