"""``tools/install.sh`` the way the Dockerfile runs it: ROCM_PATH at a ROCm tree,
ROCPY_BACKEND=amd, no GPU.

The ROCm tree is assembled in tmp from the installed Debian headers and
libraries (links: include/{hsa,hip}, lib/lib*.so), as /opt/rocm lays them out.
The script runs in a copy of the checkout with a virtual environment active
that sees this environment's packages, so pip downloads no dependency; it must
succeed without selecting a backend (a Docker build has no /dev/kfd), build the
amd module against that tree, and the module must then report the runtime's
own statuses.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

import rocpy

from .conftest import PACKAGING, ROOT, copy_source, make_venv, run

pytestmark = PACKAGING

_LIBS = ("libhsa-runtime64.so", "libamdhip64.so")


def _installed_rocm() -> tuple[str, dict[str, str]]:
    """The installed headers' folder and the libraries' paths, or skip."""
    from rocpy._build.locate import RocmNotFound, find_rocm
    try:
        rocm = find_rocm()
    except RocmNotFound as exc:
        pytest.skip(f"no installed ROCm to assemble a tree from: {exc}")
    libs = {}
    for name in _LIBS:
        found = [p for d in rocm.lib_dirs for p in sorted(glob.glob(os.path.join(d, name + "*")))]
        if not found:
            pytest.skip(f"{name} is not installed (libhsa-runtime-dev, libamdhip64-dev)")
        libs.update({os.path.basename(p): p for p in found})
    return rocm.include_dir, libs


def _rocm_tree(dest: Path) -> Path:
    include, libs = _installed_rocm()
    (dest / "include").mkdir(parents=True)
    (dest / "lib").mkdir()
    for sub in ("hsa", "hip"):
        os.symlink(os.path.join(include, sub), dest / "include" / sub)
    for name, path in libs.items():
        os.symlink(os.path.realpath(path), dest / "lib" / name)
    return dest


def _apt_needed() -> list[str]:
    """What install.sh would have to install with apt-get on this machine."""
    need = [tool for tool in ("gcc", "g++") if shutil.which(tool) is None]
    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        need.append("python3-dev")
    return need


def test_install_script_as_the_dockerfile_runs_it(tmp_path):
    need = _apt_needed()
    if need and os.geteuid() != 0 and shutil.which("sudo") is None:
        pytest.skip(f"install.sh would need apt-get for {', '.join(need)}, and this user has "
                    "neither root nor sudo")
    rocm = _rocm_tree(tmp_path / "rocm")
    src = copy_source(tmp_path / "src")
    venv = tmp_path / "venv"
    make_venv(venv, inherit=True)
    env = dict(os.environ, ROCM_PATH=str(rocm), ROCPY_BACKEND="amd", VIRTUAL_ENV=str(venv),
               PYTHON=str(venv / "bin" / "python"),
               PATH=f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    for var in ("PYTHONPATH", "ROCM_HOME", "HIP_PATH"):
        env.pop(var, None)

    out = run(["bash", src / "tools" / "install.sh"], cwd=tmp_path, env=env)
    lines = out.stdout.strip().splitlines()
    assert f"rocpy: using the ROCm in {rocm}" in lines
    assert lines[-1].startswith(f"rocpy {rocpy.__version__} built in place (amd, stub backend "
                                "modules)"), lines[-1]
    assert (src / ".venv").resolve() == venv.resolve()
    # no backend was chosen during the install: nothing probed the runtime
    assert "hsa_init" not in out.stdout + out.stderr

    check = r"""
import json, rocpy, rocpy._lib_amd as m
info = json.loads(m.ffi.string(m.lib.rocpy_build_info()).decode())
b = rocpy.backend()
try:
    rocpy.Device(0)
    hip = None
except rocpy.NoDeviceError as exc:
    hip = exc.name
try:
    rocpy.hsa.Runtime()
    hsa = None
except rocpy.HsaError as exc:
    hsa = exc.name
print(json.dumps({"file": rocpy.__file__, "include": info["include_dir"],
                  "libraries": sorted(info["libraries"].values()), "backend": b.name,
                  "hip": hip, "hsa": hsa}))
"""
    got = json.loads(run([src / ".venv" / "bin" / "python", "-c", check], cwd=tmp_path,
                         env=env).stdout.strip().splitlines()[-1])
    assert got["file"] == str(src / "rocpy" / "__init__.py")
    assert got["include"] == str(rocm / "include")
    assert got["libraries"] and all(p.startswith(str(rocm / "lib")) for p in got["libraries"])
    assert got["backend"] == "amd"
    if got["hip"] is None:
        pytest.skip("this machine has a GPU: the statuses of a GPU-less runtime cannot be seen")
    assert got["hip"] == "hipErrorNoDevice"
    assert got["hsa"] == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"


def test_install_script_names_a_rocm_path_without_headers(tmp_path):
    env = dict(os.environ, ROCM_PATH=str(tmp_path / "empty"))
    out = subprocess.run(["bash", str(ROOT / "tools" / "install.sh")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines()[-1] == (
        f"rocpy: install failed: ROCM_PATH={tmp_path / 'empty'} has no include/hsa/hsa.h and "
        "include/hip/hip_runtime_api.h: point ROCM_PATH at a ROCm installation, or unset it to "
        "use Debian's ROCm packages")
