"""Compile the test kernels with the installed HIP compiler, cached per session.

Never checked in as binaries: tests build them from tests/kernels/*.hip.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


def find_hipcc() -> str | None:
    """The hipcc to use: $HIPCC, hipcc on PATH, or one under $ROCM_PATH//opt/rocm."""
    candidates = [os.environ.get("HIPCC"), shutil.which("hipcc")]
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            candidates.append(os.path.join(root, "bin", "hipcc"))
    for c in candidates:
        if c and os.path.exists(c):
            return c
    return None


def compile_hip(name: str, out_dir: str, archs: tuple[str, ...] = ("gfx90a",)) -> str:
    """Build tests/kernels/NAME.hip into an offload bundle for ``archs``; return its path."""
    hipcc = find_hipcc()
    if hipcc is None:
        raise FileNotFoundError("hipcc not found (install Debian's hipcc, or set ROCM_PATH)")
    out = os.path.join(out_dir, f"{name}-{'-'.join(a.replace(':', '_') for a in archs)}.hsaco")
    if not os.path.exists(out):
        cmd = [hipcc, "--genco", *[f"--offload-arch={a}" for a in archs],
               os.path.join(HERE, f"{name}.hip"), "-o", out]
        env = dict(os.environ, HIP_PLATFORM="amd")
        subprocess.run(cmd, check=True, env=env, capture_output=True)
    return out


def find_nvcc() -> str | None:
    """nvcc from $CUDA_HOME, /usr/local/cuda or PATH."""
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return shutil.which("nvcc")


def compile_cuda(name: str, out_dir: str, arch: str = "sm_90") -> str:
    """Build tests/kernels/NAME.hip as CUDA into a cubin for the nvidia backend."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise FileNotFoundError("nvcc not found (set CUDA_HOME)")
    out = os.path.join(out_dir, f"{name}-{arch}.cubin")
    if not os.path.exists(out):
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-x", "cu",
               os.path.join(HERE, f"{name}.hip"), "-o", out]
        subprocess.run(cmd, check=True, capture_output=True)
    return out


def kernel_names() -> list[str]:
    return sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, "*.hip")))
