"""Only what setuptools needs for cffi_modules (cffi has no pyproject key for it),
and the compiled hot path `rocpy._hot` (a plain stable-ABI extension: it links no
runtime; see rocpy/_native/hot/hot.c)."""
import sys

from setuptools import Extension, setup

sys.path.insert(0, ".")
from build_ffi import cffi_modules  # noqa: E402

hot = Extension("rocpy._hot", [f"rocpy/_native/hot/{f}.c" for f in
                               ("hot", "hot_lane", "hot_launch", "hot_calls")],
                depends=["rocpy/_native/hot/hot.h"], py_limited_api=True,
                define_macros=[("Py_LIMITED_API", "0x030A0000")],
                extra_compile_args=["-O2", "-Wall", "-Wno-missing-field-initializers",
                                    "-fvisibility=hidden"])

setup(cffi_modules=cffi_modules(), ext_modules=[hot])
