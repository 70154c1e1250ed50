"""A hipcc program (fat-binary registration, ``<<<>>>``, ``hipLaunchKernelGGL``) whose
kernels run on the drop-in libraries from the CPU build beside it: ``PROGRAM.cpukern``
(or ``$ROCPY_CPUKERN_BUILD``), written by ``rocpy cpukern build --cpu-only``.  A real
runtime never opens that file."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from .helpers import C_DIR, ROOT, run_on_stub

SOURCE = os.path.join(C_DIR, "cpu_fatbin.hip")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    from rocpy import _toolchain
    hipcc = _toolchain.find_hipcc()
    if hipcc is None or _toolchain.find_cxx() is None:
        pytest.skip("needs hipcc and a host C++ compiler")
    out = str(tmp_path_factory.mktemp("fatbin_cpu") / "cpu_fatbin")
    done = subprocess.run([hipcc, "--offload-arch=gfx90a", SOURCE, "-o", out],
                          capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"))
    assert done.returncode == 0, done.stderr
    return out


def _cpu_build(path: str) -> None:
    done = subprocess.run([sys.executable, "-m", "rocpy", "cpukern", "build", SOURCE, "--cpu-only",
                           "-o", path], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr


def _no_builtins() -> dict[str, str]:
    return {"ROCPY_STUB_BUILTINS": ""}


def test_kernels_run_from_the_cpu_build_beside_the_program(program):
    _cpu_build(program + ".cpukern")
    try:
        done = run_on_stub([program], devices=1, **_no_builtins())
    finally:
        os.remove(program + ".cpukern")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["ok"]


def test_rocpy_cpukern_build_names_another_file(program, tmp_path):
    elsewhere = str(tmp_path / "kernels.cpukern")
    _cpu_build(elsewhere)
    done = run_on_stub([program], devices=1, ROCPY_CPUKERN_BUILD=elsewhere, **_no_builtins())
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["ok"]


def test_without_a_cpu_build_the_kernel_has_no_way_to_run(program):
    assert not os.path.exists(program + ".cpukern")
    done = run_on_stub([program], devices=1, **_no_builtins())
    assert done.returncode == 1
    assert "hipGetLastError(): hipErrorLaunchFailure" in done.stdout
    assert "kernel '_Z9block_sumPKiPi' has no way to run on the stub" in done.stderr


def test_a_named_file_without_a_cpu_build_is_reported(program, tmp_path):
    junk = tmp_path / "junk.cpukern"
    junk.write_bytes(b"not a bundle")
    done = run_on_stub([program], devices=1, ROCPY_CPUKERN_BUILD=str(junk), **_no_builtins())
    assert done.returncode == 1
    assert f"rocpy stub: {junk} holds no CPU build" in done.stderr
    missing = tmp_path / "missing.cpukern"
    done = run_on_stub([program], devices=1, ROCPY_CPUKERN_BUILD=str(missing), **_no_builtins())
    assert done.returncode == 1
    assert f"cannot read $ROCPY_CPUKERN_BUILD {missing}" in done.stderr
