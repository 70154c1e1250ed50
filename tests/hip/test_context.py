"""rocpy.hip.Context: the primary (one device) and host (all devices) contexts."""
from __future__ import annotations

import pytest

import rocpy
from rocpy import hip


def test_primary_context(dev):
    ctx = dev.context
    assert ctx is dev.context
    assert ctx.devices == (dev,) and ctx.device is dev and not ctx.is_host
    assert "primary" in repr(ctx)
    assert not ctx.owned
    ctx.close()                                     # a no-op: HIP owns it
    assert not ctx.closed


def test_host_context(dev):
    host = hip.Context.host()
    assert host is hip.Context.host()
    assert host.is_host and host.devices == tuple(hip.Device(i) for i in range(hip.device_count()))
    assert host.device is hip.Device.current()
    assert "host" in repr(host)


def test_not_constructible():
    with pytest.raises(TypeError):
        hip.Context()


def test_allocation_kinds(dev):
    ctx = dev.context
    d, h, m = ctx.alloc(64), ctx.alloc_host(64), ctx.alloc_managed(64)
    assert isinstance(d, hip.DeviceBuffer) and isinstance(h, hip.HostBuffer)
    assert isinstance(m, hip.ManagedBuffer)
    for b in (d, h, m):
        assert b.context is ctx and b.device is dev and b.nbytes == 64
    assert rocpy.debug.live_objects() == {"DeviceBuffer": 1, "HostBuffer": 1, "ManagedBuffer": 1}
    for b in (d, h, m):
        b.close()


@pytest.mark.stub_only
def test_host_allocation_flags(dev):
    from rocpy.hip import ffi, lib
    flags = ffi.new("unsigned int *")
    portable = hip.Context.host().alloc_host(64)
    assert lib.hipHostGetFlags(flags, ffi.cast("void *", portable.ptr)) == 0
    assert flags[0] & lib.hipHostMallocPortable
    local = dev.context.alloc_host(64, mapped=True, write_combined=True)
    assert lib.hipHostGetFlags(flags, ffi.cast("void *", local.ptr)) == 0
    assert not flags[0] & lib.hipHostMallocPortable
    assert flags[0] & lib.hipHostMallocMapped and flags[0] & lib.hipHostMallocWriteCombined
    portable.close(), local.close()


def test_host_context_holds_managed_memory():
    m = hip.Context.host().alloc_managed(128, attach_host=True)
    assert m.context.is_host
    m.numpy()[:] = 1
    assert m.numpy().sum() == 128
    m.close()


def test_allocations_hold_their_context_and_devices(dev):
    buf = dev.context.alloc(64)
    assert buf._parents == (dev.context,)
    assert dev.context._parents == (dev,)
    buf.close()


def test_synchronize_waits_for_the_devices_work(dev, spin):
    buf = dev.context.alloc(4096)
    with dev.create_stream() as s:
        spin(buf, 7, 100, stream=s)
        assert not s.query()                  # 100 ms of work still running
        dev.context.sync()
        assert s.query()
    assert bytes(buf.copy_to(bytearray(4096)))[:8] == bytes([7, 0, 0, 0]) * 2
    hip.Context.host().sync()        # the host context has no device work: returns
    buf.close()


def test_zero_byte_allocations(dev):
    for buf in (dev.context.alloc(0), dev.context.alloc_host(0)):
        assert buf.nbytes == 0 and len(buf) == 0
        buf.copy_from(b"")
        buf.close()
