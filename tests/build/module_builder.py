"""Build, import and return a throwaway cffi module over a given header tree.

Every library function gets the weak generic-failure default the stub uses,
so the module imports without any ROCm library: this is how the tests run
the pipeline over other ROCm versions' headers and over synthetic hazards.
"""
from __future__ import annotations

import importlib.util
import os

from cffi import FFI

from rocpy._build.api import Api, describe
from rocpy._build.backends import stub_defaults_source


def build_module(include_dir: str, tmpdir: str, name: str = "_rocpy_headers_test"):
    """Return (api, module) for the amd platform over ``include_dir``."""
    api: Api = describe("amd", include_dir=include_dir)
    ffi = FFI()
    ffi.cdef(api.cdef())
    ffi.set_source(name, stub_defaults_source(api), include_dirs=[include_dir],
                   define_macros=[(d, None) for d in api.platform.defines],
                   extra_compile_args=["-Wno-deprecated-declarations", "-w"])
    path = ffi.compile(tmpdir=tmpdir)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert os.path.exists(path)
    return api, module
