"""The one conversion layer for public arguments (both layers, every backend).

Every public method converts its arguments here before any C call, so what
reaches cffi or numpy is always a value of the right type and range, and no
cffi ``OverflowError``/``TypeError`` or numpy internal error reaches a user:

- integers through ``operator.index`` (numpy integers accepted wherever Python
  ints are; bools, floats, strings and arrays refused with `TypeError`),
  then explicit bounds (`ValueError` naming the argument and the range);
- sequences of integers (shapes, grids) element by element, the same way;
- timeouts as finite non-negative seconds (`TypeError` for a non-number);
- numpy dtypes refusing what holds Python objects or has no size
  (`TypeError`): raw memory viewed as ``object`` is a pointer forged from
  bytes, and a zero-size dtype makes a view with no elements of any length.

Messages have one shape, ``"<name> must be ..., not/got ..."``, so callers
and tests can rely on the argument's name being in the message.  Errors a
runtime would report for a value it receives (a status the stub and ROCm
return) stay with the callers: this layer refuses only what cannot be passed
to C at all.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any

import numpy as np

U8, U16, U32, U64 = (1 << 8) - 1, (1 << 16) - 1, (1 << 32) - 1, (1 << 64) - 1
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
SIZE_MAX = U64


def integer(value: Any, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as a Python int in ``[lo, hi]`` (either bound may be None).

    `TypeError` unless it has ``__index__`` (bools refused: ``True`` as a size
    is always a mistake); `ValueError` outside the bounds.
    """
    if type(value) is int:
        v = value
    elif isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, not bool")
    else:
        try:
            v = operator.index(value)
        except TypeError:
            raise TypeError(f"{name} must be an integer, not {type(value).__name__}") from None
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name} must be in {_range(lo, hi)}, got {v}")
    return v


def unsigned(value: Any, bits: int, name: str) -> int:
    """``value`` as an int in ``[0, 2**bits)`` (a C unsigned type of ``bits`` bits)."""
    v = integer(value, name)
    if not 0 <= v < 1 << bits:
        raise ValueError(f"{name} must be in [0, 2**{bits}) ({bits} bits unsigned), got {v}")
    return v


def signed(value: Any, bits: int, name: str) -> int:
    """``value`` as an int in a C signed type of ``bits`` bits."""
    return integer(value, name, -(1 << (bits - 1)), (1 << (bits - 1)) - 1)


def size(value: Any, name: str, hi: int = SIZE_MAX) -> int:
    """A byte count or element count: an int in ``[0, hi]``."""
    return integer(value, name, 0, hi)


def positive(value: Any, name: str, hi: int = SIZE_MAX) -> int:
    """An int in ``[1, hi]``."""
    return integer(value, name, 1, hi)


def integers(values: Any, name: str, lo: int | None = None, hi: int | None = None,
             length: tuple[int, int] | None = None) -> tuple[int, ...]:
    """A sequence (or one integer) of integers as a tuple of ints, each in ``[lo, hi]``.

    ``values`` may be one integer (a tuple of one), a list, tuple, numpy array
    (1-D) or any iterable (a generator is consumed once).  ``length=(min, max)``
    bounds the count.  Elements are named ``name[i]`` in errors.
    """
    if isinstance(values, np.ndarray):
        if values.ndim > 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {values.shape}")
        values = values.tolist() if values.ndim else [values.item()]
        if any(isinstance(v, bool) for v in values):
            raise TypeError(f"{name} must hold integers, not bool")
    if hasattr(type(values), "__index__") and not isinstance(values, (str, bytes)):
        items: list[Any] = [values]
    elif isinstance(values, (str, bytes, bytearray, dict, set, frozenset)) \
            or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be an integer or a sequence of integers, "
                        f"not {type(values).__name__}")
    else:
        items = list(values)
    if length is not None and not length[0] <= len(items) <= length[1]:
        want = str(length[0]) if length[0] == length[1] else f"{length[0]} to {length[1]}"
        raise ValueError(f"{name} must have {want} elements, got {len(items)}")
    return tuple(integer(v, f"{name}[{i}]", lo, hi) for i, v in enumerate(items))


def shape(value: Any, name: str = "shape") -> tuple[int, ...]:
    """A numpy shape: one integer or a sequence of them, each ``>= 0``."""
    return integers(value, name, 0, I64_MAX, (0, 64))


def seconds(value: Any, name: str = "timeout", allow_none: bool = True) -> float | None:
    """A timeout in seconds: None (forever, where allowed) or a real number ``>= 0``.

    `TypeError` for anything that is not a real number (a list, a string);
    `ValueError` for negative or NaN.  Infinity means forever (None).
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer,
                                                                     np.floating)):
        none = "None or " if allow_none else ""
        raise TypeError(f"{name} must be {none}a number of seconds, not {type(value).__name__}")
    t = float(value)
    if not t >= 0:
        raise ValueError(f"{name} must be a non-negative number of seconds, got {value!r}")
    if math.isinf(t):
        if not allow_none:
            raise ValueError(f"{name} must be finite, got {value!r}")
        return None
    return t


def dtype(value: Any, name: str = "dtype") -> np.dtype:
    """A numpy dtype for a view of raw memory.

    `TypeError` for what numpy cannot make a dtype of, for dtypes holding
    Python objects (``object``, or a structured dtype with an object field:
    viewing raw bytes as objects forges pointers) and for zero-size dtypes
    (``'V0'``, ``'S0'``, an empty struct: no element count fits them).
    """
    if value is None:
        raise TypeError(f"{name} must be a numpy dtype, not None")
    try:
        dt = np.dtype(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numpy dtype, not {value!r} ({exc})") from None
    if dt.hasobject:
        raise TypeError(f"{name} {dt} holds Python objects: raw device or host memory "
                        "cannot be viewed as objects")
    if dt.itemsize == 0:
        raise TypeError(f"{name} {dt} has size 0: raw memory needs an element size")
    result: np.dtype[Any] = dt
    return result


def array(value: Any, name: str) -> np.ndarray:
    """``value`` if it is a numpy array whose dtype `dtype` accepts (`TypeError` otherwise)."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, not {type(value).__name__}")
    if value.dtype.hasobject:
        raise TypeError(f"{name} has dtype {value.dtype}, which holds Python objects: "
                        "their pointers cannot be copied to or from raw memory")
    if value.dtype.itemsize == 0:
        raise TypeError(f"{name} has dtype {value.dtype} of size 0")
    return value


def sequence(value: Any, name: str) -> tuple[Any, ...]:
    """Any iterable (a generator included, consumed once) as a tuple; `TypeError` otherwise."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be a sequence, not {type(value).__name__}")
    try:
        return tuple(value)
    except TypeError:
        raise TypeError(f"{name} must be a sequence, not {type(value).__name__}") from None


def _range(lo: int | None, hi: int | None) -> str:
    if lo is None:
        return f"(-inf, {hi}]"
    if hi is None:
        return f"[{lo}, +inf)"
    return f"[{lo}, {hi}]"


__all__ = ["integer", "unsigned", "signed", "size", "positive", "integers", "shape", "seconds",
           "dtype", "array", "sequence"]
