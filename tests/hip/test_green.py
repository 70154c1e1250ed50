"""rocpy.hip.green: SMResource splits, GreenContext and its streams, detach
on close.  Runs where the headers declare hipGreenCtxCreate; elsewhere only
the NotSupportedError test runs."""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
import rocpy.debug
from rocpy import hip
from rocpy.hip import Device
from rocpy.hip.green import DeviceResources, GreenContext, SMResource

HAVE = hasattr(hip.lib, "hipGreenCtxCreate")
needs_green = pytest.mark.skipif(not HAVE, reason="the headers declare no hipGreenCtxCreate")


@pytest.mark.skipif(HAVE, reason="the headers declare the green-context family")
def test_without_the_headers_every_entry_point_says_what_is_needed():
    dev = Device(0)
    with pytest.raises(rocpy.NotSupportedError, match="HIP 7.2"):
        dev.resources()
    with pytest.raises(rocpy.NotSupportedError, match="hipGreenCtxCreate"):
        dev.create_green_context(None)


@needs_green
def test_resources_and_split():
    dev = Device(0)
    res = dev.resources()
    assert isinstance(res, DeviceResources)
    sm = res.sm
    assert isinstance(sm, SMResource)
    assert sm.sm_count == dev.compute_units
    groups, rest = sm.split(8, groups=3)
    assert [g.sm_count for g in groups] == [8, 8, 8]
    assert rest is not None and rest.sm_count == sm.sm_count - 24
    every, rest = sm.split(1)
    assert len(every) == sm.sm_count and rest is None
    parts, rest = sm.partition([4, 0], backfill_last=True)
    assert [p.sm_count for p in parts] == [4, sm.sm_count - 4] and rest is None
    with pytest.raises(TypeError):
        SMResource()


@needs_green
def test_bad_input():
    dev = Device(0)
    sm = dev.resources().sm
    with pytest.raises(rocpy.InvalidValueError, match="negative"):
        sm.split(-1)
    with pytest.raises(rocpy.InvalidValueError, match="sizes"):
        sm.partition([])
    with pytest.raises(rocpy.HipError) as e:
        sm.partition([sm.sm_count + 1])
    assert e.value.name == "hipErrorInvalidResourceConfiguration"
    with pytest.raises(TypeError, match="SMResource"):
        dev.create_green_context([])
    with pytest.raises(TypeError):
        GreenContext()
    assert rocpy.debug.live_objects() == {}


@needs_green
def test_green_context_runs_work_on_its_streams():
    dev = Device(0)
    (part,), _ = dev.resources().sm.split(8, groups=1)
    ctx = dev.create_green_context(part)
    assert ctx.sm_count == 8 and ctx.id > 0 and ctx.resources == (part,)
    s = ctx.create_stream()
    data = np.arange(1024, dtype=np.int32)
    buf = dev.context.alloc(data.nbytes)
    out = np.zeros_like(data)
    buf.copy_from(data, stream=s)
    buf.copy_to(out, stream=s)
    ev = ctx.record()
    ev.sync()
    ctx.sync()
    assert (out == data).all()
    ctx.wait(ev)
    s.sync()
    assert "8 CUs" in repr(ctx)
    s.close()
    buf.close()
    ev.close()
    ctx.close()
    assert "closed" in repr(ctx)
    assert rocpy.debug.live_objects() == {}


@needs_green
def test_a_stream_of_a_closed_context_is_detached():
    """Fails without the stub's detach check: the stream would still sync."""
    dev = Device(0)
    ctx = dev.create_green_context(dev.resources().sm)
    s = ctx.create_stream()
    ctx.close()
    with pytest.raises(rocpy.HipError) as e:
        s.sync()
    assert e.value.name == "hipErrorStreamDetached"
    ev = dev.create_event()
    with pytest.raises(rocpy.HipError) as e:
        s.record(ev)
    assert e.value.name == "hipErrorStreamDetached"
    ev.close()
    del e
    assert s.non_blocking              # getters still work
    s.close()                          # and close
    with pytest.raises(rocpy.ClosedError):
        ctx.create_stream()
    assert rocpy.debug.live_objects() == {}


@needs_green
def test_a_stream_keeps_its_context_alive():
    import gc
    import weakref
    dev = Device(0)
    ctx = dev.create_green_context(dev.resources().sm)
    s = ctx.create_stream()
    ref = weakref.ref(ctx)
    del ctx
    gc.collect()
    assert ref() is not None
    s.sync()                           # not detached: the context was kept
    s.close()
    ref().close()
    assert rocpy.debug.live_objects() == {}
