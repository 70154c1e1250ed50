"""The options of ``Device.create_stream`` checked and converted: ``priority`` and
``cu_mask`` (`rocpy.hip.stream.Stream._create` passes them to the runtime)."""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from .. import _args
from . import _api

if TYPE_CHECKING:
    from .device import Device


def priority_value(dev: Device, priority: Any) -> int:
    """``Device.create_stream``'s ``priority`` as the runtime's int: ``'high'``,
    ``'normal'``, ``'low'`` (the device's range) or an int (numpy ints too)."""
    if isinstance(priority, str):
        least, greatest = dev.stream_priority_range
        key = priority.lower()
        if key == "high":
            return greatest
        if key == "low":
            return least
        if key == "normal":
            return max(min(0, max(least, greatest)), min(least, greatest))
        raise _api.invalid("Device.create_stream", f"priority {priority!r} is not 'high', "
                                                   "'normal', 'low' or an int")
    if isinstance(priority, bool) or not hasattr(type(priority), "__index__"):
        raise TypeError(f"a stream priority is 'high', 'normal', 'low' or an int, "
                        f"not {type(priority).__name__}")
    priority = _args.integer(priority, "priority")       # numpy ints too
    if not -(1 << 31) <= priority < 1 << 31:
        raise _api.invalid("Device.create_stream", f"priority {priority} is not a C int")
    result: int = priority
    return result


def cu_mask_words(mask: Any) -> list[int]:
    """``Device.create_stream``'s ``cu_mask`` as 32-bit words (CU 0 is bit 0 of the
    first): an int, or an iterable of words; at least one CU enabled."""
    if isinstance(mask, bool):
        raise TypeError("cu_mask is an int or an iterable of 32-bit ints")
    if hasattr(type(mask), "__index__"):
        mask = _args.integer(mask, "cu_mask")
        if mask <= 0:
            raise _api.invalid("Device.create_stream", "cu_mask must enable at least one CU")
        words = []
        while mask:
            words.append(mask & 0xFFFFFFFF)
            mask >>= 32
        return words
    try:
        words = [operator.index(w) for w in mask]
    except TypeError:
        raise TypeError("cu_mask is an int or an iterable of 32-bit ints") from None
    if not words or not any(words) or any(not 0 <= w <= 0xFFFFFFFF for w in words):
        raise _api.invalid("Device.create_stream", "cu_mask is 32-bit words (CU 0 is bit 0 of "
                                                   "the first) with at least one bit set")
    return words
