"""rocpy.hip buffers (memory.py): views, lifetimes (stream-ordered included), numpy views, copies.

Named test_buffers.py: tests/hsa/test_memory.py has the basename test_memory."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import rocpy
from rocpy import hip


def test_address_and_size(dev):
    buf = dev.context.alloc(4096)
    assert int(buf) == buf.ptr and buf.ptr % 256 == 0
    assert len(buf) == buf.nbytes == 4096 and not buf.is_view
    assert "4096 bytes" in repr(buf)
    buf.close()
    assert "closed" in repr(buf)


def test_views_share_memory_and_are_not_counted(dev):
    buf = dev.context.alloc(4096)
    v = buf[1024:2048]
    vv = v[512:]
    assert v.ptr == buf.ptr + 1024 and vv.ptr == buf.ptr + 1536 and vv.nbytes == 512
    assert v.is_view and type(v) is hip.DeviceBuffer
    assert rocpy.debug.live_objects() == {"DeviceBuffer": 1}
    assert buf[:].nbytes == 4096 and buf[4096:].nbytes == 0


@pytest.mark.stub_only
def test_view_keeps_parent_memory(dev, allocations):
    base = allocations()
    buf = dev.context.alloc(4096)
    view = buf[100:200]
    buf.close()                                  # deferred: a view lives
    assert buf.closed and allocations() == base + 1
    view.copy_from(bytes(100))                   # still valid memory
    del view
    rocpy.debug.collect()
    assert allocations() == base


@pytest.mark.stub_only
def test_collected_buffer_is_freed_by_the_reaper(dev, allocations):
    base = allocations()
    buf = dev.context.alloc(4096)
    ref = weakref.ref(buf)
    del buf
    gc.collect()
    assert ref() is None
    rocpy.debug.collect()
    assert allocations() == base


@pytest.mark.stub_only
def test_numpy_view_outlives_close(allocations):
    base = allocations()
    h = hip.Context.host().alloc_host(64)
    a = h.numpy(np.uint32)
    a[:] = 7
    h.close()
    assert allocations() == base + 1 and a.sum() == 7 * 16
    del a
    rocpy.debug.collect()
    assert allocations() == base


def test_numpy_views_of_host_and_managed(dev):
    h = dev.context.alloc_host(64)
    m = dev.context.alloc_managed(64)
    assert h.numpy(np.float32, (4, 4)).shape == (4, 4)
    m.numpy(np.uint8)[:] = 3
    assert m.typed(np.uint8).numpy().sum() == 192
    with pytest.raises(rocpy.InvalidValueError):
        h.numpy(np.float32, (5,))
    assert not hasattr(hip.DeviceBuffer, "numpy")
    d = dev.context.alloc(64)
    if rocpy.backend().name == "stub":          # stub memory is host memory (as DLPack says)
        assert d.typed(np.uint8).numpy().shape == (64,)
    else:
        with pytest.raises(TypeError, match="not host-accessible"):
            d.typed(np.uint8).numpy()
    h.close(), m.close(), d.close()


def test_typed_buffer_shapes(dev):
    buf = dev.context.alloc(48)
    t = buf.typed(np.float32, (3, 4))
    assert t.shape == (3, 4) and t.dtype == np.float32 and t.nbytes == 48 and t.ptr == buf.ptr
    assert buf.typed(np.float64).shape == (6,)
    for bad in ((np.float32, (5,)), (np.float32, (-1, -12))):
        with pytest.raises(rocpy.InvalidValueError):
            buf.typed(*bad)
    for bad in ("V0", object, [("a", "O")]):     # no size, or Python objects (issue 20)
        with pytest.raises(TypeError, match="dtype"):
            buf.typed(bad)
    with pytest.raises(rocpy.InvalidValueError):
        dev.context.alloc(6).typed(np.float32)
    buf.close()


@pytest.mark.stub_only
def test_close_in_stream_order_waits_for_the_stream(dev, spin, allocations):
    base = allocations()
    buf = dev.context.alloc(1 << 16)
    with dev.create_stream() as s:
        spin(buf, 1, 300, stream=s)
        buf.close(stream=s)                       # hipMalloc memory: deferred until s is done
        assert buf.closed and allocations() == base + 1
        s.sync()
        rocpy.debug.collect()
        assert allocations() == base


@pytest.mark.stub_only
def test_stream_ordered_allocation_uses_free_async(dev, spin, allocations):
    base = allocations()
    with dev.create_stream() as s:
        buf = dev.context.alloc(1 << 16, stream=s)
        spin(buf, 1, 200, stream=s)
        buf.close(stream=s)                       # hipFreeAsync: the stream frees it
        assert allocations() == base + 1
        s.sync()
        assert allocations() == base


@pytest.mark.stub_only
def test_stream_ordered_allocation_on_another_device_is_refused(run_script):
    # two simulated devices: a fresh process (the stub's device count is read once)
    out = run_script("""
        from rocpy import hip
        from rocpy.errors import HipInvalidValueError
        import rocpy.debug
        d0, d1 = hip.Device(0), hip.Device(1)
        with d0.create_stream() as s:
            try:
                d1.context.alloc(64, stream=s)
            except HipInvalidValueError as exc:
                print("refused", exc.status, "Device 0" in str(exc) and "Device 1" in str(exc))
            with d0.context.alloc(64, stream=s) as own:     # its own device's stream works
                own.close(stream=s)
            s.sync()
        rocpy.debug.collect()
        print("alive", rocpy.debug.live_objects())
    """, ROCPY_STUB_DEVICES="2")
    assert out.split("\n")[:2] == ["refused 1 True", "alive {}"]


@pytest.mark.stub_only
def test_buffer_used_by_a_running_copy_is_kept(dev, spin, allocations):
    base = allocations()
    dst = dev.context.alloc(1 << 16)
    with dev.create_stream() as s:
        src = dev.context.alloc(1 << 16)
        spin(src, 9, 200, stream=s)
        dst.copy_from(src, stream=s)
        del src                                   # the stream holds it until the copy is done
        gc.collect()
        assert allocations() == base + 2
        s.sync()
    out = np.empty(1 << 14, np.uint32)
    dst.copy_to(out)
    assert (out == 9).all()


def test_close_accepts_stream_protocol(dev):
    buf = dev.context.alloc(64)
    with dev.create_stream() as s:
        class P:
            def __hip_stream__(self):
                return s.__hip_stream__()
        buf.close(stream=P())
        assert buf.closed                   # closed at once; the memory goes when the stream passes
        s.sync()


def test_cuda_array_interface_on_every_backend(dev):
    """Exported everywhere (CuPy and AMD's bindings use it on ROCm; the nvidia-only
    export was what issue 24 reported as wrong): tests/hip/test_host_interop.py has more."""
    buf = dev.context.alloc(64)
    assert buf.__cuda_array_interface__["data"][0] == buf.ptr
    assert buf.typed(np.float32).__cuda_array_interface__["shape"] == (16,)
    buf.close()


def test_copy_between_typed_buffers(dev):
    a = dev.context.alloc(64).typed(np.float32)
    b = dev.context.alloc(64).typed(np.float32)
    a.copy_from(np.arange(16, dtype=np.float32))
    b.copy_from(a)
    out = b.copy_to(np.empty(16, np.float32))
    assert np.array_equal(out, np.arange(16))
