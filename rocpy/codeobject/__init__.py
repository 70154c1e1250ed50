"""Read AMDGPU code objects: offload bundles, ELF, metadata, kernel argument layouts.

::

    from rocpy import codeobject

    f = codeobject.load("vadd.hsaco")          # bundle (plain or CCOB) or bare ELF
    f.targets                                  # (TargetId('gfx90a', ...), ...)
    co = f.select("gfx90a:sramecc+:xnack-")    # the ELF serving this device
    k = co.kernels["vadd"]                     # KernelInfo: args, sizes, descriptor
    kernarg = k.layout.pack((a, b, c, n), grid=(n,), block=(256,))

Errors on bad input are `CodeObjectError`; errors on bad kernel arguments
derive from `KernelArgumentError` (see `rocpy.codeobject.errors`).
"""
from __future__ import annotations

from .bundle import BundleEntry
from .codefile import CodeObjectFile, load
from .descriptor import KernelDescriptor
from .elf import CodeObject, Symbol
from .errors import (ArgumentCountError, ArgumentRangeError, ArgumentTypeError,
                     ArgumentValueError, CodeObjectError, InvalidTargetIdError, KernelArgumentError, LaunchConfigError,
                     NoMatchingTargetError)
from .kernargs import KernargLayout
from .metadata import CodeObjectMetadata, KernelArg, KernelInfo
from .target import TargetId, parse_target_id

__all__ = [
    "ArgumentCountError", "ArgumentRangeError", "ArgumentTypeError", "ArgumentValueError",
    "BundleEntry",
    "CodeObject", "CodeObjectError", "CodeObjectFile", "CodeObjectMetadata",
    "InvalidTargetIdError", "KernargLayout", "KernelArg", "KernelArgumentError",
    "KernelDescriptor", "KernelInfo", "LaunchConfigError", "NoMatchingTargetError", "Symbol",
    "TargetId", "load", "parse_target_id",
]
