"""Fixtures of the CPU-kernel corpus: the device, a leak check, a compiler check, a child runner."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

import rocpy
from live import settle

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def no_leaks():
    settle()
    yield
    live = settle()
    assert live == {}, f"rocpy objects still alive after the test: {live}"


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


def run_child(code: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter on the stub (for launches that end the process, or
    another stub configuration: ``extra`` environment)."""
    env = dict(os.environ, ROCPY_BACKEND="stub",
               PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests", "cpukern"), **extra)
    env.pop("PYTHONFAULTHANDLER", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)
