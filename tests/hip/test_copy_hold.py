"""What copies hold, the fences that release it, and the wait that completes it
(rocpy/hip/_copy.py, _stream_order.py, event.py `_Fence`, _wait.py; the compiled
copy in rocpy/_native/hot/hot_calls.c and hot_lane.c).

- **A repeated copy holds its pair once**: the same (buffer, other) copied again on a
  stream adds nothing to the unfenced batch (the held item stays held until a fence
  recorded after the new copy too); compiled and Python paths hold the same items.
  Without the rule every copy appends a tuple and a loop of copies fences every
  `FENCE_EVERY`.
- **Fence events are pooled**: a released fence's event goes back to its device's
  pool and the next fence records it again (no hipEventCreate/Destroy per fence);
  `Device.reset` empties the pool.
- **The long spin**: a stream wait still running after `SPIN_NS` keeps spinning (in
  slices, back in Python between them) up to `LONG_SPIN_NS` before a helper thread
  takes the blocking call; events made with ``blocking=True`` go to the helper after
  `SPIN_NS` as before.  Ctrl-C during every phase: tests/reliability/test_interrupt.py.
"""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import rocpy
from rocpy import _hotpath, _reaper, hip
from rocpy.hip import _wait, event
from rocpy.hip._lane import PyLane

N = 256


@pytest.fixture
def streams(dev):
    """(compiled stream, Python stream): the second's lane is pure Python."""
    hot = dev.create_stream()
    with _hotpath.disabled():
        slow = dev.create_stream()
    yield hot, slow
    for s in (hot, slow):
        s.sync()
        s.close()


def _held(s):
    return list(s._lane.box[0])


@pytest.mark.parametrize("which", ["compiled", "python"])
def test_a_repeated_copy_holds_its_pair_once(which, streams, dev):
    hot, slow = streams
    s = hot if which == "compiled" else slow
    if which == "compiled" and (_hotpath.module() is None or type(s._lane) is PyLane):
        pytest.skip("rocpy._hot is not built or ROCPY_HOT=0")
    a, b = dev.context.alloc(N), dev.context.alloc(N)
    arr = np.arange(N, dtype=np.uint8)
    b.copy_from(arr)
    s.sync()
    for _ in range(5):
        a.copy_from(b, s)
    assert _held(s) == [(a, b)]
    for _ in range(3):
        a.copy_from(arr, s)                 # another pair: held, once
    b.copy_to(a, s)                         # the same objects, the other way: (b, a)
    a.copy_from(b, s)                       # not the last item any more: held again
    assert _held(s) == [(a, b), (a, arr), (b, a), (a, b)]
    s.sync()
    assert _held(s) == []
    assert (a.copy_to(np.zeros(N, np.uint8)) == arr).all()
    a.close()
    b.close()


@pytest.mark.parametrize("which", ["compiled", "python"])
def test_a_copy_during_a_query_holds_its_pair_again(which, streams, dev):
    """A query running on another thread (``lane.querying``) drops, if it finds the stream
    complete, what was held when it began: a copy enqueued meanwhile must not rely on
    that item, so it holds its pair again (as a launch does)."""
    hot, slow = streams
    s = hot if which == "compiled" else slow
    if which == "compiled" and (_hotpath.module() is None or type(s._lane) is PyLane):
        pytest.skip("rocpy._hot is not built or ROCPY_HOT=0")
    a, b = dev.context.alloc(N), dev.context.alloc(N)
    a.copy_from(b, s)
    s._lane.querying += 1                  # what Stream.query does around its call
    try:
        a.copy_from(b, s)
    finally:
        s._lane.querying -= 1
    held = _held(s)
    del held[:1]                           # what the query drops when the stream is complete
    assert held == [(a, b)]
    s.sync()
    a.close()
    b.close()


def test_a_loop_of_the_same_copy_records_no_fence(streams, dev, monkeypatch):
    """FENCE_EVERY copies of one pair: one held item, no fence recorded, on both paths."""
    from rocpy.hip._stream_order import FENCE_EVERY
    fences = []
    record = event._Fence.record
    monkeypatch.setattr(event._Fence, "record",
                        classmethod(lambda cls, *a: fences.append(a) or record(*a)))
    a, b = dev.context.alloc(N), dev.context.alloc(N)
    for s in streams:
        s.sync()
        for _ in range(FENCE_EVERY + 1):
            a.copy_from(b, s)
        assert fences == [] and _held(s) == [(a, b)]
        s.sync()
    a.close()
    b.close()


def _addresses(events):
    return [int(hip.ffi.cast("uintptr_t", e)) for e in events]


def test_a_released_fence_event_is_recorded_again(dev):
    """A fence that completed is dropped and its event goes back to the pool: one event
    serves them all (without the pool, each fence would create its own)."""
    s = dev.create_stream()
    pool = event._fence_pool.setdefault(dev.index, [])
    pool.clear()
    s._keep_alive(bytearray(8))             # a fence now
    s.sync()                                # complete: dropped (the stub's worker may
    assert len(s._pending) == 0             # not have run it yet when _keep_alive returns)
    _reaper.flush(5.0)                      # the dropped fence's release, on the reaper
    first = _addresses(pool)
    assert len(first) == 1
    for _ in range(5):
        s._keep_alive(bytearray(8))
        s.sync()
        _reaper.flush(5.0)
    assert _addresses(pool) == first
    s.close()


def test_the_fence_pool_is_bounded(gated, dev):
    k, opened = gated
    pool = event._fence_pool.setdefault(dev.index, [])
    pool.clear()
    s = dev.create_stream()
    buf = dev.context.alloc(N)
    k.launch(1, 64, (buf, np.uint32(1), np.int32(N // 4)), stream=s)
    for _ in range(event.FENCE_POOL_MAX + 3):
        s._keep_alive(bytearray(1))          # each a fence, pending behind the gate
    assert len(s._pending) == event.FENCE_POOL_MAX + 3 and pool == []
    opened.set()
    s.sync()
    _reaper.flush(5.0)
    assert len(pool) == event.FENCE_POOL_MAX      # the rest destroyed
    buf.close()
    s.close()


@pytest.mark.stub_only
def test_device_reset_empties_the_fence_pool(dev):
    s = dev.create_stream()
    s._keep_alive(bytearray(1))
    s.sync()
    _reaper.flush(5.0)
    assert event._fence_pool.get(dev.index)
    s.close()
    dev.reset()
    assert not event._fence_pool.get(dev.index)
    s = dev.create_stream()                 # fences work after the reset
    buf = dev.context.alloc(N)
    s._keep_alive(bytearray(1))
    buf.copy_from(np.full(N, 9, np.uint8), s)
    s.sync()
    assert (buf.copy_to(np.zeros(N, np.uint8)) == 9).all()
    buf.close()
    s.close()


# ---- the wait's long spin ----------------------------------------------------------------

@pytest.fixture
def gated(kernel_file, dev):
    """(kernel "fill" whose emulation waits for the gate, the gate)."""
    import rocpy.stub
    opened = threading.Event()
    m = hip.Module.load(kernel_file("fill"), dev)
    k = m["fill"]

    def emulate(d):
        opened.wait(10)
    rocpy.stub.register_kernel("fill", emulate)
    value = [k, opened]
    del k
    try:
        yield value
    finally:
        opened.set()
        dev.sync()
        rocpy.stub.unregister_kernel("fill")
        value.clear()            # pytest holds the fixture's value until teardown ends
        m.close()


def _helper_busy_while(wait, opened, hold_s):
    """Run ``wait`` on a thread with the gate closed for ``hold_s``: whether a helper
    thread was busy in the runtime's call meanwhile."""
    busy0 = _wait.helpers()[1]
    t = threading.Thread(target=wait)
    t.start()
    seen = False
    deadline = time.monotonic() + hold_s
    while time.monotonic() < deadline:
        seen = seen or _wait.helpers()[1] > busy0
        time.sleep(0.005)
    alive = t.is_alive()
    opened.set()
    t.join(10)
    assert alive, "the wait returned while the gated kernel still ran"
    return seen


@pytest.mark.stub_only
def test_a_wait_past_the_first_spin_keeps_spinning_before_the_helper(gated, dev, monkeypatch):
    k, opened = gated
    monkeypatch.setattr(_wait, "LONG_SPIN_NS", 5_000_000_000)
    buf = dev.context.alloc(N)
    s = dev.create_stream()
    k.launch(1, 64, (buf, np.uint32(1), np.int32(N // 4)), stream=s)
    assert not _helper_busy_while(s.sync, opened, 0.15)
    assert s.query()
    buf.close()
    s.close()


@pytest.mark.stub_only
def test_a_long_wait_goes_to_the_helper(gated, dev, monkeypatch):
    k, opened = gated
    monkeypatch.setattr(_wait, "LONG_SPIN_NS", 30_000_000)
    buf = dev.context.alloc(N)
    s = dev.create_stream()
    k.launch(1, 64, (buf, np.uint32(1), np.int32(N // 4)), stream=s)
    assert _helper_busy_while(s.sync, opened, 0.4)
    buf.close()
    s.close()


@pytest.mark.stub_only
def test_a_blocking_event_goes_to_the_helper_after_the_first_spin(gated, dev, monkeypatch):
    k, opened = gated
    monkeypatch.setattr(_wait, "LONG_SPIN_NS", 5_000_000_000)
    buf = dev.context.alloc(N)
    s = dev.create_stream()
    ev = hip.Event(dev, timing=False, blocking=True)
    k.launch(1, 64, (buf, np.uint32(1), np.int32(N // 4)), stream=s)
    ev.record(s)
    assert _helper_busy_while(ev.sync, opened, 0.15)
    assert ev.query()
    ev.close()
    buf.close()
    s.close()
