"""Host-memory interop (numpy, the buffer protocol) and the CUDA Array Interface,
export and import, with the v3 stream synchronization rules (issue 24)."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import rocpy
from rocpy import hip


class Foreign:
    """What CuPy/Numba arrays look like to rocpy: only a __cuda_array_interface__."""

    def __init__(self, ptr, n, stream=None, readonly=False, **extra):
        self.iface = {"shape": (n,), "typestr": "|u1", "data": (ptr, readonly), "version": 3,
                      **extra}
        if stream is not None:
            self.iface["stream"] = stream

    @property
    def __cuda_array_interface__(self):
        return self.iface


def test_numpy_views_host_accessible_memory_without_copy(dev):
    for make in (lambda: hip.Context.host().alloc_host(64), lambda: dev.context.alloc_managed(64)):
        buf = make()
        a = np.asarray(buf)
        assert a.dtype == np.uint8 and a.shape == (64,)
        a[:] = 5
        assert buf.numpy()[0] == 5                      # the same memory
        t = np.asarray(buf.typed(np.int32, (4, 4)))
        assert t.shape == (4, 4) and t.dtype == np.int32 and t[0, 0] == 0x05050505
        assert np.asarray(buf, dtype=np.float32)[0] == 5.0   # a dtype: values, copied
        with pytest.raises(ValueError, match="without a copy"):
            buf.__array__(np.float32, copy=False)
        c = buf.__array__(copy=True)
        c[0] = 9
        assert a[0] == 5
        buf.close()                       # the views keep the memory: freed after them
        assert a[1] == 5
        del a, t, c
    rocpy.debug.collect()


def test_device_memory_refuses_on_every_backend(dev):
    """Decided from what the memory is on a GPU, not from the stub's implementation:
    code that reads device memory through numpy on the stub would fail on hardware."""
    buf = dev.context.alloc(64)
    with pytest.raises(TypeError, match="DeviceBuffer is not host-accessible"):
        np.asarray(buf)
    with pytest.raises(TypeError, match="not host-accessible"):
        np.asarray(buf.typed(np.float32))
    with pytest.raises(TypeError):
        memoryview(buf)
    buf.close()
    with pytest.raises(rocpy.ClosedError, match="DeviceBuffer is closed"):
        np.asarray(buf)


def test_closed_host_buffer_refuses(dev):
    buf = hip.Context.host().alloc_host(16)
    buf.close()
    with pytest.raises(rocpy.ClosedError, match="HostBuffer is closed"):
        np.asarray(buf)
    with pytest.raises(rocpy.ClosedError, match="HostBuffer is closed"):
        buf.__buffer__(0)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ (PEP 688) needs Python 3.12")
def test_memoryview_on_312(dev):
    buf = hip.Context.host().alloc_host(16)
    m = memoryview(buf)
    m[0] = 7
    assert buf.numpy()[0] == 7 and m.nbytes == 16 and not m.readonly
    buf.close()
    assert m[0] == 7                     # the view holds the memory
    m.release()
    rocpy.debug.collect()


def test_buffer_protocol_method_on_any_python(dev):
    """Before 3.12 memoryview() cannot call __buffer__ of a Python class; the method
    itself is the same view (what 3.12's memoryview returns)."""
    buf = hip.Context.host().alloc_host(8)
    m = buf.__buffer__(0)
    m[1] = 3
    assert buf.numpy()[1] == 3
    dev_buf = dev.context.alloc(8)
    with pytest.raises(TypeError):
        dev_buf.__buffer__(0)
    m.release()
    buf.close()
    dev_buf.close()


def test_cai_export_has_the_pending_stream(dev):
    buf = dev.context.alloc(1 << 20)
    with dev.create_stream() as s:
        iface = buf.__cuda_array_interface__
        assert iface["version"] == 3 and iface["data"] == (buf.ptr, False)
        assert "stream" not in iface                # nothing enqueued on it
        buf.fill(1, stream=s)
        iface = buf.typed(np.float32).__cuda_array_interface__
        assert iface["stream"] == s.__hip_stream__()[1] and iface["typestr"] == "<f4"
        s.sync()
    buf.close()


def test_cai_import_in_copies(dev):
    src = dev.context.alloc(64)
    dst = dev.context.alloc(64)
    src.fill(4)
    dst.copy_from(Foreign(src.ptr, 64))
    out = bytearray(64)
    dst.copy_to(out)
    assert out == b"\x04" * 64
    dst.fill(0)
    dst.copy_to(Foreign(src.ptr, 64))           # as a destination
    src.copy_to(out)
    assert out == b"\x00" * 64
    with pytest.raises(rocpy.InvalidValueError, match="read-only"):
        dst.copy_to(Foreign(src.ptr, 64, readonly=True))
    with pytest.raises(rocpy.InvalidValueError, match="32 bytes"):
        dst.copy_from(Foreign(src.ptr, 32))
    with pytest.raises(rocpy.InvalidValueError, match="mask"):
        dst.copy_from(Foreign(src.ptr, 64, mask=object()))
    with pytest.raises(rocpy.InvalidValueError, match="C-contiguous"):
        dst.copy_from(Foreign(src.ptr, 8, strides=(8,)))
    with pytest.raises(rocpy.InvalidValueError, match="stream 0 is disallowed"):
        dst.copy_from(Foreign(src.ptr, 64, stream=0))
    with pytest.raises(TypeError, match="malformed"):
        dst.copy_from(Foreign(src.ptr, 64, typestr="nonsense"))
    bad = Foreign(src.ptr, 64)
    bad.iface = [1, 2]
    with pytest.raises(TypeError, match="not a dict"):
        dst.copy_from(bad)
    with pytest.raises(TypeError, match="not a stream handle"):
        dst.copy_from(Foreign(src.ptr, 64, stream="s"))
    src.close()
    dst.close()


def test_cai_import_waits_for_the_producer_stream(dev, spin):
    """The v3 rule: memory a producer wrote on its stream is read after that stream.
    The producer's stream is busy with a slow fill (about 50 ms); a copy on another
    stream must see the fill (without the wait it reads the zeros)."""
    src = dev.context.alloc(1 << 16)
    dst = dev.context.alloc(1 << 16)
    src.fill(0)
    with dev.create_stream() as producer, dev.create_stream() as consumer:
        spin(src, 9, 50, stream=producer)
        dst.copy_from(Foreign(src.ptr, 1 << 16, stream=producer.__hip_stream__()[1]),
                      stream=consumer)
        consumer.sync()
        out = np.zeros(1 << 14, np.uint32)
        dst.copy_to(out)
        assert (out == 9).all()
    src.close()
    dst.close()
