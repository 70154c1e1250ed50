"""rocpy.hip.Device: identity, properties, attributes, limits, peers, reset."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rocpy
from rocpy import hip


def test_cached_per_index(dev):
    assert hip.Device(0) is dev
    assert isinstance(hip.Device.current(), hip.Device)
    assert int(dev) == dev.index == 0
    assert "Device 0" in repr(dev)
    dev.close()                                  # a no-op: devices live on
    assert not dev.closed and dev.owned is False


def test_properties_are_frozen_and_typed(dev):
    props = dev.properties
    assert dataclasses.is_dataclass(props)
    assert type(props).__name__ == "DeviceProperties"
    with pytest.raises(dataclasses.FrozenInstanceError):
        props.maxThreadsPerBlock = 1
    assert isinstance(props.name, str) and props.name == dev.name
    assert isinstance(props.maxThreadsDim, tuple) and len(props.maxThreadsDim) == 3
    assert props is dev.properties               # read once


def test_typed_accessors(dev):
    assert dev.arch == dev.target_id.split(":")[0]
    assert dev.total_memory > 0 and dev.compute_units > 0
    assert dev.warp_size in (32, 64)
    assert dev.max_threads_per_block >= 256
    assert len(dev.max_block_dims) == 3 and len(dev.max_grid_dims) == 3
    assert dev.shared_memory_per_block > 0 and dev.clock_rate_khz > 0
    assert len(dev.compute_capability) == 2
    assert dev.pci_bus_id.count(":") == 2


@pytest.mark.stub_only
def test_stub_identity(dev):
    assert dev.arch.startswith("gfx") and dev.target_id.startswith(dev.arch)
    assert dev.stream_priority_range == (1, -1)   # hipamd's Low, High


@pytest.mark.parametrize("name", ["MaxThreadsPerBlock", "max_threads_per_block",
                                  "hipDeviceAttributeMaxThreadsPerBlock", "maxthreadsperblock"])
def test_attribute_by_name(dev, name):
    assert dev.attribute(name) == dev.max_threads_per_block


def test_attribute_by_enum(dev):
    from rocpy.hip import lib
    assert dev.attribute(lib.hipDeviceAttributeWarpSize) == dev.warp_size
    with pytest.raises(TypeError):
        dev.attribute(1.0)


def test_mem_info_sees_allocations(dev):
    before = dev.mem_info()
    assert before.total == dev.total_memory and 0 < before.free <= before.total
    buf = dev.context.alloc(1 << 20)
    if rocpy.backend().name == "stub":
        assert dev.mem_info().free == before.free - (1 << 20)
    buf.close()


@pytest.mark.stub_only
def test_limit(dev):
    assert dev.limit("malloc_heap_size") > 0
    with pytest.raises(rocpy.InvalidValueError):
        dev.limit("nonsense")


def test_peer_access_with_itself(dev):
    assert dev.can_access_peer(dev) is False


def test_factories(dev):
    with dev.create_stream() as s, dev.create_event(timing=False) as e:
        assert s.device is dev and e.device is dev and not e.timing
        e.record(s)
    assert dev.context is dev.context and dev.context.devices == (dev,)
    null = dev.default_stream
    assert null is dev.default_stream and null.kind == "null" and null.device is dev


def test_synchronize(dev, spin):
    buf = dev.context.alloc(4096)
    with dev.create_stream(non_blocking=True) as s:
        spin(buf, 4, 50, stream=s)
        dev.sync()
        assert s.query()


def test_set_current(dev):
    dev.set_current()
    assert hip.Device.current() is dev
    hip.forget_current_device()
    buf = dev.context.alloc(16)                  # sets it again
    buf.close()


def test_hsa_agent(dev):
    from rocpy import hsa
    if rocpy.backend().name == "nvidia":
        with pytest.raises(rocpy.NotSupportedError):
            dev.hsa_agent
        return
    if not hasattr(hsa, "Runtime"):
        with pytest.raises(NotImplementedError, match="rocpy.hsa"):
            dev.hsa_agent
        return
    agent = dev.hsa_agent
    assert agent.is_gpu
    assert (agent.target or agent.isa_name or "").split(":")[0].endswith(dev.arch)
    del agent


@pytest.mark.stub_only
@pytest.mark.abandons_allocations("hipamd keeps host and module memory across a reset; rocpy "
                                   "abandons it (never frees it twice)")
def test_reset_invalidates_everything_made_on_the_device(dev, load, allocations):
    base = allocations()
    buf = dev.context.alloc(4096)
    view = buf[16:32]
    host = hip.Context.host().alloc_host(64)
    array = host.numpy()
    s = dev.create_stream()
    ev = s.record()
    k = load("empty")
    mod = k.module
    old_ctx = dev.context
    dev.reset()
    for obj in (buf, view, host, s, ev, k, mod, old_ctx):
        assert obj.closed
    with pytest.raises(rocpy.ClosedError, match="reset"):
        buf.ptr
    with pytest.raises(rocpy.ClosedError, match="reset"):
        s.sync()
    assert rocpy.debug.live_objects() == {}
    # nothing was released twice or late; the device works as before
    del buf, view, s, ev, k, mod
    rocpy.debug.collect()
    assert dev.context is not old_ctx and not dev.context.closed
    fresh = dev.context.alloc(4096)
    fresh.copy_from(np.arange(1024, dtype=np.uint32))
    fresh.close()
    # the device memory is gone; host memory and the module's survive in hipamd
    # and are abandoned (never freed twice) by rocpy
    assert allocations() >= base
    del array, host


@pytest.mark.stub_only
@pytest.mark.abandons_allocations("hipamd keeps host and module memory across a reset")
def test_reset_releases_what_the_runtime_keeps_across_it(dev, load):
    """hipamd keeps modules and events across hipDeviceReset: Device.reset releases
    them (their classes set ``_survives_reset``), so their handles are dead after it."""
    lib = hip.lib
    ev = dev.create_stream().record()
    k = load("empty")
    ev_h, mod_h = ev.handle, k.module.handle
    ev.sync()       # the record runs on the stub's stream thread: done only after this
    assert lib.hipEventQuery(ev_h) == lib.hipSuccess
    dev.reset()
    assert ev.closed and k.closed
    assert lib.hipEventQuery(ev_h) == lib.hipErrorContextIsDestroyed   # hipEventDestroy ran
    out = hip.ffi.new("hipFunction_t *")
    assert lib.hipModuleGetFunction(out, mod_h, b"empty") != lib.hipSuccess   # unloaded
    del ev, k
    rocpy.debug.collect()


def test_device_count_and_bad_index_message():
    n = hip.device_count()
    with pytest.raises(rocpy.InvalidValueError, match=rf"out of range: {n} device"):
        hip.Device(n + 3)


@pytest.mark.stub_only
def test_two_devices(run_script):
    out = run_script("""
        import numpy as np, rocpy
        from rocpy import hip
        d0, d1 = hip.Device(0), hip.Device(1)
        print("count", hip.device_count())
        print("peer", d0.can_access_peer(d1), d1.can_access_peer(d0))
        d0.enable_peer_access(d1)
        d0.enable_peer_access(d1)            # twice is fine
        d0.disable_peer_access(d1)
        d0.disable_peer_access(d1)
        a, b = d0.context.alloc(64), d1.context.alloc(64)
        host = hip.Context.host().alloc_host(64)
        b.copy_from(np.arange(16, dtype=np.uint32))
        a.copy_from(b)
        out = np.empty(16, np.uint32); a.copy_to(out); print("copy", out.sum())
        with d1.create_stream() as s:
            print("stream", s.device.index)
        try:
            hip.Device(2)
        except rocpy.InvalidValueError as e:
            print("bad", "2 device(s)" in str(e))
        d1.reset()
        print("after reset", a.closed, b.closed, host.closed, hip.Context.host().devices)
        print("live", rocpy.debug.live_objects())
    """, ROCPY_BACKEND="stub", ROCPY_STUB_DEVICES="2")
    assert "count 2" in out
    assert "peer True True" in out
    assert "copy 120" in out and "stream 1" in out and "bad True" in out
    assert "after reset False True True" in out
    assert "live {'DeviceBuffer': 1}" in out
