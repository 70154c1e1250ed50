"""hipcc programs with kernels on the drop-in libraries: fat-binary
registration, ``<<<>>>`` and ``hipLaunchKernelGGL`` launches of registered
host stubs, ``hipMemcpyToSymbol``/``hipGetSymbolAddress`` on a registered
``__device__`` variable, C emulations through ``rocpy_stub.h``, and the
failure of a kernel with no way to run."""
from __future__ import annotations

import os
import subprocess

import pytest

from .helpers import C_DIR, ROOT, run_on_stub


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    from tests.kernels.compile import find_hipcc
    hipcc = find_hipcc()
    if hipcc is None:
        pytest.skip("hipcc not installed")
    out = str(tmp_path_factory.mktemp("fatbin") / "kernels")
    done = subprocess.run([hipcc, "--offload-arch=gfx90a", f"-I{os.path.join(ROOT, 'rocpy', 'include')}",
                           os.path.join(C_DIR, "kernels.hip"), "-o", out],
                          capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"))
    assert done.returncode == 0, done.stderr
    return out


def test_kernels_launch_through_registration(program):
    done = run_on_stub([program], ROCPY_TEST_EMULATE="1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["bias 0.5 size 4", "launch hipSuccess", "name vadd", "ok"]


def test_a_users_vadd_is_never_rocpys(program):
    """The user's ``vadd`` computes a - b; rocpy's built-in computes a + b.  Even
    with the built-in enabled, the user's emulation runs (the program checks
    every element)."""
    done = run_on_stub([program], ROCPY_TEST_EMULATE="1", ROCPY_STUB_BUILTINS="empty,vadd,fill")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_kernel_with_no_way_to_run_fails_naming_it(program):
    env = {k: v for k, v in os.environ.items() if k != "ROCPY_STUB_BUILTINS"}
    done = subprocess.run([os.sys.executable, "-m", "rocpy", "stub", "run", "--", program],
                          capture_output=True, text=True, timeout=120,
                          env=dict(env, PYTHONPATH=ROOT, ROCPY_STUB_DEVICES="1"))
    assert done.returncode == 3, done.stdout + done.stderr
    assert "launch hipErrorLaunchFailure" in done.stdout
    assert "rocpy stub: kernel 'vadd' has no way to run on the stub" in done.stderr
    assert "rocpy.stub.register_kernel('vadd', fn)" in done.stderr
    assert "rocpy_stub_register_emulation" in done.stderr
    assert done.stderr.count("has no way to run") == 1


def test_a_bundle_without_the_devices_target(program):
    """The program carries gfx90a only: on a gfx1030 stub device its first
    launch gets hipErrorNoBinaryForGpu (ROCm/clr; 5.2 aborted at start)."""
    done = run_on_stub([program], devices=1, ROCPY_TEST_EMULATE="1", ROCPY_STUB_ARCH="gfx1030")
    assert done.returncode == 1
    assert "hipErrorNoBinaryForGpu" in done.stderr
