"""``__cuda_array_interface__`` (CUDA Array Interface v3): export and import.

CuPy, Numba and AMD's HIP bindings speak it on ROCm as on CUDA, so rocpy
exports it from every buffer on every backend and takes any object that has
it wherever device memory is taken (copy ends, kernel pointer arguments).

Synchronization (the protocol's version 3 ``stream`` key):

- **export**: ``stream`` is the handle of the stream rocpy last enqueued
  work on the buffer with (copies, fills) while that work may be pending,
  and absent otherwise; a consumer orders its work after that stream.
- **import**: a ``stream`` other than None is the producer's: before rocpy
  uses the memory on another stream it waits for that stream
  (`wait_for_producer`: the producer's stream is synchronized; ``1`` is the
  legacy default stream, ``2`` the per-thread one, ``0`` is refused as the
  protocol requires).  A ``mask`` is refused; so is memory that is not
  C-contiguous, and read-only memory as a destination.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _api
from ._api import api


def export(buffer: Any, dtype: np.dtype, shape: tuple[int, ...],
           readonly: bool = False) -> dict[str, Any]:
    """The interface dict of ``buffer`` viewed as ``shape`` of ``dtype``."""
    iface: dict[str, Any] = {"shape": tuple(shape), "typestr": dtype.str,
                             "data": (buffer.ptr, bool(readonly)), "version": 3,
                             "strides": None}
    if dtype.fields is not None:
        iface["descr"] = dtype.descr
    from .memory import last_stream
    last = last_stream(buffer)
    if last is not None:
        iface["stream"] = last._stream_int()
    return iface


def interface(obj: Any) -> dict[str, Any] | None:
    """``obj.__cuda_array_interface__``, or None when it has none (rocpy's buffers and
    numpy arrays are the callers' own cases and never come here)."""
    try:
        iface = obj.__cuda_array_interface__
    except AttributeError:
        return None
    if not isinstance(iface, dict):
        raise TypeError(f"{type(obj).__name__}.__cuda_array_interface__ is a "
                        f"{type(iface).__name__}, not a dict")
    return iface


def describe(obj: Any, iface: dict[str, Any], writable: bool, call: str) -> tuple[int, int]:
    """``(address, nbytes)`` of an imported interface, validated."""
    name = type(obj).__name__
    try:
        ptr, readonly = iface["data"]
        shape = tuple(int(d) for d in iface["shape"])
        dtype = np.dtype(iface["typestr"])
    except (KeyError, TypeError, ValueError) as exc:
        raise TypeError(f"{call}: {name}.__cuda_array_interface__ is malformed ({exc!r})") \
            from None
    if not isinstance(ptr, int) or isinstance(ptr, bool) or ptr < 0:
        raise TypeError(f"{call}: {name}.__cuda_array_interface__ data pointer {ptr!r} is not "
                        "a non-negative int")
    if iface.get("mask") is not None:
        raise _api.invalid(call, f"{name} has a mask: masked arrays cannot be copied raw")
    if any(d < 0 for d in shape):
        raise _api.invalid(call, f"{name} has a negative dimension {shape}")
    strides = iface.get("strides")
    if strides is not None:
        expected: list[int] = []
        step = dtype.itemsize
        for d in reversed(shape):
            expected.insert(0, step)
            step *= d
        if tuple(strides) != tuple(expected) and math.prod(shape) > 1:
            raise _api.invalid(call, f"{name} is not C-contiguous (strides {tuple(strides)})")
    if writable and readonly:
        raise _api.invalid(call, f"the destination {name} is read-only")
    return ptr, math.prod(shape) * dtype.itemsize


def wait_for_producer(iface: dict[str, Any], consumer: int | None, call: str) -> None:
    """Honour the v3 ``stream`` key before using the memory on stream ``consumer``
    (a handle int; None: the caller runs synchronously on the host's behalf)."""
    producer = iface.get("stream")
    if producer is None:
        return
    if isinstance(producer, bool) or not isinstance(producer, int) or producer < 0:
        raise TypeError(f"{call}: __cuda_array_interface__ stream {producer!r} is not a "
                        "stream handle")
    if producer == 0:
        raise _api.invalid(call, "__cuda_array_interface__ stream 0 is disallowed by the "
                                 "protocol (it is ambiguous): the producer must give 1, 2 "
                                 "or a stream handle")
    handle = 0 if producer == 1 and api().name != "nvidia" else producer
    if consumer is not None and handle == consumer:
        return
    from .stream import Stream
    s = Stream.from_handle(handle)
    try:
        s.sync()
    finally:
        s.close()
