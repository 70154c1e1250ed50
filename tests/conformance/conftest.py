"""Fixtures of the conformance tests: behaviour every backend shares.

These tests run on the stub in CI and on real GPUs (``ROCPY_BACKEND=amd`` or
``nvidia``).  A test relying on one platform says so with the plugin's marker:
``backend("amd", "stub")`` for hipamd behaviour the stub reproduces,
``backend("nvidia")`` for the NVIDIA platform's; unmarked tests are platform
independent.

Kernels come from ``tests/kernels`` (``vadd``, ``fill``, ``empty``) and
``tests/conformance/kernels`` (``spin_fill``), compiled at test time with
hipcc for amd and the stub and with nvcc (``compile_cuda``) for nvidia.  On
the stub, ``spin_fill`` is emulated in Python by sleeping, which makes stream
ordering observable.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pytest

import rocpy
import rocpy.debug
from kernels.compile import compile_cuda, compile_hip, find_hipcc, find_nvcc
from live import hip_runtime_works

HERE = os.path.dirname(os.path.abspath(__file__))
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
def dev():
    from rocpy import hip
    return hip.Device(0)


def _compile_local(name: str, out_dir: str, arch: str) -> str:
    src = os.path.join(HERE, "kernels", f"{name}.hip")
    if BACKEND == "nvidia":
        nvcc = find_nvcc()
        if nvcc is None:
            pytest.skip("nvcc not found: no kernels for the nvidia backend")
        out = os.path.join(out_dir, f"{name}-{arch}.cubin")
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-x", "cu", src, "-o", out]
        env = None
    else:
        hipcc = find_hipcc()
        if hipcc is None:
            pytest.skip("hipcc is not installed: no test kernels can be compiled")
        out = os.path.join(out_dir, f"{name}-{arch}.hsaco")
        cmd = [hipcc, "--genco", f"--offload-arch={arch}", src, "-o", out]
        env = dict(os.environ, HIP_PLATFORM="amd")
    if not os.path.exists(out):
        subprocess.run(cmd, check=True, capture_output=True, env=env)
    return out


@pytest.fixture(scope="session")
def kernel_file(tmp_path_factory, _hip_runtime):
    """``kernel_file("vadd")``: the path of a compiled kernel file for this backend."""
    from rocpy import hip
    cache = str(tmp_path_factory.mktemp("conformance-kernels"))
    arch = hip.Device(0).arch

    def build(name: str) -> str:
        if os.path.exists(os.path.join(HERE, "kernels", f"{name}.hip")):
            return _compile_local(name, cache, arch)
        if BACKEND == "nvidia":
            if find_nvcc() is None:
                pytest.skip("nvcc not found: no kernels for the nvidia backend")
            return compile_cuda(name, cache, arch)
        if find_hipcc() is None:
            pytest.skip("hipcc is not installed: no test kernels can be compiled")
        return compile_hip(name, cache, (arch,))
    return build



@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def has_tool(name: str) -> bool:
    return shutil.which(name) is not None
