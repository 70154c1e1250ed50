"""Find the installed ROCm headers and libraries (build time only).

Search order: ``$ROCM_PATH``, ``/opt/rocm``, then the system prefixes where
distributions install ROCm (Debian's ``libhsa-runtime-dev`` and
``libamdhip64-dev`` put the headers in ``/usr/include/{hsa,hip}`` and the
libraries in the multiarch directory).
"""
from __future__ import annotations

import glob
import os
import sysconfig
from dataclasses import dataclass, field


class RocmNotFound(RuntimeError):
    """The ROCm headers or libraries needed for a build are missing."""


INSTALL_HINT = (
    "Install the ROCm development headers: on Debian/Ubuntu "
    "`apt install libhsa-runtime-dev libamdhip64-dev`, or point ROCM_PATH at a "
    "ROCm installation (a directory with include/hsa, include/hip and lib/)."
)


@dataclass
class RocmInstall:
    """Where one ROCm installation keeps its headers and libraries."""

    include_dir: str                      # holds hsa/ and hip/
    lib_dirs: list[str] = field(default_factory=list)
    libraries: dict[str, str] = field(default_factory=dict)  # 'hsa' -> path

    @property
    def hsa_header_dir(self) -> str:
        return os.path.join(self.include_dir, "hsa")

    @property
    def hip_header_dir(self) -> str:
        return os.path.join(self.include_dir, "hip")


_LIBRARY_NAMES = {
    "hsa": "libhsa-runtime64.so",
    "hip": "libamdhip64.so",
    "hiprtc": "libhiprtc.so",
}


def _prefixes() -> list[str]:
    prefixes = []
    for var in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH"):
        if os.environ.get(var):
            prefixes.append(os.environ[var])
    prefixes.append("/opt/rocm")
    prefixes.extend(sorted(glob.glob("/opt/rocm-*"), reverse=True))
    prefixes.append("/usr")
    prefixes.append("/usr/local")
    return prefixes


def _lib_dirs(prefix: str) -> list[str]:
    multiarch = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    candidates = [os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"),
                  os.path.join(prefix, "lib", multiarch)]
    return [d for d in candidates if os.path.isdir(d)]


def _find_library(dirs: list[str], soname: str) -> str | None:
    for d in dirs:
        exact = os.path.join(d, soname)
        if os.path.exists(exact):
            return exact
        versioned = sorted(glob.glob(exact + ".*"))
        if versioned:
            return versioned[0]
    return None


def find_rocm(require_headers: tuple[str, ...] = ("hsa/hsa.h", "hip/hip_runtime_api.h"),
              include_dir: str | None = None) -> RocmInstall:
    """Return the first installation whose include dir has every required header.

    ``include_dir`` forces one include directory (used by the tests that run the
    pipeline over another ROCm version's headers).
    """
    candidates: list[tuple[str, list[str]]]
    if include_dir is not None:
        candidates = [(include_dir, [])]
    else:
        candidates = [(os.path.join(p, "include"), _lib_dirs(p)) for p in _prefixes()]
    tried = []
    for inc, libdirs in candidates:
        tried.append(inc)
        if all(os.path.exists(os.path.join(inc, h)) for h in require_headers):
            libs = {}
            for key, soname in _LIBRARY_NAMES.items():
                path = _find_library(libdirs, soname)
                if path:
                    libs[key] = path
            return RocmInstall(include_dir=inc, lib_dirs=libdirs, libraries=libs)
    raise RocmNotFound(
        f"ROCm headers {', '.join(require_headers)} not found (looked in "
        f"{', '.join(tried)}). {INSTALL_HINT}")


@dataclass
class CudaInstall:
    """The CUDA runtime headers and library HIP's NVIDIA platform builds on."""

    include_dirs: list[str]
    lib_dir: str | None


def find_cuda() -> CudaInstall:
    """CUDA headers for the nvidia backend.

    ``$ROCPY_CUDA_RUNTIME`` (the nvidia-cuda-runtime-cu11 wheel's folder, with
    include/ and lib/) first, then ``$CUDA_HOME``/``$CUDA_PATH`` and
    /usr/local/cuda.  ``$ROCPY_CUDA_EXTRA_INCLUDE`` adds a folder (crt/ and
    cuda_profiler_api.h from the nvcc and profiler wheels).  HIP 5.x's NVIDIA
    headers need CUDA 11 (12 removed texture references they use).
    """
    roots = [os.environ.get(v) for v in ("ROCPY_CUDA_RUNTIME", "CUDA_HOME", "CUDA_PATH")]
    roots.append("/usr/local/cuda")
    for root in filter(None, roots):
        inc = os.path.join(root, "include")
        if os.path.exists(os.path.join(inc, "cuda_runtime_api.h")):
            dirs = [inc]
            if os.environ.get("ROCPY_CUDA_EXTRA_INCLUDE"):
                dirs.append(os.environ["ROCPY_CUDA_EXTRA_INCLUDE"])
            lib = next((d for d in (os.path.join(root, "lib"), os.path.join(root, "lib64"))
                        if os.path.isdir(d)), None)
            return CudaInstall(dirs, lib)
    raise RocmNotFound("CUDA runtime headers not found: set ROCPY_CUDA_RUNTIME to the "
                       "nvidia-cuda-runtime-cu11 wheel's folder, or CUDA_HOME")
