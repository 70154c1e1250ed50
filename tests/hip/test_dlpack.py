"""DLPack: export (legacy and versioned capsules), import, stream ordering, lifetimes.

On the stub device memory is host memory and is exported as kDLCPU, so numpy
consumes it; the device import path is exercised by pretending the buffers are
kDLROCM memory (the stub's memory is readable either way).
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.hip import _api, _dlpack
from rocpy.hip.memory import Buffer


class LegacyOnly:
    """A producer wrapper that answers without ``max_version`` (pre-1.0 consumers' view)."""

    def __init__(self, obj):
        self.obj = obj

    def __dlpack__(self, stream=None):
        return self.obj.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.obj.__dlpack_device__()


@pytest.fixture
def filled(dev):
    buf = dev.context.alloc(64 * 4)
    buf.copy_from(np.arange(64, dtype=np.float32))
    yield buf
    buf.close()


@pytest.mark.stub_only
def test_stub_memory_is_cpu_memory(dev, filled):
    assert filled.__dlpack_device__() == (_api.KDL_CPU, 0)
    assert hip.Context.host().alloc_host(8).__dlpack_device__() == (_api.KDL_CPU, 0)


@pytest.mark.stub_only
@pytest.mark.parametrize("legacy", [False, True])
def test_numpy_consumes_typed_buffers(filled, legacy):
    t = filled.typed(np.float32, (8, 8))
    a = np.from_dlpack(LegacyOnly(t) if legacy else t)
    assert a.shape == (8, 8) and a.dtype == np.float32
    assert a.ctypes.data == filled.ptr                 # zero copy
    assert np.array_equal(a.ravel(), np.arange(64))
    assert _dlpack.live_exports() == 1
    del a
    gc.collect()
    assert _dlpack.live_exports() == 0


@pytest.mark.stub_only
def test_raw_buffer_exports_bytes(filled):
    a = np.from_dlpack(filled)
    assert a.dtype == np.uint8 and a.shape == (256,)
    assert np.array_equal(a.view(np.float32), np.arange(64))


@pytest.mark.stub_only
def test_export_keeps_memory_after_close(dev, allocations):
    base = allocations()
    buf = dev.context.alloc(16)
    buf.copy_from(np.arange(4, dtype=np.uint32))
    a = np.from_dlpack(buf.typed(np.uint32))
    buf.close()
    assert allocations() == base + 1 and a.sum() == 6
    del a
    gc.collect()
    rocpy.debug.collect()
    assert allocations() == base


def test_unconsumed_capsules_are_deleted(filled):
    for max_version in (None, (1, 0)):
        cap = filled.__dlpack__(max_version=max_version)
        assert _dlpack.live_exports() == 1
        del cap
        gc.collect()
        assert _dlpack.live_exports() == 0


def test_versioned_capsule_fields(filled):
    cap = filled.typed(np.int16).__dlpack__(max_version=(1, 3))
    assert _dlpack._capsule_is_valid(cap, b"dltensor_versioned")
    mt = _dlpack._ffi.cast("DLManagedTensorVersioned *", _dlpack._capsule_get(cap,
                                                                             b"dltensor_versioned"))
    assert (mt.version.major, mt.version.minor) == (1, 0) and mt.flags == 0
    t = mt.dl_tensor
    assert (t.dtype.code, t.dtype.bits, t.dtype.lanes) == (0, 16, 1)
    assert t.ndim == 1 and t.shape[0] == 128 and t.strides[0] == 1
    assert int(_dlpack._ffi.cast("uintptr_t", t.data)) == filled.ptr
    del cap, mt, t


def test_unsupported_dtype(filled):
    with pytest.raises(BufferError):
        filled.typed(np.dtype([("a", np.int32)])).__dlpack__()


@pytest.mark.stub_only
def test_copy_and_device_requests(filled):
    copy = np.from_dlpack(filled.typed(np.float32), copy=True)
    assert copy.ctypes.data != filled.ptr and np.array_equal(copy, np.arange(64))
    with pytest.raises(BufferError):
        filled.__dlpack__(dl_device=(_api.KDL_ROCM, 0))


def test_host_copy_of_device_memory(filled, monkeypatch):
    monkeypatch.setattr(Buffer, "_dl_device", lambda self: (_api.KDL_ROCM, 0))
    with pytest.raises(BufferError):
        filled.__dlpack__(dl_device=(_api.KDL_CPU, 0), copy=False)
    cap = filled.typed(np.float32).__dlpack__(dl_device=(_api.KDL_CPU, 0), max_version=(1, 0))
    assert _dlpack._capsule_is_valid(cap, b"dltensor_versioned")   # numpy's copy
    assert _dlpack.live_exports() == 0
    del cap


def test_stream_ordering_on_export(dev, spin):
    buf = dev.context.alloc(4096)
    with dev.create_stream(non_blocking=True) as s:
        spin(buf, 1, 50, stream=s)
        buf.fill(np.uint32(4), stream=s)          # rocpy remembers the buffer's last stream
        a = np.from_dlpack(buf.typed(np.uint32)) if rocpy.backend().name == "stub" else None
        if a is not None:
            assert (a == 4).all()                 # a CPU consumer: the producer synchronized
        del a


@pytest.mark.stub_only
@pytest.mark.parametrize("versioned", [True, False])
def test_device_import_path(dev, filled, monkeypatch, versioned):
    # pretend this backend's memory is kDLROCM: rocpy's own export then comes back
    # through the device import path
    monkeypatch.setattr(Buffer, "_dl_device", lambda self: (_api.KDL_ROCM, self._ctx.device.index))
    monkeypatch.setattr(_dlpack, "_our_device_types", lambda: {_api.KDL_ROCM: "DeviceBuffer"})
    producer = filled.typed(np.float32, (4, 16))
    t = hip.from_dlpack(producer if versioned else LegacyOnly(producer))
    assert isinstance(t, hip.TypedBuffer) and isinstance(t.buffer, hip.DeviceBuffer)
    assert t.shape == (4, 16) and t.dtype == np.float32 and t.ptr == filled.ptr
    out = np.empty(64, np.float32)
    t.buffer.copy_to(out)
    assert np.array_equal(out, np.arange(64))
    assert _dlpack.live_exports() == 1 and rocpy.debug.live_objects()["DeviceBuffer"] == 2
    t.buffer.close()                               # calls the producer's deleter
    assert _dlpack.live_exports() == 0


@pytest.mark.stub_only
def test_import_refuses_foreign_devices_and_used_capsules(filled, monkeypatch):
    cap = filled.__dlpack__()
    with pytest.raises(BufferError):              # kDLCPU is not stub device memory
        _dlpack.import_capsule(cap)
    with pytest.raises(BufferError):              # renamed: consumed
        _dlpack.import_capsule(cap)
    del cap
    gc.collect()
    assert _dlpack.live_exports() == 0


def test_from_dlpack_of_host_producers_is_numpy(filled):
    a = np.arange(5)
    assert hip.from_dlpack(a) is not a and np.array_equal(hip.from_dlpack(a), a)
    with pytest.raises(TypeError):
        hip.from_dlpack(object())
