"""A C++ program using hipRTC's C API on the drop-in libraries: the stub's
hiprtcCompileProgram runs rocpy's compiler driver, so the program's run-time
compiled template kernel runs on the CPU (no Python in the program)."""
from __future__ import annotations

import os

import pytest

from .helpers import build, run_on_stub


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    from rocpy import _toolchain
    if _toolchain.find_hipcc() is None or _toolchain.find_cxx() is None:
        pytest.skip("the stub's hiprtc compiles with hipcc and a host C++ compiler")
    return build("rtc_probe.cpp", str(tmp_path_factory.mktemp("rtc") / "rtc_probe"), "g++")


def test_a_cpp_program_compiles_and_runs_a_kernel_with_hiprtc(program, monkeypatch, tmp_path):
    # the user's environment names no interpreter, and the python3 on PATH cannot run
    # rocpy (a fresh system's Python beside a venv's rocpy): `rocpy stub run` names its own
    monkeypatch.delenv("ROCPY_PYTHON", raising=False)
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'not the python with rocpy' >&2\nexit 3\n")
    fake.chmod(0o755)
    done = run_on_stub([program], devices=1, timeout=300,
                       PATH=f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["lowered _Z4axpyIfEvT_PKS0_PS0_i", "ok"]


def test_a_missing_driver_is_a_compile_error_with_a_log(program):
    done = run_on_stub([program], devices=1, ROCPY_PYTHON=os.path.join(os.sep, "nonexistent", "py"))
    assert done.returncode == 1
    assert "compile: HIPRTC_ERROR_COMPILATION" in done.stdout
    assert "cannot run /nonexistent/py (rocpy's compiler driver)" in done.stdout
