"""Buffers: `DeviceBuffer`, `HostBuffer` (pinned), `ManagedBuffer`, and `TypedBuffer`.

::

    buf = dev.context.alloc(n * 4)                 # DeviceBuffer, holds its context
    host = rocpy.hip.Context.host().alloc_host(n * 4)
    host.numpy(np.float32)[:] = data                # zero-copy view of pinned memory
    buf.copy_from(host, stream=s)                   # async on s
    buf.copy_to(out_array, stream=s)                # pageable numpy: kept alive until done
    buf[1024:2048].fill(0)                          # a view keeps its parent alive
    buf.close(stream=s)                             # freed in stream order

Every size and bound is checked before any native call; a mismatch raises
`rocpy.InvalidValueError` (a `HipError` with status ``hipErrorInvalidValue``).
What asynchronous work uses (buffers, pageable numpy arrays, bytes) is kept
alive by the stream until that work completes.

Interop: ``__dlpack__``/``__dlpack_device__`` (DLPack 1.0, versioned capsules
when the consumer asks with ``max_version``, legacy ones otherwise): AMD
memory is ``kDLROCM``, NVIDIA memory ``kDLCUDA``.  **On the stub backend
device memory is ordinary host memory the stub tracks, and is exported as
``kDLCPU``, never as GPU memory**, so no consumer mistakes it for a GPU
allocation.  Pinned host memory is ``kDLCPU`` everywhere.
``__cuda_array_interface__`` (v3, with the ``stream`` key) is exported on
every backend and taken wherever device memory is (`rocpy.hip._cai`).
Host-accessible buffers (`HostBuffer`, `ManagedBuffer`) are numpy arrays
without a copy: ``np.asarray(buf)`` (``__array__``) and, on Python 3.12+,
``memoryview(buf)`` (``__buffer__``; 3.10/3.11 have no buffer protocol for
Python classes: use ``memoryview(buf.numpy())``).  `DeviceBuffer` refuses with a
``TypeError`` on every backend, the stub included (its "device" memory is
host memory, but code that reads it there would fail on a GPU).
A raw buffer exports as a 1-D ``uint8`` array; ``buf.typed(np.float32,
shape)`` gives a typed view.
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from .._handle import Handle
from ..errors import hip_error
from .. import _args
from . import _api, _calls, _lane, _wait
from ._api import api, use_device
from . import _cai
from .device import made_device
from .stream import Stream, as_stream
from .typed import TypedBuffer, _as_array, _cuda_array_interface, _numpy_view

if TYPE_CHECKING:
    from .context import Context
    from .device import Device

_B = TypeVar("_B", bound="Buffer")   # a Buffer subclass: its factories return their own class


def _size(nbytes: Any, call: str) -> int:
    n = _args.integer(nbytes, f"{call}: nbytes")   # the range is HIP's statuses, below
    if n < 0:
        raise _api.invalid(call, f"a size in bytes cannot be negative ({n})")
    if n >= 1 << 64:
        # what the runtime says for sizes it cannot place (hipMalloc(SIZE_MAX)), not
        # cffi's OverflowError, which no `except HipError` would catch
        raise _api.fail("hipErrorOutOfMemory", call, f"{n} bytes do not fit in a size_t")
    return n


def _free(function: str, ptr: int) -> None:
    """Release recipe: ``hipFree``/``hipHostFree`` of ``ptr``; raises on failure."""
    a = api()
    st = getattr(a.lib, function)(a.ffi.cast("void *", ptr))
    if st:
        raise hip_error(st, function)


def _free_async(ptr: int, stream: Any) -> None:
    """Stream-ordered release recipe (``hipFreeAsync``) for stream-ordered allocations."""
    a = api()
    h = stream._open_bound()
    st = a.lib.hipFreeAsync(a.ffi.cast("void *", ptr), h)
    if st:
        raise hip_error(st, "hipFreeAsync")


def _other_end(obj: Any, writable: bool, call: str,
               stream: Any = None) -> tuple[Any, int, Any]:
    """(pointer, nbytes, object to keep alive) of a copy's other end: a buffer
    (refused when closed), an object with ``__cuda_array_interface__`` (its
    producer's stream waited for unless it is ``stream``), or anything
    `_endpoint` takes."""
    if isinstance(obj, Buffer):
        ptr = obj._h
        if ptr is None:
            raise obj._closed_error()
        return ptr, obj._nbytes, obj
    if not isinstance(obj, (np.ndarray, TypedBuffer, bytes, bytearray, memoryview)):
        iface = _cai.interface(obj)
        if iface is not None:
            ptr, n = _cai.describe(obj, iface, writable, call)
            consumer = 0 if stream is None else _stream_of(stream)._stream_int()
            _cai.wait_for_producer(iface, consumer, call)
            return ptr, n, obj
    return _endpoint(obj, writable, call)


class Buffer(Handle):
    """Base of the buffer types: ``nbytes`` bytes at ``ptr`` owned by a `Context`.

    ``int(buf)`` and ``buf.ptr`` give the address; ``len(buf)`` the size;
    ``buf[a:b]`` a view of the same type that keeps ``buf`` alive (byte
    offsets, step 1, within bounds).  Views are never freed themselves.
    """

    __slots__ = ("_nbytes", "_ctx", "_dev_index", "_offset", "_last")

    #: DLPack device type on the amd backend (the stub exports kDLCPU for all).
    _amd_dl: ClassVar[int] = _api.KDL_ROCM
    _nv_dl: ClassVar[int] = _api.KDL_CUDA
    _host_accessible: ClassVar[bool] = False

    _nbytes: int
    _ctx: Any
    _dev_index: int
    _offset: int
    # A weak reference to the stream that last enqueued work on this buffer (or None):
    # the stream holds the buffer until that work is fenced, and its release recipe
    # holds what it holds, so a strong reference back would keep a dropped stream
    # (and the buffer) alive through rocpy's table of live objects forever.
    _last: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"make a {type(self).__name__} with a Context's alloc methods")

    @classmethod
    def _adopt(cls: type[_B], ptr: int, nbytes: int, ctx: Any, release: tuple[Any, ...] | None,
               release_async: tuple[Any, ...] | None = None,
               parents: tuple[Any, ...] | None = None) -> _B:
        buf = cls.__new__(cls)
        Handle.__init__(buf, ptr, release, release_async=release_async,
                        parents=(ctx,) if parents is None else parents)
        buf._nbytes = nbytes
        buf._ctx = ctx
        buf._dev_index = -1 if ctx._is_host else ctx._devices[0]._index
        buf._offset = 0
        buf._last = None
        return buf

    @classmethod
    def _allocate_flags(cls, ctx: Any, nbytes: Any, flags: int, alloc: str, free: str,
                        call: str) -> Any:
        """``alloc(&ptr, nbytes, flags)`` (``hipHostMalloc``, ``hipMallocManaged``),
        released by ``free``; ``call`` names the caller in errors."""
        n = _size(nbytes, call)
        ctx._device_index()
        a = api()
        out = a.ffi.new("void **")
        st = getattr(a.lib, alloc)(out, n, flags)
        if st:
            raise hip_error(st, alloc)
        ptr = _api.address(out[0])
        return cls._adopt(ptr, n, ctx, (_free, free, ptr))

    # ---- what it is -------------------------------------------------------------

    @property
    def ptr(self) -> int:
        """The address (raises `rocpy.ClosedError` once closed)."""
        h = self._h
        if h is None:
            raise self._closed_error()
        result: int = h
        return result

    def __int__(self) -> int:
        """The address, as `ptr`."""
        return self.ptr

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self._nbytes

    def __len__(self) -> int:
        """The size in bytes."""
        return self._nbytes

    @property
    def context(self) -> Context:
        """The `Context` the memory belongs to."""
        result: Context = self._ctx
        return result

    @property
    def device(self) -> Device:
        """The device of the buffer's context (the current device for the host context)."""
        result: Device = self._ctx.device
        return result

    @property
    def is_view(self) -> bool:
        """True for ``buf[a:b]`` views."""
        return not self._rec.counted

    def __repr__(self) -> str:
        name = type(self).__name__
        if self._h is None:
            return f"<{name} closed>"
        where = "host context" if self._ctx._is_host else f"Device {self._dev_index}"
        view = " view" if self.is_view else ""
        return f"<{name}{view} {self._nbytes} bytes at {self._h:#x} on {where}>"

    def __getitem__(self, key: Any) -> Buffer:
        """``buf[a:b]``: a view of bytes ``a`` to ``b`` (step 1, in bounds) that keeps ``buf``."""
        if not isinstance(key, slice):
            raise TypeError(f"index a {type(self).__name__} with a slice of bytes, "
                            f"not {type(key).__name__}")
        n = self._nbytes
        call = f"{type(self).__name__}[{key.start}:{key.stop}]"
        if key.step not in (None, 1):
            raise _api.invalid(call, f"views are contiguous: step must be 1, not {key.step}")
        start = 0 if key.start is None else operator.index(key.start)
        stop = n if key.stop is None else operator.index(key.stop)
        if start < 0:
            start += n
        if stop < 0:
            stop += n
        if not 0 <= start <= stop <= n:
            raise _api.invalid(call, f"byte range [{key.start}:{key.stop}] is outside the "
                                     f"{n}-byte buffer (or reversed)")
        ptr = self.ptr
        view = type(self).__new__(type(self))
        Handle.__init__(view, ptr + start, parents=(self,))
        view._nbytes = stop - start
        view._ctx = self._ctx
        view._dev_index = self._dev_index
        view._offset = self._offset + start
        view._last = None
        return view

    # ---- copies and fills -------------------------------------------------------

    def copy_from(self, src: Any, stream: Any = None) -> None:
        """Copy all of ``src`` into this buffer; sizes must be equal.

        ``src``: a buffer (or `TypedBuffer`), a numpy array (made contiguous
        if it is not), or any contiguous bytes-like object.  Without
        ``stream``, a synchronous ``hipMemcpy`` (ordered like the legacy null
        stream).  With ``stream`` (a `Stream` or any object with
        ``__hip_stream__``), ``hipMemcpyAsync`` on it; ``src`` and this buffer
        are kept alive until the copy completes.

        Args:
            src: What to copy from, of this buffer's size.
            stream: The stream to copy on; None copies synchronously.

        Raises:
            rocpy.InvalidValueError: ``src`` has another size.
            rocpy.ClosedError: this buffer was closed.
            rocpy.HipError: the copy failed (the runtime's status).
        """
        if stream is None or not _copy_async(self, src, False, stream):
            self._copy_with(src, False, stream)

    def copy_to(self, dst: Any, stream: Any = None) -> Any:
        """Copy this buffer into ``dst``; sizes must be equal.  Returns ``dst``.

        ``dst``: a buffer, a writable C-contiguous numpy array, or a writable
        contiguous bytes-like object (bytearray, memoryview).  Stream
        semantics as in `copy_from`: with a stream, read ``dst`` only after
        synchronizing.

        Args:
            dst: Where to copy to, of this buffer's size.
            stream: The stream to copy on; None copies synchronously.

        Returns:
            ``dst``.

        Raises:
            rocpy.InvalidValueError: ``dst`` has another size.
            rocpy.ClosedError: this buffer was closed.
            rocpy.HipError: the copy failed (the runtime's status).
        """
        if stream is None or not _copy_async(self, dst, True, stream):
            self._copy_with(dst, True, stream)
        return dst

    def _copy_with(self, other: Any, to_other: bool, stream: Any) -> None:
        """`copy_to` (``to_other``) or `copy_from` ``other``, whose size must be this one's."""
        ptr = self._h
        if ptr is None:
            raise self._closed_error()
        call = f"{type(self).__name__}.copy_{'to' if to_other else 'from'}"
        optr, n, keep = _other_end(other, to_other, call, stream)
        if n != self._nbytes:
            end, way = ("the destination", "from") if to_other else ("the source", "into")
            raise _api.invalid(call, f"{end} has {n} bytes, this buffer {self._nbytes}: "
                                     f"sizes must match (copy {way} a view, buf[a:b])")
        if to_other:
            _copy(optr, ptr, n, stream, self, keep, _memcpy_kind(self, keep))
        else:
            _copy(ptr, optr, n, stream, self, keep, _memcpy_kind(keep, self))

    def fill(self, value: Any, stream: Any = None) -> None:
        """Set every byte, or every 32-bit word, to ``value``.

        A Python int 0..255 (or a 1-byte numpy scalar) fills bytes
        (``hipMemset``); a 4-byte numpy scalar (``np.uint32(7)``,
        ``np.float32(1.5)``) fills 32-bit words (``hipMemsetD32``; the size
        must be a multiple of 4).  With ``stream``, asynchronous on it.
        """
        ptr = self._h
        if ptr is None:
            raise self._closed_error()
        n = self._nbytes
        width, pattern = _fill_pattern(value, n, f"{type(self).__name__}.fill")
        if n == 0:
            return
        lib = api().lib
        if width == 4:
            # the hipMemsetD32* functions take a hipDeviceptr_t and an int
            p = _devptr(ptr)
            if pattern >= 1 << 31:
                pattern -= 1 << 32
        else:
            p = _void(ptr)
        if stream is None:
            if width == 4:
                st = _on_null(self._dev_index, lib.hipMemsetD32, p, pattern, n // 4)
            else:
                st = _on_null(self._dev_index, lib.hipMemset, p, pattern, n)
            if st:
                raise hip_error(st, "hipMemsetD32" if width == 4 else "hipMemset")
            return
        s = _stream_of(stream)
        sh = s._enter()
        if width == 4:
            st = lib.hipMemsetD32Async(p, pattern, n // 4, sh)
        else:
            st = lib.hipMemsetAsync(p, pattern, n, sh)
        if st:
            raise hip_error(st, "hipMemsetD32Async" if width == 4 else "hipMemsetAsync")
        self._last = s._weak
        s._hold(self)

    # ---- lifetime ---------------------------------------------------------------

    def close(self, stream: Any = None) -> None:
        """Free the memory now, or in stream order with ``stream``.

        With ``stream``: a stream-ordered allocation (``alloc(n, stream=)``)
        is freed by ``hipFreeAsync``; other memory is freed once the work
        already enqueued on ``stream`` completes (rocpy waits for it, without
        blocking the caller).  A view only stops being usable.  Live views and
        numpy arrays of this buffer delay the free until they are gone.
        """
        if stream is None:
            super().close()
            return
        s = _stream_of(stream)
        if self._h is not None and s._h is None:
            # a closed stream orders nothing: refuse before claiming the release,
            # which would otherwise wait in the dead stream until it is collected
            raise s._closed_error()
        super().close(s)

    # ---- interop ----------------------------------------------------------------

    def typed(self, dtype: Any, shape: Any = None) -> TypedBuffer:
        """This memory as an array of ``dtype`` (C order), for DLPack and numpy.

        ``shape`` defaults to as many elements as fit exactly; its product
        times the item size must equal ``nbytes``.
        """
        self._require_open()
        return TypedBuffer(self, dtype, shape)

    def _dl_device(self) -> tuple[int, int]:
        name = api().name
        if name == "stub" or isinstance(self, HostBuffer):
            return _api.KDL_CPU, 0
        index = self._dev_index if self._dev_index >= 0 else self._ctx.device._index
        return (self._nv_dl if name == "nvidia" else self._amd_dl), index

    def __dlpack_device__(self) -> tuple[int, int]:
        """(device type, device id): kDLROCM / kDLCUDA; kDLCPU on the stub and for pinned memory."""
        return self._dl_device()

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule of this buffer as 1-D ``uint8`` (see `TypedBuffer.__dlpack__`)."""
        from . import _dlpack
        return _dlpack.export(self, np.dtype(np.uint8), (self._nbytes,), stream=stream,
                              max_version=max_version, dl_device=dl_device, copy=copy)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3 as 1-D ``uint8``, on every backend."""
        return _cuda_array_interface(self, np.dtype(np.uint8), (self._nbytes,))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(buf)``: a zero-copy 1-D ``uint8`` view of host-accessible memory
        (it keeps the memory alive as `HostBuffer.numpy` does); ``TypeError`` for
        device memory."""
        return _as_array(_numpy_view(self, np.uint8, None), dtype, copy)

    def __buffer__(self, flags: int) -> memoryview:
        """The buffer protocol (Python 3.12+): a writable byte view of host-accessible
        memory, holding it as `numpy` does; ``TypeError`` for device memory."""
        return memoryview(_numpy_view(self, np.uint8, None))  # type: ignore[arg-type]  # 3.12's Buffer


class DeviceBuffer(Buffer):
    """Device memory (``hipMalloc``, or ``hipMallocAsync`` with a stream)."""

    __slots__ = ()

    @classmethod
    def _allocate(cls, ctx: Any, nbytes: Any, stream: Any) -> DeviceBuffer:
        call = "Context.alloc"
        n = _size(nbytes, call)
        if ctx._is_host:
            raise _api.invalid(call, "device memory belongs to one device; the host context "
                                     "has them all: use Device(i).context.alloc(...)")
        index = ctx._device_index()
        a = api()
        out = a.ffi.new("void **")
        if stream is None:
            with ctx._devices[0]._reset_lock:   # tracked before a reset can free it
                st = a.lib.hipMalloc(out, n)
                if st:
                    raise hip_error(st, "hipMalloc")
                ptr = _api.address(out[0])
                return cls._adopt(ptr, n, ctx, (_free, "hipFree", ptr))
        s = _stream_of(stream)
        sh = s._require_open()
        if s._dev_index != index:
            raise _api.invalid(call, f"the stream is on Device {s._dev_index}, the context on "
                                     f"Device {index}")
        with ctx._devices[0]._reset_lock:
            st = a.lib.hipMallocAsync(out, n, sh)
            if st:
                raise hip_error(st, "hipMallocAsync")
            ptr = _api.address(out[0])
            return cls._adopt(ptr, n, ctx, (_free, "hipFree", ptr), (_free_async, ptr))


class HostBuffer(Buffer):
    """Pinned host memory (``hipHostMalloc``); ``numpy()`` views it without copying."""

    __slots__ = ()
    _host_accessible = True

    @classmethod
    def _allocate(cls, ctx: Any, nbytes: Any, flags: int) -> HostBuffer:
        buf: HostBuffer = cls._allocate_flags(ctx, nbytes, flags, "hipHostMalloc", "hipHostFree",
                                              "Context.alloc_host")
        return buf

    def numpy(self, dtype: Any = np.uint8, shape: Any = None) -> np.ndarray:
        """A writable numpy array over this memory, no copy.

        The array keeps the memory alive: closing the buffer while it lives
        only marks the buffer closed, and the memory is freed with the array.
        """
        return _numpy_view(self, dtype, shape)


class ManagedBuffer(Buffer):
    """Managed (unified) memory (``hipMallocManaged``): device and host can both use it.

    ``numpy()`` views it on the host; synchronize the work using it first.
    """

    __slots__ = ()
    _host_accessible = True
    _nv_dl = _api.KDL_CUDA_MANAGED

    @classmethod
    def _allocate(cls, ctx: Any, nbytes: Any, flags: int) -> ManagedBuffer:
        buf: ManagedBuffer = cls._allocate_flags(ctx, nbytes, flags, "hipMallocManaged", "hipFree",
                                                 "Context.alloc_managed")
        return buf

    def numpy(self, dtype: Any = np.uint8, shape: Any = None) -> np.ndarray:
        """A writable numpy array over this memory, no copy (see `HostBuffer.numpy`)."""
        return _numpy_view(self, dtype, shape)


# ---- helpers -----------------------------------------------------------------------

def last_stream(buf: Buffer) -> Any:
    """The open stream that last enqueued work on ``buf``, or None."""
    ref = buf._last
    s = ref() if ref is not None else None
    return s if s is not None and s._h is not None else None


def _fill_pattern(value: Any, nbytes: int, call: str) -> tuple[int, int]:
    """(element width, pattern) of a fill value: an int 0..255 fills bytes, a 1- or
    4-byte numpy scalar elements of its size (``nbytes`` a multiple of 4 for those)."""
    if type(value) is int:
        if not 0 <= value <= 255:
            raise _api.invalid(call, f"{value} is not a byte (0..255); for a 32-bit pattern "
                                     f"pass np.uint32({value}) or np.int32({value})")
        return 1, value
    if isinstance(value, np.generic) and value.dtype.itemsize in (1, 4) \
            and value.dtype.kind in "iufb":
        width = value.dtype.itemsize
        if width == 4 and nbytes % 4:
            raise _api.invalid(call, f"a 32-bit fill needs a multiple of 4 bytes, not {nbytes}")
        return width, int.from_bytes(value.tobytes(), "little")
    raise TypeError(f"{call}: expected an int 0..255 or a 1- or 4-byte numpy scalar, "
                    f"not {type(value).__name__}")


def _on_null(index: int, fn: Callable[..., int], *args: Any) -> int:
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
    null = _null_of(index)
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


def _null_of(index: int) -> Any:
    """The null stream wrapper of device ``index`` (-1: the current device), if one exists."""
    if index < 0:
        index = getattr(_api._tls, "device", -1)
        if index < 0:
            return None
    dev = made_device(index)
    null = dev._null if dev is not None else None
    return null if null is not None and null._h is not None else None


_void_cache: dict[int, Any] = {}


def _stream_of(stream: Any) -> Stream:
    """``stream`` as a `Stream` (`as_stream`)."""
    if type(stream) is Stream:
        return stream
    return as_stream(stream)


_devptr_is_int: bool | None = None


def _devptr(address: int) -> Any:
    """``address`` as a ``hipDeviceptr_t``: ``void *`` on AMD, an integer on NVIDIA."""
    global _devptr_is_int
    if _devptr_is_int is None:
        _devptr_is_int = api().ffi.typeof("hipDeviceptr_t").kind == "primitive"
    return address if _devptr_is_int else _void(address)


def _void(address: int) -> Any:
    """``address`` as a ``void *`` (small cache: buffers are copied from again and again)."""
    p = _void_cache.get(address)
    if p is None:
        if len(_void_cache) > 4096:
            _void_cache.clear()
        p = _void_cache[address] = api().ffi.cast("void *", address)
    return p


def _endpoint(obj: Any, writable: bool, call: str) -> tuple[int, int, Any]:
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


def _memcpy_kind(src: Any, dst: Any) -> int:
    """The ``hipMemcpyKind`` of a copy between what `_other_end` keeps for each end
    (a buffer, a host array, what holds host memory, a foreign object): the explicit
    kind where both sides are known (`_ENDPOINT_SIDE`; host arrays are host memory),
    ``hipMemcpyDefault`` otherwise (managed memory, ``__cuda_array_interface__``
    objects).  On NVIDIA ``cudaMemcpyDefault`` costs a UVA lookup per copy; hipamd
    ignores the kind for pointers it knows.  The compiled copy's ``memcpy_kind``
    (rocpy/_native/hot/hot_calls.c) is this rule over the same table."""
    a, b = _side(src), _side(dst)
    return _DEFAULT_KIND if a < 0 or b < 0 else a * 2 + b


def _side(end: Any) -> int:
    t = type(end)
    side = _ENDPOINT_SIDE.get(t)
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


def _copy_async(buf: Buffer, other: Any, to_other: bool, stream: Any) -> bool:
    """The compiled copy between a rocpy buffer and another or a host array (numpy,
    bytes, bytearray, memoryview) on a ready `Stream` (``rocpy._hot.copy_async``); False,
    having done nothing, for anything else or where the compiled path is off
    (`_copy_with` then does it, and raises what is wrong).  Bound at the first call."""
    _bind_copy_async()
    return _copy_async(buf, other, to_other, stream)


def _bind_copy_async() -> None:
    """Bind `_copy_async` (and register the types the compiled copy takes)."""
    global _copy_async
    from .._hotpath import module
    hot = module()
    if hot is None:
        # rebinds itself at the first call
        _copy_async = _not_compiled  # type: ignore[assignment]
        return
    if api().lib.hipMemcpyDefault != _DEFAULT_KIND:  # pragma: no cover - a header change
        raise RuntimeError("hipMemcpyDefault is not 4 in this backend's headers")
    from .stream import Stream as stream_type
    a = api()
    lib = a.lib
    if (lib.hipMemcpyHostToHost, lib.hipMemcpyHostToDevice, lib.hipMemcpyDeviceToHost,
            lib.hipMemcpyDeviceToDevice) != (0, 1, 2, 3):  # pragma: no cover - a header change
        raise RuntimeError("hipMemcpyKind is not HtoH 0, HtoD 1, DtoH 2, DtoD 3 here")
    hot.register_copy_types(stream_type, _ENDPOINT_SIDE, np.ndarray, _BYTES_TYPES)
    hot.register_sync_copy(_calls._address("hipMemcpy"), _api._tls, _wait.captures,
                           _ENDPOINT_SIDE)
    fn = int(a.ffi.cast("uintptr_t", a.ffi.addressof(a.lib, "hipMemcpyAsync")))
    _copy_async = functools.partial(hot.copy_async, fn)


def _not_compiled(*args: Any) -> bool:
    return False


def _copy(dst: int, src: int, n: int, stream: Any, buf: Buffer, other: Any, kind: int) -> None:
    if n == 0:
        return
    if stream is not None:
        s = stream if type(stream) is Stream else _stream_of(stream)
        lane = s._lane
        if lane.ready < 0 or s._h is None or lane.errors.pending:
            s._enter()
        st = _memcpy_async(dst, src, n, kind, lane.addr)
        if st:
            raise hip_error(st, "hipMemcpyAsync")
        w = buf._last = s._weak
        if type(other) in _BUFFER_TYPES:
            other._last = w
        s._hold((buf, other))
        return
    lib = api().lib
    index = buf._dev_index
    if index < 0 and isinstance(other, Buffer):
        index = other._dev_index
    st = _on_null(index, lib.hipMemcpy, _void(dst), _void(src), n, kind)
    if st:
        raise hip_error(st, "hipMemcpy")


#: the side of each buffer type's memory in a copy: 1 device, 0 host, -1 either (managed:
#: hipMemcpyDefault lets the runtime decide); what `_memcpy_kind` and the compiled copy read
_ENDPOINT_SIDE: dict[type, int] = {DeviceBuffer: 1, HostBuffer: 0, ManagedBuffer: -1}
_BUFFER_TYPES = frozenset(_ENDPOINT_SIDE)
#: host ends the compiled copy takes (exact types; through a memoryview, as `_endpoint`)
_BYTES_TYPES = frozenset({bytes, bytearray, memoryview})

__all__ = ["Buffer", "DeviceBuffer", "HostBuffer", "ManagedBuffer", "TypedBuffer"]
