"""`TypedBuffer`: a buffer seen as a typed, shaped array (for DLPack, numpy, CUDA's interface).

::

    t = buf.typed(np.float32, (64, 64))
    np.from_dlpack(t)             # the stub, pinned and managed memory: a zero-copy numpy array
    torch.from_dlpack(t)          # device memory on amd (kDLROCM) and nvidia (kDLCUDA)

Numpy arrays and DLPack consumers hold a `rocpy._hostview.HostView` of the
buffer, so that closing it while they use it only marks it closed and the
memory is freed after them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import _args
from .._hostview import HostView as _HostView
from . import _api
from ._api import api

if TYPE_CHECKING:
    from .memory import Buffer


class TypedBuffer:
    """A buffer seen as a C-ordered array of ``dtype`` and ``shape``.

    Made by ``buf.typed(dtype, shape)`` and by `rocpy.hip.from_dlpack` for
    device memory.  Exposes ``__dlpack__``, ``__dlpack_device__`` and, on
    nvidia, ``__cuda_array_interface__``; copies go through the buffer.
    """

    __slots__ = ("buffer", "dtype", "shape", "readonly", "__weakref__")

    def __init__(self, buffer: Buffer, dtype: Any, shape: Any = None, *,
                 readonly: bool = False) -> None:
        dt = _args.dtype(dtype)      # TypeError: object, zero-size, not a dtype
        n = buffer.nbytes
        call = "Buffer.typed"
        if shape is None:
            if n % dt.itemsize:
                raise _api.invalid(call, f"{n} bytes are not a whole number of {dt} "
                                         f"({dt.itemsize} bytes)")
            shape = (n // dt.itemsize,)
        shape = _args.integers(shape, "shape")   # an int, a sequence, a numpy array
        count = 1
        for d in shape:
            if d < 0:
                raise _api.invalid(call, f"negative dimension in shape {shape}")
            count *= d
        if count * dt.itemsize != n:
            raise _api.invalid(call, f"shape {shape} of {dt} is {count * dt.itemsize} bytes, "
                                     f"the buffer {n}")
        self.buffer: Buffer = buffer
        self.dtype: np.dtype[Any] = dt
        self.shape: Any = shape
        self.readonly: bool = readonly

    @property
    def ptr(self) -> int:
        """The address of the first element."""
        return self.buffer.ptr

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return self.buffer.nbytes

    def __repr__(self) -> str:
        return f"<TypedBuffer {self.dtype}{list(self.shape)} of {self.buffer!r}>"

    def numpy(self) -> np.ndarray:
        """A numpy view (host-accessible memory: pinned or managed; device memory on the stub)."""
        return _numpy_view(self.buffer, self.dtype, self.shape, force=api().name == "stub")

    def copy_from(self, src: Any, stream: Any = None) -> None:
        """`Buffer.copy_from` on the underlying buffer."""
        self.buffer.copy_from(src, stream)

    def copy_to(self, dst: Any, stream: Any = None) -> Any:
        """`Buffer.copy_to` on the underlying buffer."""
        return self.buffer.copy_to(dst, stream)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(device type, device id); see `Buffer.__dlpack_device__`."""
        return self.buffer._dl_device()

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """A DLPack capsule (DLPack 1.0 protocol).

        ``stream``: the consumer's stream (``None``: the legacy default
        stream; ``-1``: no ordering); work rocpy last enqueued on this buffer
        (copies and fills) is ordered before it.  ``max_version`` of (1, x)
        or later gives a versioned capsule, else a legacy one.
        ``dl_device``: only this buffer's device, or ``(kDLCPU, 0)`` with
        ``copy=True`` for a host copy.  ``copy=True`` always exports a copy.
        """
        from . import _dlpack
        return _dlpack.export(self.buffer, self.dtype, self.shape, stream=stream,
                              max_version=max_version, dl_device=dl_device, copy=copy,
                              readonly=self.readonly)

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA Array Interface v3, on every backend (``stream``: see `rocpy.hip._cai`)."""
        return _cuda_array_interface(self.buffer, self.dtype, self.shape, self.readonly)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(typed)``: a zero-copy view of host-accessible memory (pinned,
        managed) with this dtype and shape; device memory raises ``TypeError``."""
        return _as_array(_numpy_view(self.buffer, self.dtype, self.shape), dtype, copy)



def _as_array(view: np.ndarray, dtype: Any, copy: bool | None) -> np.ndarray:
    """numpy's ``__array__(dtype, copy)`` contract over a zero-copy ``view``."""
    if dtype is not None and np.dtype(dtype) != view.dtype:
        if copy is False:
            raise ValueError(f"a {view.dtype} buffer cannot be viewed as {np.dtype(dtype)} "
                             "without a copy")
        return view.astype(dtype)
    return view.copy() if copy else view


def _numpy_view(buffer: Buffer, dtype: Any, shape: Any, force: bool = False) -> np.ndarray:
    buffer._require_open()            # a closed buffer says so first, whatever its kind
    if not (buffer._host_accessible or force):
        raise TypeError(f"a {type(buffer).__name__} is not host-accessible: copy it to the host "
                        "(copy_to) instead")
    typed = TypedBuffer(buffer, dtype, shape)
    iface = {"data": (buffer.ptr, False), "shape": typed.shape, "typestr": typed.dtype.str,
             "descr": typed.dtype.descr, "version": 3}
    if typed.dtype.fields is None:
        del iface["descr"]
    return np.asarray(_HostView(buffer, iface))


def _cuda_array_interface(buffer: Buffer, dtype: np.dtype, shape: tuple[int, ...],
                          readonly: bool = False) -> dict[str, Any]:
    """CUDA Array Interface v3 of ``buffer``, on every backend (`rocpy.hip._cai`)."""
    from . import _cai
    return _cai.export(buffer, dtype, shape, readonly)


__all__ = ["TypedBuffer"]
