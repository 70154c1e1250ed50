"""The copy path of rocpy buffers: `Buffer.copy_from`/`copy_to` (rocpy/hip/memory.py)
and what graph copy nodes and fills share with them.

- the ends of a copy (`other_end`: a buffer, a ``__cuda_array_interface__`` object, a
  host array or bytes-like object; `endpoint` for host ends) and the
  ``hipMemcpyKind`` between them (`memcpy_kind`, over `ENDPOINT_SIDE`);
- asynchronous copies on a stream: the compiled ``rocpy._hot.copy_async`` where it
  takes the case (`copy_async`), else `copy_with`, which validates, raises what is
  wrong and enqueues through the stream's lane (`_copy`);
- synchronous copies and fills ordered like the legacy null stream (`on_null`), which
  wait first, interruptibly, for what rocpy enqueued on the device.

rocpy/hip/memory.py registers its buffer types here (`register_buffers`) once they
are defined; the compiled copy (rocpy/_native/hot/hot_calls.c) reads the same table.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import hip_error
from .. import _args
from . import _api, _calls, _cai, _lane, _wait
from ._api import api, use_device
from .device import made_device
from .stream import Stream, as_stream
from .typed import TypedBuffer

#: the side of each buffer type's memory in a copy: 1 device, 0 host, -1 either (managed:
#: hipMemcpyDefault lets the runtime decide); what `memcpy_kind` and the compiled copy
#: read (filled in place by `register_buffers`: the compiled copy holds this dict)
ENDPOINT_SIDE: dict[type, int] = {}
_BUFFER_TYPES: frozenset[type] = frozenset()
#: host ends the compiled copy takes (exact types; through a memoryview, as `endpoint`)
_BYTES_TYPES = frozenset({bytes, bytearray, memoryview})
#: rocpy/hip/memory.py's `Buffer` (`register_buffers`)
_Buffer: Any = None


def register_buffers(base: type, sides: dict[type, int]) -> None:
    """memory.py's buffer base class and ``{buffer type: side}`` (see `ENDPOINT_SIDE`)."""
    global _Buffer, _BUFFER_TYPES
    _Buffer = base
    ENDPOINT_SIDE.update(sides)
    _BUFFER_TYPES = frozenset(ENDPOINT_SIDE)


def other_end(obj: Any, writable: bool, call: str,
              stream: Any = None) -> tuple[Any, int, Any]:
    """(pointer, nbytes, object to keep alive) of a copy's other end: a buffer
    (refused when closed), an object with ``__cuda_array_interface__`` (its
    producer's stream waited for unless it is ``stream``), or anything
    `endpoint` takes."""
    if isinstance(obj, _Buffer):
        ptr = obj._h
        if ptr is None:
            raise obj._closed_error()
        return ptr, obj._nbytes, obj
    if not isinstance(obj, (np.ndarray, TypedBuffer, bytes, bytearray, memoryview)):
        iface = _cai.interface(obj)
        if iface is not None:
            ptr, n = _cai.describe(obj, iface, writable, call)
            consumer = 0 if stream is None else stream_of(stream)._stream_int()
            _cai.wait_for_producer(iface, consumer, call)
            return ptr, n, obj
    return endpoint(obj, writable, call)


def copy_with(buf: Any, other: Any, to_other: bool, stream: Any) -> None:
    """``buf.copy_to(other)`` (``to_other``) or ``buf.copy_from(other)``, on ``stream``
    or synchronously (None): every case, every error (the Python definition)."""
    ptr = buf._h
    if ptr is None:
        raise buf._closed_error()
    call = f"{type(buf).__name__}.copy_{'to' if to_other else 'from'}"
    optr, n, keep = other_end(other, to_other, call, stream)
    if n != buf._nbytes:
        end, way = ("the destination", "from") if to_other else ("the source", "into")
        raise _api.invalid(call, f"{end} has {n} bytes, this buffer {buf._nbytes}: "
                                 f"sizes must match (copy {way} a view, buf[a:b])")
    if to_other:
        _copy(optr, ptr, n, stream, buf, keep, memcpy_kind(buf, keep))
    else:
        _copy(ptr, optr, n, stream, buf, keep, memcpy_kind(keep, buf))


def on_null(index: int, fn: Callable[..., int], *args: Any) -> int:
    """``fn(*args)``, a synchronous call ordered like the legacy null stream of device
    ``index`` (-1: the current device), made with that device current; its status.

    It completes the null stream's earlier work, so what that work held is dropped
    (and held again if the call fails).  Where rocpy enqueued anything on the device
    since the last completed null-stream wait (`_lane.idle`), that earlier work is
    waited for first, interruptibly (`_wait`): the call itself then only does its
    own part.  Work rocpy cannot see (raw ``rocpy.hip.lib`` calls) is still ordered
    by the runtime's implicit null-stream sync; only its wait is not interruptible."""
    if index >= 0:
        use_device(index)
    # the synchronous call's own status says what a failed pre-wait meant (capture rules)
    if index < 0:
        index = getattr(_api._tls, "device", -1)
        if index < 0:
            index = _api.current_device_index()
    begun = _lane.marks(index)
    waited = False
    if _wait.captures[0] or not _lane.idle(index):
        # work pending (or a capture, whose rules the wait follows): wait interruptibly
        waited = _wait.wait(_wait.STREAM, api().null, index) == 0
    null = null_of(index)
    if null is None:
        st: int = fn(*args)
    else:
        taken = null._take()
        st = fn(*args)
        if st:
            null._restore(taken)
        else:
            null._completed(taken)
    if waited and not st:
        _lane.cover(index, begun)   # what was enqueued before the wait is complete
    return st


def null_of(index: int) -> Any:
    """The null stream wrapper of device ``index`` (-1: the current device), if one exists."""
    if index < 0:
        index = getattr(_api._tls, "device", -1)
        if index < 0:
            return None
    dev = made_device(index)
    null = dev._null if dev is not None else None
    return null if null is not None and null._h is not None else None


_void_cache: dict[int, Any] = {}


def stream_of(stream: Any) -> Stream:
    """``stream`` as a `Stream` (`as_stream`)."""
    if type(stream) is Stream:
        return stream
    return as_stream(stream)


_devptr_is_int: bool | None = None


def devptr(address: int) -> Any:
    """``address`` as a ``hipDeviceptr_t``: ``void *`` on AMD, an integer on NVIDIA."""
    global _devptr_is_int
    if _devptr_is_int is None:
        _devptr_is_int = api().ffi.typeof("hipDeviceptr_t").kind == "primitive"
    return address if _devptr_is_int else void(address)


def void(address: int) -> Any:
    """``address`` as a ``void *`` (small cache: buffers are copied from again and again)."""
    p = _void_cache.get(address)
    if p is None:
        if len(_void_cache) > 4096:
            _void_cache.clear()
        p = _void_cache[address] = api().ffi.cast("void *", address)
    return p


def endpoint(obj: Any, writable: bool, call: str) -> tuple[int, int, Any]:
    """(address, nbytes, object to keep alive) of a host copy endpoint."""
    if isinstance(obj, TypedBuffer):
        b = obj.buffer
        return b.ptr, b._nbytes, b
    if isinstance(obj, np.ndarray):
        _args.array(obj, "the host array")     # object arrays hold pointers, not data
        if writable:
            if not obj.flags.c_contiguous:
                raise _api.invalid(call, "the destination array is not C-contiguous")
            if not obj.flags.writeable:
                raise _api.invalid(call, "the destination array is read-only")
        elif not obj.flags.c_contiguous:
            obj = np.ascontiguousarray(obj)
        return obj.__array_interface__["data"][0], obj.nbytes, obj
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(f"{call}: expected a buffer, a numpy array or a bytes-like object, "
                        f"not {type(obj).__name__}") from None
    if "O" in view.format:
        raise TypeError(f"{call}: the {type(obj).__name__} holds Python objects: their pointers "
                        "cannot be copied to or from raw memory")
    if writable and view.readonly:
        raise _api.invalid(call, f"the destination {type(obj).__name__} is read-only")
    if not view.c_contiguous:
        if writable:
            raise _api.invalid(call, "the destination is not contiguous")
        view = memoryview(view.tobytes())
    ffi = api().ffi
    cdata = ffi.from_buffer(view) if view.nbytes else None
    addr = _api.address(cdata) if cdata is not None else 0
    return addr, view.nbytes, (view, cdata)


_DEFAULT_KIND = 4   # hipMemcpyDefault (and cudaMemcpyDefault): checked at the first bind


def memcpy_kind(src: Any, dst: Any) -> int:
    """The ``hipMemcpyKind`` of a copy between what `other_end` keeps for each end
    (a buffer, a host array, what holds host memory, a foreign object): the explicit
    kind where both sides are known (`ENDPOINT_SIDE`; host arrays are host memory),
    ``hipMemcpyDefault`` otherwise (managed memory, ``__cuda_array_interface__``
    objects).  On NVIDIA ``cudaMemcpyDefault`` costs a UVA lookup per copy; hipamd
    ignores the kind for pointers it knows.  The compiled copy's ``memcpy_kind``
    (rocpy/_native/hot/hot_calls.c) is this rule over the same table."""
    a, b = _side(src), _side(dst)
    return _DEFAULT_KIND if a < 0 or b < 0 else a * 2 + b


def _side(end: Any) -> int:
    t = type(end)
    side = ENDPOINT_SIDE.get(t)
    if side is not None:
        return side
    return 0 if t is np.ndarray or t is tuple or isinstance(end, np.ndarray) else -1


def _memcpy_async(dst: int, src: int, n: int, kind: int, stream: int) -> int:
    """``hipMemcpyAsync`` by addresses (bound at the first call, `_calls`)."""
    global _memcpy_async
    if api().lib.hipMemcpyDefault != _DEFAULT_KIND:  # pragma: no cover - a header change
        raise RuntimeError("hipMemcpyDefault is not 4 in this backend's headers")
    # rebinds itself at the first call
    _memcpy_async = _calls.bind_memcpy_async()  # type: ignore[assignment]
    return _memcpy_async(dst, src, n, kind, stream)


def copy_async(buf: Any, other: Any, to_other: bool, stream: Any) -> bool:
    """The compiled copy between a rocpy buffer and another or a host array (numpy,
    bytes, bytearray, memoryview) on a ready `Stream` (``rocpy._hot.copy_async``); False,
    having done nothing, for anything else or where the compiled path is off
    (`copy_with` then does it, and raises what is wrong).  Bound at the first call."""
    bind_copy_async()
    return copy_async(buf, other, to_other, stream)


def bind_copy_async() -> None:
    """Bind `copy_async` (and register the types the compiled copy takes)."""
    global copy_async
    from .._hotpath import module
    hot = module()
    if hot is None:
        # rebinds itself at the first call
        copy_async = _not_compiled  # type: ignore[assignment]
        return
    if api().lib.hipMemcpyDefault != _DEFAULT_KIND:  # pragma: no cover - a header change
        raise RuntimeError("hipMemcpyDefault is not 4 in this backend's headers")
    from .stream import Stream as stream_type
    a = api()
    lib = a.lib
    if (lib.hipMemcpyHostToHost, lib.hipMemcpyHostToDevice, lib.hipMemcpyDeviceToHost,
            lib.hipMemcpyDeviceToDevice) != (0, 1, 2, 3):  # pragma: no cover - a header change
        raise RuntimeError("hipMemcpyKind is not HtoH 0, HtoD 1, DtoH 2, DtoD 3 here")
    hot.register_copy_types(stream_type, ENDPOINT_SIDE, np.ndarray, _BYTES_TYPES)
    hot.register_sync_copy(_calls._address("hipMemcpy"), _api._tls, _wait.captures,
                           ENDPOINT_SIDE)
    fn = int(a.ffi.cast("uintptr_t", a.ffi.addressof(a.lib, "hipMemcpyAsync")))
    copy_async = functools.partial(hot.copy_async, fn)


def _not_compiled(*args: Any) -> bool:
    return False


def _copy(dst: int, src: int, n: int, stream: Any, buf: Any, other: Any, kind: int) -> None:
    if n == 0:
        return
    if stream is not None:
        s = stream if type(stream) is Stream else stream_of(stream)
        lane = s._lane
        if lane.ready < 0 or s._h is None or lane.errors.pending:
            s._enter()
        st = _memcpy_async(dst, src, n, kind, lane.addr)
        if st:
            raise hip_error(st, "hipMemcpyAsync")
        w = buf._last = s._weak
        if type(other) in _BUFFER_TYPES:
            other._last = w
        s._hold_once(buf, other)
        return
    lib = api().lib
    index = buf._dev_index
    if index < 0 and isinstance(other, _Buffer):
        index = other._dev_index
    st = on_null(index, lib.hipMemcpy, void(dst), void(src), n, kind)
    if st:
        raise hip_error(st, "hipMemcpy")
