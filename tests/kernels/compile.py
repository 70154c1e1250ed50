"""Compile the test kernels with the installed HIP compiler, cached per session.

Never checked in as binaries: tests build them from tests/kernels/*.hip.
"""
from __future__ import annotations

import functools
import glob
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


from rocpy._toolchain import find_hipcc, find_nvcc  # noqa: E402,F401  (the one lookup)


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


@functools.lru_cache(maxsize=None)
def hipcc_llvm_version() -> int | None:
    """The major version of the clang that hipcc drives (``clang version N``), if any."""
    hipcc = find_hipcc()
    if hipcc is None:
        return None
    try:
        out = subprocess.run([hipcc, "--version"], env=dict(os.environ, HIP_PLATFORM="amd"),
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"clang version (\d+)", out)
    return int(m.group(1)) if m else None


def _versioned(tool: str) -> list[str]:
    """Every ``TOOL-N`` on PATH and ``/usr/lib/llvm-N/bin/TOOL``, newest N first."""
    found: dict[str, int] = {}
    pattern = re.compile(re.escape(tool) + r"-(\d+)$")
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for path in glob.glob(os.path.join(glob.escape(d or "."), f"{glob.escape(tool)}-*")):
            m = pattern.search(path)
            if m and os.access(path, os.X_OK):
                found.setdefault(path, int(m.group(1)))
    unversioned = shutil.which(tool)
    if unversioned:
        found.setdefault(unversioned, -1)       # after every versioned name on PATH
    for path in glob.glob(f"/usr/lib/llvm-*/bin/{glob.escape(tool)}"):
        m = re.search(r"/llvm-(\d+)/", path)
        if m:
            found.setdefault(path, int(m.group(1)) - 1000)   # the last resort
    return sorted(found, key=found.__getitem__, reverse=True)


def find_llvm_tool(tool: str, version: int | None = None) -> str | None:
    """An LLVM tool (clang, ld.lld, llvm-readelf, clang-offload-bundler...) under
    whichever name it is installed: ``version``'s first (default: the LLVM hipcc
    uses; ``TOOL-V``, ``/usr/lib/llvm-V/bin/TOOL``), then ROCm's ($ROCM_PATH or
    /opt/rocm, llvm/bin), then the newest ``TOOL-N`` on PATH, ``TOOL``, and
    ``/usr/lib/llvm-N/bin/TOOL``.  The one helper every test uses: distributions
    name the tools by version (Debian: llvm-readelf-15, llvm-objcopy-17)."""
    version = hipcc_llvm_version() if version is None else version
    candidates = []
    if version:
        candidates += [shutil.which(f"{tool}-{version}"), f"/usr/lib/llvm-{version}/bin/{tool}"]
    for root in (os.environ.get("ROCM_PATH"), "/opt/rocm"):
        if root:
            candidates.append(os.path.join(root, "llvm", "bin", tool))
    candidates += _versioned(tool)
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def llvm_tool_env(version: int | None = None) -> dict[str, str]:
    """The environment to run LLVM tools in: PATH led by the folder where the
    unversioned names of ``version``'s tools live, for the tools that run
    another by its plain name (clang-offload-bundler runs ``llvm-objcopy``, of
    which Debian's PATH has only ``llvm-objcopy-N``)."""
    env = dict(os.environ, HIP_PLATFORM="amd")
    objcopy = find_llvm_tool("llvm-objcopy", version)
    if objcopy:
        env["PATH"] = os.path.dirname(os.path.realpath(objcopy)) + os.pathsep + env.get("PATH", "")
    return env


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


def declared_types(name: str) -> dict[str, tuple[str, ...]]:
    """The parameter types of the extern "C" kernels in tests/kernels/NAME.hip (or
    tests/conformance/kernels/NAME.hip), parsed from the source as `rocpy.hip.Program`
    does: what ``Module.load(..., param_types=)`` takes, so the suites pass Python
    numbers by value as a user with the source would.  {} for no such source."""
    from rocpy.codeobject import paramtypes
    for folder in (HERE, os.path.join(os.path.dirname(HERE), "conformance", "kernels")):
        path = os.path.join(folder, f"{name}.hip")
        if os.path.exists(path):
            with open(path) as f:
                return paramtypes.parse_declarations(f.read())
    return {}
