"""Where the compilers are: the one lookup of hipcc, nvcc and the host C++ compiler
(Program, rocpy.cpukern, the benchmarks, the selftest and the test kernels use it)."""
from __future__ import annotations

import os
import shutil

#: Seconds a hipcc/nvcc run may take before it is abandoned (a hung compiler).
COMPILE_TIMEOUT_S = 300


def find_hipcc() -> str | None:
    """``$HIPCC``, ``hipcc`` on PATH, or ``$ROCM_PATH``/``/opt/rocm``'s ``bin/hipcc``."""
    for c in (os.environ.get("HIPCC"), shutil.which("hipcc"),
              *(os.path.join(r, "bin", "hipcc") for r in (os.environ.get("ROCM_PATH"), "/opt/rocm")
                if r)):
        if c and os.path.exists(c):
            return c
    return None


def find_nvcc() -> str | None:
    """``$CUDA_HOME``/``$CUDA_PATH``/``/usr/local/cuda``'s ``bin/nvcc``, or ``nvcc`` on PATH."""
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.exists(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return shutil.which("nvcc")


def find_cxx() -> str | None:
    """The host C++ compiler of CPU builds: ``$ROCPY_CPUKERN_CXX``, ``$CXX``, else
    ``c++``/``g++``/``clang++``/``clang++-15`` on PATH (a full path, or None)."""
    for c in (os.environ.get("ROCPY_CPUKERN_CXX"), os.environ.get("CXX"), "c++", "g++",
              "clang++", "clang++-15"):
        found = shutil.which(c) if c else None
        if found:
            return found
    return None
