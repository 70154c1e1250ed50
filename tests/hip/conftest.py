"""Fixtures of the rocpy.hip unit tests (written for the stub; most run anywhere).

Every test ends with ``rocpy.debug.live_objects()`` back to empty (after the
devices' work completed); tests that need the stub's controls are marked
``stub_only``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rocpy
import rocpy.debug
from kernels.compile import compile_hip, find_hipcc
from live import hip_runtime_works

HERE = os.path.dirname(os.path.abspath(__file__))
SPIN_SOURCE = os.path.join(os.path.dirname(HERE), "conformance", "kernels", "spin_fill.hip")
BACKEND = rocpy.backend().name


@pytest.fixture(scope="session", autouse=True)
def _hip_runtime():
    if not hip_runtime_works():
        pytest.skip("this backend's HIP runtime has no streams/events (the stub's HIP half "
                    "is not built in)")


@pytest.fixture(autouse=True)
def no_leaks(_hip_runtime, rocpy_leak_check):
    """The plugin's leak check (rocpy.testing.LeakCheck) around every test."""
    yield


@pytest.fixture(scope="session")
def dev(_hip_runtime):
    from rocpy import hip
    return hip.Device(0)


@pytest.fixture(scope="session")
def kernel_file(kernel_cache, _hip_runtime):
    """``kernel_file("vadd")``: a compiled test kernel for Device(0) (hipcc; amd and stub)."""
    from rocpy import hip
    if BACKEND == "nvidia":
        pytest.skip("tests/hip compile AMD code objects; tests/conformance covers nvidia")
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed: no test kernels can be compiled")
    arch = hip.Device(0).arch

    def build(name: str) -> str:
        if name == "spin_fill":
            out = os.path.join(kernel_cache, f"spin_fill-{arch}.hsaco")
            if not os.path.exists(out):
                subprocess.run([find_hipcc(), "--genco", f"--offload-arch={arch}", SPIN_SOURCE,
                                "-o", out], check=True, capture_output=True,
                               env=dict(os.environ, HIP_PLATFORM="amd"))
            return out
        return compile_hip(name, kernel_cache, (arch,))
    return build



@pytest.fixture
def run_script(tmp_path):
    """Run Python ``code`` in a fresh process (e.g. with ROCPY_STUB_DEVICES=2); its stdout."""
    def run(code: str, **env: str) -> str:
        script = tmp_path / "script.py"
        script.write_text(textwrap.dedent(code))
        root = os.path.dirname(os.path.dirname(HERE))
        full = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""),
                    **env)
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=full, cwd=root, timeout=120)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout
    return run


@pytest.fixture
def allocations():
    """``allocations()``: how many allocations the stub tracks now (stub only)."""
    if BACKEND != "stub":
        pytest.skip("counts the stub's allocations")
    import rocpy.stub
    return rocpy.stub.live_allocations


@pytest.fixture
def rng():
    return np.random.default_rng(4321)
