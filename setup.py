"""Only what setuptools needs for cffi_modules (cffi has no pyproject key for it)."""
import sys

from setuptools import setup

sys.path.insert(0, ".")
from build_ffi import cffi_modules  # noqa: E402

setup(cffi_modules=cffi_modules())
