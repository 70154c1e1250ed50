"""Backend selection: ROCPY_BACKEND, the reason given, and errors (subprocesses:
the choice is made once per process)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, timeout=120)


def _has_gpu() -> bool:
    return _run("import rocpy; print(rocpy.backend().name)", ROCPY_BACKEND="auto").stdout.strip() != "stub"


def test_auto_explains_why_it_took_the_stub():
    if _has_gpu():
        pytest.skip("this machine has a GPU")
    out = _run("import rocpy; b = rocpy.backend(); print(b.name); print(b.reason)",
               ROCPY_BACKEND="auto")
    assert out.returncode == 0, out.stderr
    name, reason = out.stdout.splitlines()[:2]
    assert name == "stub"
    assert "no GPU found" in reason
    try:
        import rocpy._lib_amd  # noqa: F401
        assert "HSA_STATUS_ERROR_OUT_OF_RESOURCES" in reason
    except ImportError:
        assert "amd" in reason


def test_explicit_stub():
    out = _run("import rocpy; b = rocpy.backend(); print(b.name, b.is_stub)", ROCPY_BACKEND="stub")
    assert out.stdout.split() == ["stub", "True"]


def test_explicit_amd_without_gpu_names_the_cause():
    if _has_gpu():
        pytest.skip("this machine has a GPU")
    out = _run("import rocpy; rocpy.backend()", ROCPY_BACKEND="amd")
    assert out.returncode != 0
    assert "BackendUnavailableError" in out.stderr
    assert "ROCPY_BACKEND=amd cannot run here" in out.stderr


def test_unknown_backend_is_refused():
    out = _run("import rocpy; rocpy.backend()", ROCPY_BACKEND="cuda")
    assert out.returncode != 0 and "is not one of auto, amd, nvidia, stub" in out.stderr


def test_choice_never_changes_after_first_use():
    code = ("import os, rocpy; a = rocpy.backend(); os.environ['ROCPY_BACKEND'] = 'amd'; "
            "print(rocpy.backend() is a)")
    assert _run(code, ROCPY_BACKEND="stub").stdout.strip() == "True"


def test_raw_modules_are_public():
    code = ("import rocpy.hsa, rocpy.hip; print(rocpy.hsa.lib is rocpy.hip.lib, "
            "hasattr(rocpy.hip.lib, 'hipGetDeviceCount'), rocpy.hip.missing)")
    out = _run(code, ROCPY_BACKEND="stub")
    assert out.stdout.split() == ["True", "True", "()"]


def test_importing_rocpy_chooses_nothing_yet():
    code = "import sys, rocpy; print(any(m.startswith('rocpy._lib_') for m in sys.modules))"
    assert _run(code).stdout.strip() == "False"
