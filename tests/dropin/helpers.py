"""What the drop-in tests share: building a C/C++ program and running it on
the drop-in libraries through ``rocpy stub run``."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
C_DIR = os.path.join(HERE, "c")


def libdir() -> str:
    from rocpy.stub.dropin import DropInMissing, libdir as find
    try:
        return find()
    except DropInMissing as exc:
        pytest.fail(str(exc))


def include_dir() -> str:
    from rocpy._build.locate import find_rocm
    return find_rocm().include_dir


def real_lib_dir() -> str:
    """Where the installed (real) ROCm libraries are: programs link against those."""
    from rocpy._build.locate import find_rocm
    libs = find_rocm().libraries
    if "hip" not in libs:
        pytest.skip("no installed libamdhip64 to link programs against")
    return os.path.dirname(libs["hip"])


def build(source: str, out: str, compiler: str = "gcc", extra: tuple[str, ...] = ()) -> str:
    """Build tests/dropin/c/SOURCE into ``out`` against the installed headers and libraries."""
    if shutil.which(compiler) is None and not os.path.exists(compiler):
        pytest.skip(f"{compiler} not installed")
    libs = ["-lhsa-runtime64"] if source.endswith(".c") else ["-lamdhip64"]
    cmd = [compiler, "-D__HIP_PLATFORM_AMD__", f"-I{include_dir()}", os.path.join(C_DIR, source),
           "-o", out, f"-L{real_lib_dir()}", *libs, "-ldl", *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, HIP_PLATFORM="amd"))
    assert done.returncode == 0, done.stderr
    return out


def run_on_stub(cmd: list[str], devices: int = 2, timeout: float = 120,
                **env: str) -> subprocess.CompletedProcess:
    """``rocpy stub run -- CMD`` with ``devices`` stub devices."""
    full_env = dict(os.environ, ROCPY_STUB_DEVICES=str(devices), PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, "-m", "rocpy", "stub", "run", "--", *cmd],
                          capture_output=True, text=True, env=full_env, timeout=timeout)
