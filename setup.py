"""Only what setuptools cannot take from pyproject.toml: cffi_modules (cffi has no
pyproject key for it), the compiled hot path `rocpy._hot` (a plain stable-ABI
extension: it links no runtime; see rocpy/_native/hot/hot.c) and the wheel's
limited-API tag."""
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, ".")
from build_ffi import cffi_modules, dropin_libraries, type_stubs  # noqa: E402


class BuildExt(build_ext):
    """The extensions, then the stub again as drop-in ROCm libraries
    (rocpy/_stub_libs: rocpy/_build/dropin.py), from the same objects; then each
    backend module's type stub (rocpy/_build/typestub.py)."""

    def run(self):
        super().run()
        dropin_libraries(self)
        type_stubs(self)


hot = Extension("rocpy._hot", [f"rocpy/_native/hot/{f}.c" for f in
                               ("hot", "hot_lane", "hot_idle", "hot_launch", "hot_pack",
                                "hot_calls", "hot_method", "hot_signal", "hot_sync")],
                depends=[f"rocpy/_native/hot/{f}.h" for f in ("hot", "hot_launch", "hot_method")],
                py_limited_api=True,
                # 3.11's limited API has the buffer protocol (host-array copies in C);
                # built on 3.10, those copies take the Python path
                define_macros=[("Py_LIMITED_API", "0x030B0000" if sys.version_info >= (3, 11)
                                else "0x030A0000")],
                extra_compile_args=["-O2", "-Wall", "-Wno-missing-field-initializers",
                                    "-fvisibility=hidden"])

# cffi compiles every module against Python's limited API (the `.abi3.so`
# names), rocpy._hot against 3.11's (3.10's on 3.10: PyObject_GetBuffer, the one
# 3.11 addition it uses, is exported by 3.10's libpython too); cp310-abi3 is the oldest Python rocpy
# supports (requires-python).
setup(cffi_modules=cffi_modules(), ext_modules=[hot], cmdclass={"build_ext": BuildExt},
      options={"bdist_wheel": {"py_limited_api": "cp310"}})
