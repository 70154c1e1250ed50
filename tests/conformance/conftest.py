"""Fixtures of the conformance tests: behaviour every backend shares.

These tests run on the stub in CI and on real GPUs (``ROCPY_BACKEND=amd`` or
``nvidia``).  Markers say what a test relies on:

* ``hipamd``: behaviour of AMD's runtime (hipamd) that the stub reproduces;
  skipped on nvidia;
* ``cuda_only``: behaviour of the NVIDIA platform; skipped elsewhere;
* unmarked: platform independent.

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
from live import hip_runtime_works, settle

HERE = os.path.dirname(os.path.abspath(__file__))
BACKEND = rocpy.backend().name


def pytest_configure(config):
    config.addinivalue_line("markers",
                            "hipamd: hipamd behaviour (AMD and the stub); skipped on nvidia")
    config.addinivalue_line("markers", "cuda_only: behaviour of the NVIDIA platform only")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "hipamd" in item.keywords and BACKEND == "nvidia":
            item.add_marker(pytest.mark.skip(reason="hipamd behaviour; the backend is nvidia"))
        if "cuda_only" in item.keywords and BACKEND != "nvidia":
            item.add_marker(pytest.mark.skip(reason=f"NVIDIA behaviour; the backend is {BACKEND}"))


@pytest.fixture(scope="session", autouse=True)
def _hip_runtime():
    if not hip_runtime_works():
        pytest.skip("this backend's HIP runtime has no streams/events (the stub's HIP half "
                    "is not built in)")


def assert_no_leaks(timeout: float = 5.0) -> None:
    """Every rocpy object released (after the devices' work completed)."""
    live = settle(timeout)
    if live:
        pytest.fail(f"rocpy objects still alive after the test: {live}")


@pytest.fixture(autouse=True)
def no_leaks(_hip_runtime):
    rocpy.debug.collect()
    yield
    assert_no_leaks()


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
