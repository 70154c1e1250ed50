"""The header pipeline: ROCm headers in, one platform's cdef and facts out."""
from __future__ import annotations

from dataclasses import dataclass, field

from . import constants, declarations, preprocess
import os

from .locate import CudaInstall, RocmInstall, find_cuda, find_rocm

HSA_HEADERS = ["hsa/hsa.h", "hsa/hsa_ext_amd.h", "hsa/amd_hsa_signal.h",
               "hsa/amd_hsa_queue.h", "hsa/amd_hsa_kernel_code.h"]
HIP_HEADERS = ["hip/hip_runtime_api.h", "hip/hiprtc.h"]


@dataclass
class Platform:
    name: str
    defines: list[str]
    headers: list[str]
    # included first, from the platform's own SDK
    sdk_headers: list[str] = field(default_factory=list)

    @property
    def all_headers(self) -> list[str]:
        return self.sdk_headers + self.headers


PLATFORMS = {
    "amd": Platform("amd", ["__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__"],
                    HSA_HEADERS + HIP_HEADERS),
    # HIP only: HSA is AMD's; hiprtc maps onto NVRTC, whose headers the CUDA
    # runtime wheel does not carry
    # hip/library_types.h includes "library_types.h", which resolves to
    # itself, so CUDA's must come first
    "nvidia": Platform("nvidia", ["__HIP_PLATFORM_NVIDIA__", "__HIP_PLATFORM_NVCC__"],
                       ["hip/hip_runtime_api.h"], sdk_headers=["library_types.h"]),
}


@dataclass
class Api:
    """What one platform's headers declare, ready for ``ffi.cdef``."""

    platform: Platform
    install: RocmInstall
    include_dirs: list[str]
    decls: declarations.Declarations
    consts: constants.Constants
    macros: dict[str, str] = field(default_factory=dict)
    cuda: CudaInstall | None = None

    @property
    def functions(self) -> dict[str, declarations.Function]:
        return self.decls.functions

    def library_functions(self) -> dict[str, declarations.Function]:
        """The functions a runtime library must provide (not header inlines)."""
        return {n: f for n, f in self.functions.items() if not f.inline}

    def cdef(self) -> str:
        """The cdef text: types, prototypes, aliases and constants."""
        parts = [self.decls.cdef]
        for alias, target in sorted(self.consts.type_aliases.items()):
            parts.append(f"typedef {target} {alias};")
        for f in self.functions.values():
            parts.append(f.prototype() + ";")
        for alias, target in sorted(self.consts.function_aliases.items()):
            parts.append(self.functions[target].prototype(alias) + ";")
        parts += [f"#define {n} ..." for n in self.consts.integers]
        parts += [f"static void *const {n};" for n in self.consts.pointers]
        return "\n".join(parts)

    def include_lines(self) -> str:
        return preprocess.wrapper_source(self.platform.all_headers)


def describe(platform: str = "amd", include_dir: str | None = None) -> Api:
    """Run the pipeline for ``platform`` over the installed (or given) headers.

    ``$ROCPY_ROCM_INCLUDE`` names the HIP/HSA include dir when no ROCm is
    installed (the nvidia backend on a machine with only unpacked headers).
    """
    plat = PLATFORMS[platform]
    include_dir = include_dir or os.environ.get("ROCPY_ROCM_INCLUDE")
    install = find_rocm(tuple(plat.headers), include_dir=include_dir)
    include_dirs = [install.include_dir]
    cuda = find_cuda() if platform == "nvidia" else None
    extra = cuda.include_dirs if cuda else []
    pre = preprocess.preprocess(plat.all_headers, include_dirs, plat.defines, extra)
    decls = declarations.parse(pre.text, pre.types_only_lines)
    taken = (set(decls.functions) | decls.typedefs | decls.enum_constants
             | decls.structs | decls.enums)
    consts = constants.classify(
        pre.macros, plat.all_headers, include_dirs + extra, plat.defines,
        known_functions=set(decls.functions), known_types=decls.typedefs, taken=taken)
    return Api(plat, install, include_dirs + extra, decls, consts, pre.macros, cuda)
