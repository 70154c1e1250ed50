"""cffi builders for the backend modules ``rocpy._lib_amd`` and ``rocpy._lib_stub``.

Both compile the same declarations in API mode, so the C compiler checks every
prototype and fills every layout.  They differ in what provides the symbols:
the installed ROCm libraries, or rocpy's stub runtime.
"""
from __future__ import annotations

import glob
import json
import os

from cffi import FFI

from . import dropin
from .api import Api, describe
from .exports import exported_functions
from .failure import definition
from .features import write_feature_header

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NATIVE = os.path.join(ROOT, "_native")
FAST_DIR = os.path.join(NATIVE, "fast")
FAST_HSA_DIR = os.path.join(FAST_DIR, "hsa")     # fast paths that need HSA (amd, stub)
STUB_DIR = os.path.join(NATIVE, "stub")
# what the build writes: stub_defaults_{hsa,hip,hiprtc}.c, rocpy_features.h, the version script
GENERATED_DIR = os.path.join(os.path.dirname(ROOT), "build", "rocpy-generated")


def _generated_dir(api: Api) -> str:
    """The generated folder, with ``rocpy_features.h`` for ``api``'s headers in it."""
    os.makedirs(GENERATED_DIR, exist_ok=True)
    write_feature_header(api, GENERATED_DIR)
    return GENERATED_DIR


def _extra_cdefs(directory: str) -> str:
    return "\n".join(open(p).read() for p in sorted(glob.glob(os.path.join(directory, "*.cdef"))))


def _extra_includes(directory: str) -> str:
    """``#include`` the header that goes with each ``*.cdef`` of ``directory``."""
    lines = []
    for cdef in sorted(glob.glob(os.path.join(directory, "*.cdef"))):
        header = cdef[:-len(".cdef")] + ".h"
        if os.path.exists(header):
            lines.append(f'#include "{os.path.basename(header)}"\n')
    return "".join(lines)


def _sources(directory: str) -> list[str]:
    # setuptools refuses absolute paths: relative to the project root, where
    # setup.py runs
    project = os.path.dirname(ROOT)
    return [os.path.relpath(p, project) for p in sorted(glob.glob(os.path.join(directory, "*.c")))]


def _build_info(api: Api, backend: str, missing: list[str]) -> str:
    info = {
        "backend": backend,
        "platform": api.platform.name,
        "include_dir": api.install.include_dir,
        "libraries": api.install.libraries,
        "missing": missing,
        "partial_structs": sorted(api.decls.partial_structs),
        "function_aliases": api.consts.function_aliases,
        "type_aliases": api.consts.type_aliases,
    }
    text = json.dumps(info).replace("\\", "\\\\").replace('"', '\\"')
    return f'const char *rocpy_build_info(void) {{ return "{text}"; }}\n'


_BUILD_INFO_CDEF = "const char *rocpy_build_info(void);\n"


def _new_ffi(api: Api, extra_cdef: str) -> FFI:
    ffi = FFI()
    ffi.cdef(api.cdef() + "\n" + _BUILD_INFO_CDEF + extra_cdef)
    return ffi


def _missing_exports(api: Api) -> list[str]:
    exported: set[str] = set()
    for key in ("hsa", "hip", "hiprtc"):
        if key in api.install.libraries:
            exported |= exported_functions(api.install.libraries[key])
    return sorted(n for n in api.library_functions() if n not in exported)


def amd_ffi(api: Api | None = None) -> FFI:
    """The builder of ``rocpy._lib_amd``, linked to the installed ROCm libraries."""
    api = api or describe("amd")
    libs = api.install.libraries
    if "hsa" not in libs or "hip" not in libs:
        raise RuntimeError("libhsa-runtime64 and libamdhip64 are needed for the amd backend")
    missing = _missing_exports(api)
    # a placeholder for what the header declares and the library lacks, so the
    # module imports; the macro makes cffi's generated calls use it
    placeholders = "".join(
        definition(api.functions[n], f"rocpy_missing_{n}", prefix="static ") +
        f"\n#define {n} rocpy_missing_{n}\n" for n in missing)
    gen_dir = _generated_dir(api)
    ffi = _new_ffi(api, _extra_cdefs(FAST_DIR) + "\n" + _extra_cdefs(FAST_HSA_DIR))
    preamble = ("#include <string.h>\n" + api.include_lines() + _extra_includes(FAST_DIR) +
                _extra_includes(FAST_HSA_DIR) + placeholders + _build_info(api, "amd", missing))
    lib_names = [os.path.basename(libs[k]).split(".so")[0][3:] for k in ("hsa", "hip")]
    if "hiprtc" in libs:
        lib_names.append(os.path.basename(libs["hiprtc"]).split(".so")[0][3:])
    lib_dirs = sorted({os.path.dirname(p) for p in libs.values()})
    ffi.set_source(
        "rocpy._lib_amd", preamble,
        define_macros=[(d, None) for d in api.platform.defines],
        include_dirs=api.include_dirs + [FAST_DIR, FAST_HSA_DIR, gen_dir],
        libraries=lib_names, library_dirs=lib_dirs, runtime_library_dirs=lib_dirs,
        sources=_sources(FAST_DIR) + _sources(FAST_HSA_DIR),
        extra_compile_args=["-pthread", "-Wno-deprecated-declarations"],
        extra_link_args=["-pthread"])
    return ffi


def stub_defaults_source(api: Api, group: str | None = None) -> str:
    """C source defining every library function (of ``group``: hsa, hip, hiprtc) as a
    weak generic failure.

    The stub's hand-written functions are strong definitions and replace these
    at link time, so every declared function exists from the start.  One file
    per group, so each drop-in library (``dropin.py``) holds its own.
    """
    lines = ["#include <string.h>", api.include_lines()]
    names = []
    for name, func in api.library_functions().items():
        if group is None or dropin.function_group(name) == group:
            lines.append(definition(func, name, prefix="__attribute__((weak)) "))
            names.append(name)
    if group == "hip":
        lines.append(proc_table_source(names))
    return "\n".join(lines) + "\n"


def proc_table_source(names: list[str]) -> str:
    """``rocpy_stub_hip_procs``: every HIP function by name (the strong
    definition where the stub has one), NULL-terminated, for hipGetProcAddress
    (hip_proc_address.c), as hipamd looks a name up in its own library."""
    rows = "".join(f'    {{"{n}", (void *)&{n}}},\n' for n in sorted(names))
    return ("struct rocpy_stub_proc { const char *name; void *fn; };\n"
            "const struct rocpy_stub_proc rocpy_stub_hip_procs[] = {\n"
            f"{rows}    {{0, 0}}\n}};\n")


def stub_ffi(api: Api | None = None) -> FFI:
    """The builder of ``rocpy._lib_stub``, linked to rocpy's own C runtime."""
    api = api or describe("amd")
    gen_dir = _generated_dir(api)
    defaults = []
    for group in ("hsa", "hip", "hiprtc"):
        defaults.append(os.path.join(gen_dir, f"stub_defaults_{group}.c"))
        with open(defaults[-1], "w") as f:
            f.write(stub_defaults_source(api, group))
    # the three in one file, for C builds outside setup.py (benchmarks/c, tests/raw/hip)
    with open(os.path.join(gen_dir, "stub_defaults.c"), "w") as f:
        f.write("".join(f'#include "{os.path.basename(d)}"\n' for d in defaults))
    version_script = os.path.join(gen_dir, "stub_exports.map")
    with open(version_script, "w") as f:
        f.write("{ global: PyInit__lib_stub; local: *; };\n")
    ffi = _new_ffi(api, "\n".join(_extra_cdefs(d) for d in (FAST_DIR, FAST_HSA_DIR, STUB_DIR)))
    preamble = ("#include <string.h>\n" + api.include_lines() + _extra_includes(FAST_DIR) +
                _extra_includes(FAST_HSA_DIR) + _extra_includes(STUB_DIR) +
                _build_info(api, "stub", []))
    sanitize = os.environ.get("ROCPY_STUB_SANITIZE", "")
    san_flags = [f"-fsanitize={sanitize}", "-fno-omit-frame-pointer"] if sanitize else []
    ffi.set_source(
        "rocpy._lib_stub", preamble,
        define_macros=[(d, None) for d in api.platform.defines],
        include_dirs=api.include_dirs + [FAST_DIR, FAST_HSA_DIR, STUB_DIR, gen_dir],
        sources=_sources(STUB_DIR) + _sources(FAST_DIR) + _sources(FAST_HSA_DIR)
        + [os.path.relpath(d, os.path.dirname(ROOT)) for d in defaults],
        # default visibility: the same objects are linked again as the drop-in
        # libraries (dropin.py), whose version scripts choose the exports; in
        # this module the script makes all but PyInit local, so the stub's
        # calls to itself still bind inside it at link time
        extra_compile_args=["-pthread", "-O2",
                            "-Wno-unused-parameter", "-Wno-deprecated-declarations"] + san_flags,
        extra_link_args=["-pthread", f"-Wl,--version-script={version_script}"] + san_flags)
    return ffi


def nvidia_ffi(api: Api | None = None, amd_api: Api | None = None) -> FFI:
    """The builder of ``rocpy._lib_nvidia``: HIP's NVIDIA platform over CUDA.

    Links the CUDA runtime; the driver's ``cu*`` symbols stay unresolved and
    come from ``libcuda.so.1``, which rocpy loads globally before importing the
    module, so the module builds on machines without a driver.
    """
    api = api or describe("nvidia")
    amd_api = amd_api or describe("amd", include_dir=api.install.include_dir)
    hip_names = {n for n, f in amd_api.library_functions().items() if not n.startswith("hsa_")}
    missing = sorted(hip_names - set(api.functions) - set(api.consts.function_aliases))
    ffi = _new_ffi(api, _extra_cdefs(FAST_DIR))
    preamble = ("#include <string.h>\n" + api.include_lines() + _extra_includes(FAST_DIR) +
                _build_info(api, "nvidia", missing))
    cuda = api.cuda
    assert cuda is not None, "describe('nvidia') finds CUDA or raises"
    link = []
    if cuda.lib_dir:
        runtime = sorted(glob.glob(os.path.join(cuda.lib_dir, "libcudart.so*")))
        link = [f"-L{cuda.lib_dir}", f"-l:{os.path.basename(runtime[-1])}",
                f"-Wl,-rpath,{cuda.lib_dir}"] if runtime else []
    ffi.set_source(
        "rocpy._lib_nvidia", preamble,
        define_macros=[(d, None) for d in api.platform.defines],
        include_dirs=api.include_dirs + [FAST_DIR],
        sources=_sources(FAST_DIR),
        extra_compile_args=["-pthread", "-Wno-deprecated-declarations", "-w"],
        extra_link_args=["-pthread"] + (link or ["-lcudart"]))
    return ffi
