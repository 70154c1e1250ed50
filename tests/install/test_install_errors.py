"""``tools/install.sh``'s failures end with one line saying what is missing and how
to get it (fast: each stops before installing or building anything)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .conftest import PACKAGING, ROOT

pytestmark = PACKAGING

#: What install.sh runs before it would install anything (no gcc, g++, apt-get, sudo).
_TOOLS = ("bash", "dirname", "readlink", "grep", "sed", "head", "id", "dpkg-query", "sort", "tail")


def _bin_without_compilers(dest: Path, *, apt: bool) -> Path:
    dest.mkdir(mode=0o755)
    for tool in _TOOLS + (("apt-get", "apt-cache") if apt else ()):
        path = shutil.which(tool)
        if path is None:
            pytest.skip(f"{tool} is not installed")
        os.symlink(path, dest / tool)
    return dest


def _rocm_prefix() -> str:
    for prefix in ("/usr", "/opt/rocm"):
        if os.path.exists(f"{prefix}/include/hsa/hsa.h") and \
                os.path.exists(f"{prefix}/include/hip/hip_runtime_api.h"):
            return prefix
    pytest.skip("no installed ROCm headers (the ROCm checks would come first)")


def _install(env, *, cwd, user=()):
    script = Path(cwd) / "checkout" / "tools" / "install.sh"
    script.parent.mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "install.sh", script)
    os.chmod(cwd, 0o755)
    out = subprocess.run([*user, "bash", str(script)], env=env, cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    return out.returncode, out.stderr.strip().splitlines()[-1]


def test_no_apt_names_what_is_missing():
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = _bin_without_compilers(Path(tmp) / "bin", apt=False)
        env = {"PATH": str(bin_dir), "HOME": tmp, "PYTHON": sys.executable,
               "ROCM_PATH": _rocm_prefix()}
        status, last = _install(env, cwd=tmp)
    assert status == 1
    assert last == ("rocpy: install failed: missing a C compiler (gcc); a C++ compiler and "
                    "libstdc++ (g++, for hipcc): no apt-get here, install them with your package "
                    "manager")


def test_no_root_and_no_sudo_says_what_to_run_as_root():
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("needs root and setpriv to run the script as another user")
    with tempfile.TemporaryDirectory() as tmp:
        bin_dir = _bin_without_compilers(Path(tmp) / "bin", apt=True)
        user = (setpriv, "--reuid=65534", "--regid=65534", "--clear-groups")
        # a Python the other user can run (this one may live under /root)
        python = next((p for p in ("/usr/bin/python3", sys.executable) if subprocess.run(
            [*user, p, "-c", "import sys, ensurepip; sys.exit(sys.version_info < (3, 10))"],
            capture_output=True).returncode == 0), None)
        if python is None:
            pytest.skip("user 65534 can run no Python 3.10+ with venv here")
        env = {"PATH": str(bin_dir), "HOME": tmp, "PYTHON": python, "ROCM_PATH": _rocm_prefix()}
        status, last = _install(env, cwd=tmp, user=user)
    assert status == 1
    assert last == ("rocpy: install failed: missing Debian packages gcc g++ and no sudo: run as "
                    "root: apt-get update && apt-get install -y --no-install-recommends gcc g++")
