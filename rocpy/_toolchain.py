"""Where the compilers are: the one lookup of hipcc and nvcc (Program, the
benchmarks, the selftest and the test kernels use it)."""
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
