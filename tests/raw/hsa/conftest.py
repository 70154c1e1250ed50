"""The raw HSA tests drive the stub runtime through rocpy.hsa.lib.

They test the stub's simulation itself (fault injection, abort paths), so
they run on the stub backend only.  ``rt`` brackets a test with hsa_init /
hsa_shut_down and fails it if tracked allocations leaked.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import rocpy  # noqa: E402


def pytest_runtest_setup(item):
    """A runtest hook here sees only tests/raw/hsa's items."""
    if not rocpy.backend().is_stub:
        pytest.skip("raw HSA tests exercise the stub runtime itself")


@pytest.fixture
def rt():
    from hsa_raw import check, lib
    lib.rocpy_stub_clear_faults()
    before = lib.rocpy_stub_live_allocations()
    check(lib.hsa_init())
    yield lib
    check(lib.hsa_shut_down())
    lib.rocpy_stub_clear_faults()
    assert lib.rocpy_stub_live_allocations() == before, "tracked allocations leaked"


@pytest.fixture
def gpu(rt):
    from hsa_raw import gpu_agents
    return gpu_agents()[0]


@pytest.fixture
def cpu(rt):
    from hsa_raw import cpu_agent
    return cpu_agent()


@pytest.fixture(scope="session")
def kernel_path(hip_kernel):
    """``kernel_path("vadd")`` -> a bundle for gfx90a, compiled once per session."""
    return hip_kernel
