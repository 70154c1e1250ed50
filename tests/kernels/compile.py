"""Compile the test kernels with the installed HIP compiler, cached per session.

Never checked in as binaries: tests build them from tests/kernels/*.hip.
"""
from __future__ import annotations

import glob
import os
import re
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


def compile_hip(name: str, out_dir: str, archs: tuple[str, ...] = ("gfx90a",),
                flags: tuple[str, ...] = (), source: str | None = None) -> str:
    """Build tests/kernels/NAME.hip into an offload bundle for ``archs``; return its path.

    ``flags`` go to hipcc as they are (e.g. ``("-mcode-object-version=5",)``);
    ``source``, if given, is the path of a .hip file to build instead of
    tests/kernels/NAME.hip (for sources a test generates).
    """
    hipcc = find_hipcc()
    if hipcc is None:
        raise FileNotFoundError("hipcc not found (install Debian's hipcc, or set ROCM_PATH)")
    tag = "-".join(a.replace(":", "_") for a in archs)
    if flags:
        tag += "-" + "-".join(f.lstrip("-").replace("=", "").replace("/", "_") for f in flags)
    out = os.path.join(out_dir, f"{name}-{tag}.hsaco")
    if not os.path.exists(out):
        cmd = [hipcc, "--genco", *[f"--offload-arch={a}" for a in archs], *flags,
               source or os.path.join(HERE, f"{name}.hip"), "-o", out]
        env = dict(os.environ, HIP_PLATFORM="amd")
        subprocess.run(cmd, check=True, env=env, capture_output=True)
    return out


def find_llvm_tool(tool: str) -> str | None:
    """An LLVM tool (clang, ld.lld, llvm-readelf...), the newest found: ROCm's
    ($ROCM_PATH or /opt/rocm, llvm/bin), then TOOL-22 ... TOOL-14, then TOOL
    and /usr/lib/llvm-N/bin/TOOL."""
    candidates = []
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            candidates.append(os.path.join(root, "llvm", "bin", tool))
    candidates += [shutil.which(f"{tool}-{v}") for v in range(22, 13, -1)]
    candidates.append(shutil.which(tool))

    def version(path: str) -> int:
        m = re.search(r"/llvm-(\d+)/", path)
        return int(m.group(1)) if m else 0
    candidates += sorted(glob.glob(f"/usr/lib/llvm-*/bin/{tool}"), key=version, reverse=True)
    for c in candidates:
        if c and os.path.exists(c):
            return c
    return None


def compile_cl(name: str, out_dir: str, target: str = "gfx90a") -> str:
    """Build tests/kernels/NAME.cl into a bare AMDGPU ELF (no bundle) for
    ``target`` (a target id such as ``gfx90a:sramecc-:xnack+``) with clang
    and ld.lld, without device libraries; return its path."""
    clang, lld = find_llvm_tool("clang"), find_llvm_tool("ld.lld")
    if clang is None or lld is None:
        raise FileNotFoundError("clang and ld.lld are needed for bare ELF kernels")
    out = os.path.join(out_dir, f"{name}-{target.replace(':', '_')}.so")
    if not os.path.exists(out):
        obj = out[:-3] + ".o"
        subprocess.run([clang, "-target", "amdgcn-amd-amdhsa", f"-mcpu={target}",
                        "-x", "cl", "-cl-std=CL2.0", "-nogpulib", "-O2", "-c",
                        os.path.join(HERE, f"{name}.cl"), "-o", obj],
                       check=True, capture_output=True)
        subprocess.run([lld, "-shared", obj, "-o", out], check=True, capture_output=True)
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
