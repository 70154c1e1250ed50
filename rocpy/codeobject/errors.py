"""Exceptions of `rocpy.codeobject`, all in one place.

Reading files:

- `CodeObjectError` (a `ValueError`): the input is not a code object rocpy can
  read; the message names what is wrong and where (file offset, section,
  kernel, argument).
- `NoMatchingTargetError`: no code object in the file serves the device;
  ``.available`` and ``.device`` say what the file holds and what was asked.
- `InvalidTargetIdError`: a target ID string such as ``gfx90a:xnack+`` does
  not parse.

Packing kernel arguments (all derive from `KernelArgumentError`):

- `ArgumentCountError` and `ArgumentTypeError` are `TypeError`\\ s, as for a
  Python call with the wrong arguments;
- `ArgumentValueError` (a `ValueError`): right type, value out of range or of
  the wrong size;
- `LaunchConfigError` (a `ValueError`): a grid, block or dynamic LDS size that
  cannot be encoded in the hidden arguments.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..errors import RocpyError


class CodeObjectError(RocpyError, ValueError):
    """The input is not a code object that can be read (truncated, corrupt, unsupported)."""


class InvalidTargetIdError(CodeObjectError):
    """A target ID string (``gfx90a:sramecc+:xnack-``) is malformed."""


class NoMatchingTargetError(CodeObjectError):
    """No code object in the file runs on the requested device target."""

    def __init__(self, device: str, available: Sequence[str], source: str = "file") -> None:
        self.device = device
        self.available: tuple[str, ...] = tuple(available)
        listed = ", ".join(self.available) if self.available else "no AMDGPU code objects"
        super().__init__(
            f"no code object for device target {device!r} in {source}; it contains: {listed}")


class KernelArgumentError(RocpyError):
    """Base of the errors raised while packing kernel arguments.

    ``index`` is the position in the ``args`` sequence and ``param`` the
    parameter's name from the metadata, where known (else None).
    """

    def __init__(self, message: str, index: Optional[int] = None,
                 param: Optional[str] = None) -> None:
        super().__init__(message)
        self.index = index
        self.param = param


class ArgumentCountError(KernelArgumentError, TypeError):
    """The number of arguments differs from the kernel's parameter count."""


class ArgumentTypeError(KernelArgumentError, TypeError):
    """An argument's Python type cannot be passed for its parameter."""


class ArgumentValueError(KernelArgumentError, ValueError):
    """An argument's value does not fit its parameter (range, byte size)."""


class ArgumentRangeError(ArgumentValueError, OverflowError):
    """An argument's value is out of its parameter type's range (300 for an
    ``unsigned char``, 1e39 for a ``float``)."""


class LaunchConfigError(KernelArgumentError, ValueError):
    """Grid, block or dynamic LDS size is invalid or does not fit a hidden argument."""
