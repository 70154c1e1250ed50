"""Fixtures of the CPU-kernel corpus: the device, a leak check, a compiler check, a child runner."""
from __future__ import annotations

import os
import sys

import pytest

import rocpy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def no_leaks(rocpy_leak_check):
    """The plugin's leak check (rocpy.testing.LeakCheck), as in the other folders."""
    yield


@pytest.fixture(scope="session")
def dev():
    from rocpy import hip
    return hip.Device(0)


@pytest.fixture(scope="session")
def compiler(dev):
    """Program.compile works here: the stub needs hipcc (metadata) and c++ (the CPU build)."""
    from rocpy.hip import program
    name = rocpy.backend().name
    if name == "stub":
        if program._find_hipcc() is None:
            pytest.skip("the stub compiles with hipcc, which is not installed")
        from rocpy import cpukern
        try:
            cpukern.compiler()
        except cpukern.CpuCompileError as exc:
            pytest.skip(str(exc))
    elif name == "nvidia":
        from corpus import find_nvcc
        from rocpy.hip._api import api
        if not api().has("hiprtcCreateProgram") and find_nvcc() is None:
            pytest.skip("no hipRTC on this nvidia backend and no nvcc")


@pytest.fixture
def stub_only():
    if rocpy.backend().name != "stub":
        pytest.skip("the stub's CPU builds")
