"""Programs nobody wrote for rocpy, on the drop-in libraries: C and C++ programs
against the real headers (linked to the installed ROCm libraries, loaded from
rocpy's stub at run time), a hipcc-built one, Debian's ``rocminfo``."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from .helpers import build, libdir, run_on_stub


def check_ran_on_stub(done: subprocess.CompletedProcess, lib: str) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "ok"
    assert f"lib {os.path.join(libdir(), lib)}" in lines


def test_hsa_program_in_c(tmp_path):
    prog = build("hsa_probe.c", str(tmp_path / "hsa_probe"), "gcc", ("-std=c11",))
    done = run_on_stub([prog])
    check_ran_on_stub(done, "libhsa-runtime64.so.1")
    assert done.stdout.startswith("gpus 2 first gfx90a")


def test_hip_program_in_cpp(tmp_path):
    prog = build("hip_probe.cpp", str(tmp_path / "hip_probe"), "g++")
    done = run_on_stub([prog])
    check_ran_on_stub(done, next(os.path.basename(p) for p in os.listdir(libdir())
                                 if p.startswith("libamdhip64.so.")))
    assert done.stdout.startswith("devices 2 first ")


def test_programs_see_the_stub_devices_asked_for(tmp_path):
    prog = build("hip_probe.cpp", str(tmp_path / "hip_probe"), "g++")
    done = run_on_stub([prog], devices=1)
    assert done.returncode == 1
    assert "need two devices" in done.stderr


def test_hipcc_built_host_program(tmp_path):
    from tests.kernels.compile import find_hipcc
    hipcc = find_hipcc()
    if hipcc is None:
        pytest.skip("hipcc not installed")
    prog = build("hip_probe.cpp", str(tmp_path / "hip_probe_hipcc"), hipcc)
    done = run_on_stub([prog])
    check_ran_on_stub(done, next(p for p in os.listdir(libdir()) if p.startswith("libamdhip64.so.")))


ROCMINFO_NS = r"""
set -e
d=$1; shift
mkdir -p "$d/olddev" "$d/bin"
printf '#!/bin/sh\necho "amdgpu 16384 0"\n' > "$d/bin/lsmod"; chmod +x "$d/bin/lsmod"
mount --bind /dev "$d/olddev"
mount -t tmpfs tmpfs /dev
for f in null zero full random urandom tty; do touch /dev/$f; mount --bind "$d/olddev/$f" /dev/$f; done
ln -s /proc/self/fd /dev/fd
touch /dev/kfd
PATH=$d/bin:$PATH exec "$@"
"""


def test_debian_rocminfo(tmp_path):
    """rocminfo checks for the amdgpu kernel module (``lsmod | grep amdgpu``) and
    a read-write ``/dev/kfd`` before calling HSA: a private mount namespace
    gives it both (an empty /dev/kfd, an lsmod that names amdgpu), then it runs
    on the drop-in HSA library."""
    rocminfo = shutil.which("rocminfo")
    if rocminfo is None:
        pytest.skip("rocminfo not installed")
    if shutil.which("unshare") is None or \
            subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no private mount namespace here (unshare -m): rocminfo's /dev/kfd check cannot be met")
    script = tmp_path / "ns.sh"
    script.write_text(ROCMINFO_NS)
    done = run_on_stub(["unshare", "-m", "sh", str(script), str(tmp_path), rocminfo])
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "ROCk module is loaded" in out
    assert out.count("Device Type:             GPU") == 2
    assert "gfx90a" in out
    assert "*** Done ***" in out
