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

import operator
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from .._handle import Handle
from ..errors import hip_error
from .. import _args
from . import _api, _copy
from ._api import api
from ._copy import devptr as _devptr, stream_of as _stream_of, void as _void
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
        if stream is None or not _copy.copy_async(self, src, False, stream):
            _copy.copy_with(self, src, False, stream)

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
        if stream is None or not _copy.copy_async(self, dst, True, stream):
            _copy.copy_with(self, dst, True, stream)
        return dst

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
                st = _copy.on_null(self._dev_index, lib.hipMemsetD32, p, pattern, n // 4)
            else:
                st = _copy.on_null(self._dev_index, lib.hipMemset, p, pattern, n)
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


_copy.register_buffers(Buffer, {DeviceBuffer: 1, HostBuffer: 0, ManagedBuffer: -1})

__all__ = ["Buffer", "DeviceBuffer", "HostBuffer", "ManagedBuffer", "TypedBuffer"]
