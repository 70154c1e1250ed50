"""DLPack 1.0 capsules, made and consumed without a compiler (cffi ABI mode + ctypes).

Export: a ``DLManagedTensorVersioned`` (capsule ``"dltensor_versioned"``)
when the consumer passes ``max_version`` with major 1 or more, else a legacy
``DLManagedTensor`` (``"dltensor"``).  The structs live in a registry keyed by
``manager_ctx`` together with a borrowed child handle of the buffer, so the
memory is never freed while a consumer holds it: the consumer's call of the
deleter (or the capsule's destructor, if nobody consumed it) drops the entry.
Deleters and the destructor are C (``_native/fast/dlpack.c``): they queue the
drop for the dispatcher thread and never run Python, so a consumer calling
them while an exception propagates is harmless.

Import (`from_dlpack`): host producers go to numpy; device producers of this
backend's device type become a `TypedBuffer` over a `DeviceBuffer` whose
release calls the producer's deleter.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from typing import Any

import cffi
import numpy as np

from . import _api
from ._api import api, use_device

_ffi: Any = cffi.FFI()   # Any: types-cffi does not model struct fields of cdata
_ffi.cdef("""
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
typedef struct {
    void *data; DLDevice device; int32_t ndim; DLDataType dtype;
    int64_t *shape; int64_t *strides; uint64_t byte_offset;
} DLTensor;
typedef struct DLManagedTensor {
    DLTensor dl_tensor; void *manager_ctx; void (*deleter)(struct DLManagedTensor *);
} DLManagedTensor;
typedef struct DLManagedTensorVersioned {
    DLPackVersion version; void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *);
    uint64_t flags; DLTensor dl_tensor;
} DLManagedTensorVersioned;
""")

#: The DLPack version rocpy produces.
VERSION = (1, 0)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED_LEGACY = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"

_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 4, 5, 6
_KIND_CODES = {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT, "c": _DL_COMPLEX, "b": _DL_BOOL}
_CODE_KINDS = {v: k for k, v in _KIND_CODES.items()}

_lock = threading.Lock()
_exports: dict[int, tuple[Any, ...]] = {}
_keys = itertools.count(1)


def _pyapi(name: str, restype: Any, *argtypes: Any) -> Any:
    fn = ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))
    return fn


_capsule_new = _pyapi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                      ctypes.c_void_p)
_capsule_is_valid = _pyapi("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_get = _pyapi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _pyapi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)


def _drop(key: int) -> None:
    with _lock:
        entry = _exports.pop(key, None)
    del entry  # the borrowed view dies here: the buffer may now be freed


def flush_drops() -> None:
    """Wait until the deleter calls queued so far have dropped their exports."""
    if _exports:
        from ._callbacks import _dispatcher_barrier
        _dispatcher_barrier()


class _Native:
    """The C deleters and capsule destructor (``_native/fast/dlpack.h``), bound once.

    A consumer may call a deleter while an exception propagates; a Python
    deleter would run then.  The C ones only push the export's key on the
    call queue; the dispatcher thread runs `_drop`.
    """

    legacy: Any = None
    versioned: Any = None
    destructor: int = 0
    _lock = threading.Lock()

    @classmethod
    def bind(cls) -> type[_Native]:
        if cls.destructor:
            return cls
        with cls._lock:
            if not cls.destructor:
                from .._dispatcher import dispatcher
                a = api()
                token = dispatcher().register(lambda key, _b: _drop(key), once=False)
                a.lib.rocpy_dlpack_set_token(token)

                def address(name: str) -> int:
                    return int(a.ffi.cast("uintptr_t", a.ffi.addressof(a.lib, name)))
                cls.legacy = _ffi.cast("void(*)(DLManagedTensor *)",
                                       address("rocpy_dlpack_deleter"))
                cls.versioned = _ffi.cast("void(*)(DLManagedTensorVersioned *)",
                                          address("rocpy_dlpack_deleter_versioned"))
                cls.destructor = address("rocpy_dlpack_capsule_destructor")
        return cls


def dl_dtype(dtype: np.dtype) -> tuple[int, int]:
    """(DLDataTypeCode, bits) of a numpy dtype; BufferError for what DLPack cannot say."""
    code = _KIND_CODES.get(dtype.kind)
    if code is None or dtype.fields is not None or dtype.subdtype is not None:
        raise BufferError(f"DLPack has no type for numpy {dtype}")
    return code, dtype.itemsize * 8


def _np_dtype(code: int, bits: int, lanes: int) -> np.dtype:
    kind = _CODE_KINDS.get(code)
    if lanes != 1 or kind is None or bits % 8:
        raise BufferError(f"unsupported DLPack dtype (code {code}, {bits} bits, {lanes} lanes)")
    if kind == "b":
        if bits != 8:
            raise BufferError(f"unsupported DLPack bool of {bits} bits")
        return np.dtype(np.bool_)
    return np.dtype(f"{kind}{bits // 8}")


def live_exports() -> int:
    """Capsules made and not yet deleted (for tests), once queued deleter calls ran."""
    flush_drops()
    with _lock:
        return len(_exports)


# ---- export -------------------------------------------------------------------------

def _order(buffer: Any, stream: Any, dev_type: int, dev_id: int) -> None:
    """Make the consumer's stream see the work rocpy last enqueued on ``buffer``."""
    if stream == -1:
        return
    from ._stream_protocol import stream_handle
    protocol = None if stream is None or isinstance(stream, int) else stream_handle(stream)
    if not (stream is None or isinstance(stream, int) or protocol is not None) \
            or isinstance(stream, bool):
        raise BufferError(f"stream must be an int handle, None or -1, not {type(stream).__name__}")
    from .memory import last_stream
    last = last_stream(buffer)
    if last is None:
        return
    if dev_type == _api.KDL_CPU:
        last.sync()  # a CPU consumer reads at once
        return
    if stream is None:
        stream = 0 if api().name != "nvidia" else 1  # the legacy default stream
    if protocol is not None:
        stream = protocol           # stream_handle gives an int (checked above for the rest)
    if stream == last._stream_int():
        return
    a = api()
    marker = last.record(timing=False)
    try:
        use_device(dev_id)
        target = a.ffi.NULL if stream == 0 else a.ffi.cast("hipStream_t", stream)
        st = a.lib.hipStreamWaitEvent(target, marker._h, 0)
        if st:
            from ..errors import hip_error
            raise hip_error(st, "hipStreamWaitEvent")
    finally:
        marker.close()


def _settle(buffer: Any) -> None:
    """Wait for the work rocpy last enqueued on ``buffer`` (before a synchronous copy of it,
    which the legacy null stream does not order after a non-blocking stream)."""
    from .memory import last_stream
    last = last_stream(buffer)
    if last is not None:
        last.sync()


def export(buffer: Any, dtype: np.dtype, shape: tuple[int, ...], *, stream: Any,
           max_version: Any, dl_device: Any, copy: Any, readonly: bool = False) -> Any:
    """A DLPack capsule of ``buffer`` as ``dtype[shape]`` (see `TypedBuffer.__dlpack__`)."""
    from .memory import DeviceBuffer, HostBuffer, ManagedBuffer
    buffer._require_open()
    dev_type, dev_id = buffer._dl_device()
    versioned = max_version is not None and int(tuple(max_version)[0]) >= 1
    copied = False
    if dl_device is not None and tuple(dl_device) != (dev_type, dev_id):
        if tuple(dl_device)[:1] == (_api.KDL_CPU,) and copy is not False:
            _settle(buffer)
            array = np.empty(shape, dtype)
            buffer.copy_to(array.reshape(-1).view(np.uint8) if array.size else array)
            return array.__dlpack__(max_version=max_version, copy=False) if versioned \
                else array.__dlpack__()
        raise BufferError(f"this buffer is on DLPack device {(dev_type, dev_id)}; it cannot be "
                          f"exported to {tuple(dl_device)}"
                          + ("" if copy is not False else " without a copy"))
    if copy:
        ctx = buffer._ctx
        if isinstance(buffer, HostBuffer):
            twin = ctx.alloc_host(buffer.nbytes)
        elif isinstance(buffer, ManagedBuffer):
            twin = ctx.alloc_managed(buffer.nbytes)
        elif isinstance(buffer, DeviceBuffer):
            twin = ctx.alloc(buffer.nbytes)
        else:
            raise BufferError(f"cannot copy a {type(buffer).__name__}")
        _settle(buffer)
        twin.copy_from(buffer)
        buffer, copied = twin, True
    else:
        _order(buffer, stream, dev_type, dev_id)
    code, bits = dl_dtype(dtype)
    return _capsule(buffer, code, bits, shape, dtype.itemsize, dev_type, dev_id, versioned,
                    readonly, copied)


def _capsule(buffer: Any, code: int, bits: int, shape: tuple[int, ...], itemsize: int,
             dev_type: int, dev_id: int, versioned: bool, readonly: bool, copied: bool) -> Any:
    from .._hostview import HostView
    native = _Native.bind()
    view = HostView(buffer)  # a child: the buffer's memory outlives the capsule
    ndim = len(shape)
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    strides.reverse()
    shape_arr = _ffi.new("int64_t[]", list(shape) or [0])
    strides_arr = _ffi.new("int64_t[]", strides or [0])
    if versioned:
        mt = _ffi.new("DLManagedTensorVersioned *")
        mt.version.major, mt.version.minor = VERSION
        mt.flags = (FLAG_READ_ONLY if readonly else 0) | (FLAG_IS_COPIED if copied else 0)
        mt.deleter = native.versioned
        name = _VERSIONED
    else:
        mt = _ffi.new("DLManagedTensor *")
        mt.deleter = native.legacy
        name = _LEGACY
    t = mt.dl_tensor
    t.data = _ffi.cast("void *", buffer.ptr)
    t.device.device_type = dev_type
    t.device.device_id = dev_id
    t.ndim = ndim
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = shape_arr
    t.strides = strides_arr
    t.byte_offset = 0
    key = next(_keys)
    mt.manager_ctx = _ffi.cast("void *", key)
    with _lock:
        _exports[key] = (mt, shape_arr, strides_arr, view, buffer)
    try:
        return _capsule_new(int(_ffi.cast("uintptr_t", mt)), name, native.destructor)
    except BaseException:
        _drop(key)
        raise


# ---- import -------------------------------------------------------------------------

def _our_device_types() -> dict[int, str]:
    """DLPack device types this backend's memory has, to the buffer class to use."""
    name = api().name
    if name == "amd":
        return {_api.KDL_ROCM: "DeviceBuffer"}
    if name == "nvidia":
        return {_api.KDL_CUDA: "DeviceBuffer", _api.KDL_CUDA_MANAGED: "ManagedBuffer"}
    return {}  # the stub has no device memory to import


def _call_deleter(address: int, versioned: bool) -> None:
    """Release recipe of an imported tensor: the producer's deleter."""
    mt = _ffi.cast("DLManagedTensorVersioned *" if versioned else "DLManagedTensor *", address)
    if mt.deleter != _ffi.NULL:
        mt.deleter(mt)


def import_capsule(capsule: Any) -> Any:
    """Consume a device capsule of this backend's type: a `TypedBuffer` owning it."""
    from . import memory
    from .device import Device
    if _capsule_is_valid(capsule, _VERSIONED):
        used, versioned = _USED_VERSIONED, True
        mt = _ffi.cast("DLManagedTensorVersioned *", _capsule_get(capsule, _VERSIONED))
    elif _capsule_is_valid(capsule, _LEGACY):
        used, versioned = _USED_LEGACY, False
        mt = _ffi.cast("DLManagedTensor *", _capsule_get(capsule, _LEGACY))
    else:
        raise BufferError("not a DLPack capsule, or one already consumed")
    if _capsule_set_name(capsule, used) != 0:
        raise BufferError("cannot mark the DLPack capsule as consumed")
    address = int(_ffi.cast("uintptr_t", mt))
    try:
        if versioned and mt.version.major != VERSION[0]:
            raise BufferError(f"DLPack {mt.version.major}.{mt.version.minor} is not supported "
                              f"(rocpy reads {VERSION[0]}.x)")
        t = mt.dl_tensor
        kinds = _our_device_types()
        cls_name = kinds.get(t.device.device_type)
        if cls_name is None:
            raise BufferError(f"DLPack device type {t.device.device_type} is not memory of the "
                              f"{api().name} backend")
        dtype = _np_dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
        shape = tuple(t.shape[i] for i in range(t.ndim))
        if t.strides != _ffi.NULL and t.ndim:
            step = 1
            for i in reversed(range(t.ndim)):
                if shape[i] != 1 and t.strides[i] != step:
                    raise BufferError("only C-contiguous DLPack tensors can be imported")
                step *= shape[i]
        count = 1
        for d in shape:
            count *= d
        ptr = int(_ffi.cast("uintptr_t", t.data)) + int(t.byte_offset)
        readonly = bool(versioned and mt.flags & FLAG_READ_ONLY)
        ctx = Device(int(t.device.device_id)).context
    except BaseException:
        _call_deleter(address, versioned)
        raise
    cls = getattr(memory, cls_name)
    buf = cls._adopt(ptr, count * dtype.itemsize, ctx, (_call_deleter, address, versioned))
    return memory.TypedBuffer(buf, dtype, shape, readonly=readonly)


def from_dlpack(obj: Any, stream: Any = None) -> Any:
    """Take a DLPack producer's data without copying.

    Host memory (``kDLCPU``) comes back as a numpy array (``np.from_dlpack``);
    device memory of this backend (``kDLROCM`` on amd; ``kDLCUDA`` and
    ``kDLCUDAManaged`` on nvidia) as a `TypedBuffer` over a borrowed-memory
    buffer that calls the producer's deleter when closed or collected.
    ``stream``: where rocpy will use the data (a `Stream`; default the legacy
    null stream); the producer orders its work before it.  A capsule may be
    passed directly.
    """
    if type(obj).__name__ == "PyCapsule":
        return import_capsule(obj)
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"{type(obj).__name__} does not implement __dlpack__")
    dev_type, _dev_id = obj.__dlpack_device__()
    if dev_type not in _our_device_types():
        return np.from_dlpack(obj)
    if stream is None:
        handle: Any = 1 if api().name == "nvidia" else 0
    else:
        from .stream import as_stream
        s = as_stream(stream)
        handle = s._stream_int()
        if handle == 0 and api().name == "nvidia":
            handle = 1
    try:
        capsule = obj.__dlpack__(stream=handle, max_version=VERSION)
    except TypeError:
        capsule = obj.__dlpack__(stream=handle)
    return import_capsule(capsule)
