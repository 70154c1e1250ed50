"""Only what setuptools cannot take from pyproject.toml: cffi_modules (cffi has no
pyproject key for it) and the wheel's limited-API tag."""
import sys

from setuptools import setup

sys.path.insert(0, ".")
from build_ffi import cffi_modules  # noqa: E402

# cffi compiles every module against Python's limited API (the `.abi3.so`
# names); cp310-abi3 is the oldest Python rocpy supports (requires-python).
setup(cffi_modules=cffi_modules(), options={"bdist_wheel": {"py_limited_api": "cp310"}})
