"""rocpy.hip.Stream: kinds, properties, protocol, callbacks, keep-alive, capture plumbing."""
from __future__ import annotations

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.errors import CallbackWarning
from rocpy.hip import stream as stream_module


def test_owned_stream(dev):
    s = dev.create_stream(priority="high", non_blocking=True)
    assert s.kind == "owned" and s.owned and s.device is dev and s.context is dev.context
    assert s.non_blocking and s.priority == dev.stream_priority_range[1]
    assert rocpy.debug.live_objects() == {"Stream": 1}
    s.close()
    assert s.closed and rocpy.debug.live_objects() == {}


def test_not_constructible():
    with pytest.raises(TypeError):
        hip.Stream()


def test_int_priority_and_flags(dev):
    with dev.create_stream(priority=0) as s:
        assert s.flags == 0 and not s.non_blocking
    with pytest.raises(TypeError):
        dev.create_stream(priority=1.5)


@pytest.mark.stub_only
def test_cu_mask(dev):
    from rocpy.hip import ffi, lib
    with dev.create_stream(cu_mask=0b1011) as s:
        words = ffi.new("uint32_t[4]")
        assert lib.hipExtStreamGetCUMask(s.handle, 4, words) == 0
        assert words[0] == 0b1011
    with dev.create_stream(cu_mask=[0xFFFFFFFF, 1]) as s:
        words = ffi.new("uint32_t[4]")
        assert lib.hipExtStreamGetCUMask(s.handle, 4, words) == 0
        assert (words[0], words[1]) == (0xFFFFFFFF, 1)
    for bad in (0, [], [0], [1 << 32]):
        with pytest.raises(rocpy.InvalidValueError):
            dev.create_stream(cu_mask=bad)
    with pytest.raises(rocpy.InvalidValueError):
        dev.create_stream(cu_mask=1, non_blocking=True)


def test_null_and_per_thread(dev):
    null = dev.default_stream
    assert null is dev.default_stream is hip.Device.current().default_stream and null.kind == "null"
    assert not null.owned and null.__hip_stream__() == (0, 0)
    assert null.priority == 0 and null.flags == 0
    pts = hip.Stream.per_thread(dev)
    assert pts.kind == "per_thread" and pts.__hip_stream__() == (0, 2)
    other = []
    t = threading.Thread(target=lambda: other.append(hip.Stream.per_thread(dev)))
    t.start(), t.join()
    assert other[0] is not pts
    null.close()                                   # borrowed: only the wrapper closes
    assert dev.default_stream is not null and not dev.default_stream.closed
    pts.sync()
    dev.default_stream.sync()


def test_from_handle_borrows_and_keeps_owner(dev):
    owner = dev.create_stream()

    class Holder:
        def __init__(self, s):
            self.s = s

        def __hip_stream__(self):
            return self.s.__hip_stream__()

    h = Holder(owner)
    s = hip.Stream.from_handle(h)
    assert s.kind == "foreign" and not s.owned and s.device is dev
    assert s.__hip_stream__() == owner.__hip_stream__()
    ref = weakref.ref(h)
    del h
    gc.collect()
    assert ref() is not None                       # the wrapper keeps its owner
    s.sync()
    s.close()                                      # never destroys the handle
    owner.sync()
    del s
    gc.collect()
    owner.close()
    assert hip.Stream.from_handle(0, device=dev) is dev.default_stream
    assert hip.Stream.from_handle(2, device=dev) is hip.Stream.per_thread(dev)
    with pytest.raises(TypeError):
        hip.Stream.from_handle("x")
    with pytest.raises(rocpy.InvalidValueError):
        hip.Stream.from_handle(-5)


def test_stream_protocols_on_every_backend(dev):
    """Both names are exported and accepted everywhere (CuPy and AMD's bindings use
    __cuda_stream__ on ROCm); the old nvidia-only export was wrong (issue 24)."""
    from rocpy.hip.stream import stream_handle

    class Cuda:        # cuda.core's shape: a method returning (version, handle)
        def __init__(self, h):
            self.h = h

        def __cuda_stream__(self):
            return (0, self.h)

    class Bad:
        __hip_stream__ = staticmethod(lambda: (0, 1, 2))

    class Floaty:
        __cuda_stream__ = staticmethod(lambda: (0, 1.5))

    with dev.create_stream() as s:
        assert s.__cuda_stream__() == s.__hip_stream__()
        assert s.__hip_stream__()[1] == int(hip.ffi.cast("uintptr_t", s.handle))
        h = s.__hip_stream__()[1]
        assert stream_handle(Cuda(h)) == h and stream_handle(object()) is None
        wrapped = hip.as_stream(Cuda(h)) if hasattr(hip, "as_stream") else \
            hip.Stream.from_handle(Cuda(h))
        assert wrapped.__hip_stream__()[1] == h
        with pytest.raises(TypeError, match="not .version, handle."):
            stream_handle(Bad())
        with pytest.raises(TypeError, match="float handle"):
            stream_handle(Floaty())
        buf = dev.context.alloc(64)
        buf.fill(7, stream=Cuda(h))          # a stream taken through __cuda_stream__
        s.sync()
        out = bytearray(64)
        buf.copy_to(out)
        assert out == b"\x07" * 64
        buf.close()
        wrapped.close()
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


def test_with_block_synchronizes_then_closes(dev, spin):
    buf = dev.context.alloc(4096)
    with dev.create_stream() as s:
        spin(buf, 3, 100, stream=s)
    assert s.closed
    out = np.empty(1024, np.uint32)
    buf.copy_to(out)
    assert (out == 3).all()


def test_callback_exception_is_reported_once(dev):
    def boom():
        raise RuntimeError("in callback")
    with dev.create_stream() as s:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CallbackWarning)
            s.add_callback(boom)
            with pytest.raises(rocpy.CallbackError) as info:
                s.sync()
        assert isinstance(info.value.__cause__, RuntimeError)
        s.sync()                            # reported once, then forgotten


def test_callback_error_raised_by_next_use(dev):
    with dev.create_stream() as s:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CallbackWarning)
            s.add_callback(lambda: 1 / 0)
            dev.sync()                      # not a use of s
            stream_module._dispatcher_barrier()
            with pytest.raises(rocpy.CallbackError):
                s.record().close()                 # any use of the stream reports it


def test_callback_arguments_and_type_check(dev):
    got = []
    with dev.create_stream() as s:
        s.add_callback(got.append, 5)
        s.sync()
        with pytest.raises(TypeError):
            s.add_callback(5)
    assert got == [5]


def test_wait_and_record(dev):
    with dev.create_stream() as a, dev.create_stream() as b:
        ev = a.record(timing=False)
        b.wait(ev)
        b.wait(a)
        assert b.record(ev) is ev
        with pytest.raises(TypeError):
            b.wait(3)
        ev.close()


@pytest.mark.stub_only
def test_fences_batch_kernel_arguments(dev, load):
    # two kernels taking turns: each launch holds its own (one kernel launched again
    # and again is held once, tests/hip/test_launch_hold.py)
    kernels = (load("empty"), load("empty"))
    with dev.create_stream() as s:
        for i in range(stream_module.FENCE_EVERY * 2 + 5):
            kernels[i % 2].launch(1, 1, (), stream=s)
        assert len(s._lane.box[0]) == 5            # two fences recorded, five items after
        s.sync()
        assert not s._lane.box[0] and len(s._pending) == 0


@pytest.mark.stub_only
def test_closing_a_busy_stream_hands_its_work_to_the_reaper(dev, spin, allocations):
    base = allocations()
    s = dev.create_stream()
    buf = dev.context.alloc(1 << 16)
    spin(buf, 5, 200, stream=s)
    del buf                                        # only the stream holds it now
    s.close()                                      # the stub waits; the keep-alive moves on
    gc.collect()
    dev.sync()
    rocpy.debug.collect()
    assert allocations() == base


@pytest.mark.graphs
def test_capture_mode_is_checked(dev):
    entered = []
    with dev.create_stream() as s:
        with pytest.raises(rocpy.InvalidValueError, match="'sometimes'"):
            with s.capture(mode="sometimes"):         # refused before any capture begins
                entered.append("sometimes")
        assert not s.is_capturing
        with s.capture() as g:
            with pytest.raises(rocpy.HipError) as info:
                with s.capture():                     # refused on entry, not at the end
                    entered.append("nested")
            assert info.value.name == "hipErrorIllegalState"
            assert s.is_capturing                     # the outer capture goes on
        assert not s.is_capturing
        assert entered == []
        g.instantiate().close()


def test_done_and_query(dev):
    with dev.create_stream() as s:
        assert s.query() is True
