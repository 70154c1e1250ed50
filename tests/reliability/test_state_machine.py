"""Random sequences of the public HIP API on the stub, checked against a numpy model.

A hypothesis `RuleBasedStateMachine` makes streams (blocking and not), events
and buffers (device, pinned, managed), and in any order copies into and between
them, fills them, launches the stub's built-in ``fill`` and ``vadd`` emulations,
records and waits for events, adds host callbacks, synchronizes, and closes
objects (buffers now or in stream order, streams with work in flight, events).

Invariants:

* every buffer's contents equal the model once read back (round trips);
* work on one stream runs in order (bursts of fills and callbacks: the buffer
  ends with the last value, the callbacks ran in the order added);
* a closed object refuses use; nothing else is affected;
* at teardown, once everything is closed: ``live_objects() == {}`` and the stub's
  allocations are back to where they were.

Ordering between streams is the user's job in HIP; the machine does it as a
careful user would: before an operation on stream S touches a buffer that
another stream T used since the last synchronization, S waits for T.
Bounded for CI: ``max_examples`` x ``stateful_step_count`` below (more with
ROCPY_SLOW=1).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    precondition,
    rule,
)
from rel_support import SLOW, allocations, settle

import rocpy
import rocpy.stub
from rocpy import hip
from rocpy.hip._callbacks import _dispatcher_barrier

WORDS = 64                 # every buffer: 64 32-bit words
NBYTES = WORDS * 4
u32 = st.integers(0, 2**32 - 1)
# small floats as bit patterns, so vadd's float sums are exact and never NaN
floats = st.integers(-1000, 1000).map(lambda v: int(np.float32(v).view(np.uint32)))


class Buf:
    """A buffer under test and its model (uint32 words)."""

    def __init__(self, obj, kind: str) -> None:
        self.obj, self.kind = obj, kind
        self.model = np.zeros(WORDS, np.uint32)
        self.users: set = set()     # streams that used it since it was last known complete


class HipMachine(RuleBasedStateMachine):
    streams = Bundle("streams")
    buffers = Bundle("buffers")
    events = Bundle("events")

    def __init__(self) -> None:
        super().__init__()
        HipMachine.examples += 1
        self.dev = hip.Device(0)
        self.null = self.dev.default_stream
        self.start_allocations = allocations()
        self.kernels = {name: hip.Module.load(MachineKernels.paths[name], self.dev)[name]
                        for name in ("fill", "vadd")}
        self.live_streams: list = []
        self.live_buffers: list[Buf] = []
        self.live_events: list = []
        self.closed: list = []
        self.last_work: dict = {}
        self.log: list = []
        self.expected_log: list = []
        self.bursts = 0

    # ---- ordering: what a careful user does ---------------------------------------------

    def _order(self, stream, *bufs: Buf) -> None:
        """Make `stream` (None: a synchronous call) wait for other streams' use of `bufs`."""
        target = self.null if stream is None else stream
        for b in bufs:
            for other in list(b.users):
                if other is target:
                    continue
                # a stream closed with work in flight: its last event stands for it
                target.wait(self.last_work[other] if other.closed else other)

    def _used(self, stream, *bufs: Buf) -> None:
        for b in bufs:
            b.users = set() if stream is None else {stream}   # synchronous calls complete

    # ---- creation ------------------------------------------------------------------------

    @rule(target=streams, non_blocking=st.booleans())
    def create_stream(self, non_blocking):
        s = self.dev.create_stream(non_blocking=non_blocking)
        self.live_streams.append(s)
        return s

    @rule(target=buffers, kind=st.sampled_from(["device", "host", "managed", "view"]))
    def create_buffer(self, kind):
        ctx = self.dev.context
        if kind == "device":
            obj = ctx.alloc(NBYTES)
        elif kind == "host":
            obj = hip.Context.host().alloc_host(NBYTES)
        elif kind == "managed":
            obj = ctx.alloc_managed(NBYTES)
        else:  # a view of a bigger buffer: its parent lives as long as the view
            obj = ctx.alloc(NBYTES * 2)[NBYTES // 2: NBYTES // 2 + NBYTES]
        obj.fill(0)                        # synchronous: the model starts at zero
        b = Buf(obj, kind)
        self.live_buffers.append(b)
        return b

    @rule(target=events, stream=streams, timing=st.booleans())
    def record(self, stream, timing):
        if stream.closed:
            return self._closed_use(stream.record)
        ev = stream.record(timing=timing)
        self.live_events.append(ev)
        return ev

    # ---- work ---------------------------------------------------------------------------------

    @rule(b=buffers, stream=st.none() | streams, data=st.lists(u32, min_size=WORDS, max_size=WORDS))
    def copy_in(self, b, stream, data):
        if self._refused(b, stream):
            return
        self._order(stream, b)
        src = np.array(data, np.uint32)
        b.obj.copy_from(src, stream=stream)  # a pageable source: kept alive by the stream
        del src                               # ... so dropping it here must be safe
        b.model = np.array(data, np.uint32)
        self._used(stream, b)

    @rule(dst=buffers, src=buffers, stream=st.none() | streams)
    def copy_between(self, dst, src, stream):
        if self._refused(dst, stream) or self._refused(src, None) or dst is src:
            return
        self._order(stream, dst, src)
        dst.obj.copy_from(src.obj, stream=stream)
        dst.model = src.model.copy()
        self._used(stream, dst, src)

    @rule(b=buffers, value=u32, stream=st.none() | streams, wide=st.booleans())
    def fill(self, b, value, stream, wide):
        if self._refused(b, stream):
            return
        self._order(stream, b)
        if wide:
            b.obj.fill(np.uint32(value), stream=stream)
            b.model[:] = value
        else:
            b.obj.fill(value & 0xFF, stream=stream)
            b.model[:] = (value & 0xFF) * 0x01010101
        self._used(stream, b)

    @rule(b=buffers, value=u32, stream=st.none() | streams, words=st.integers(0, WORDS))
    def launch_fill(self, b, value, stream, words):
        if self._refused(b, stream):
            return
        self._order(stream, b)
        self.kernels["fill"].launch(1, WORDS, (b.obj, np.uint32(value), np.int32(words)), stream=stream)
        b.model[:words] = value
        self._used(self.null if stream is None else stream, b)   # asynchronous even on the null stream

    @rule(a=buffers, bb=buffers, c=buffers, stream=streams, va=floats, vb=floats)
    def launch_vadd(self, a, bb, c, stream, va, vb):
        if any(self._refused(x, stream) for x in (a, bb, c)):
            return
        self._order(stream, a, bb, c)
        # inputs with float values the model can add exactly
        a.obj.fill(np.uint32(va), stream=stream)
        a.model[:] = va
        if bb is not a:
            bb.obj.fill(np.uint32(vb), stream=stream)
            bb.model[:] = vb
        self.kernels["vadd"].launch(1, WORDS, (a.obj, bb.obj, c.obj, np.int32(WORDS)), stream=stream)
        c.model = (a.model.view(np.float32) + bb.model.view(np.float32)).view(np.uint32)
        self._used(stream, a, bb, c)

    @rule(stream=streams, b=buffers, values=st.lists(u32, min_size=1, max_size=8))
    def fifo_burst(self, stream, b, values):
        """Fills and callbacks interleaved on one stream: they run in the order enqueued."""
        if self._refused(b, stream):
            return
        self._order(stream, b)
        self.bursts += 1
        key = id(stream)
        for i, v in enumerate(values):
            b.obj.fill(np.uint32(v), stream=stream)
            stream.add_callback(self.log.append, (key, self.bursts, i))
            self.expected_log.append((key, self.bursts, i))
        b.model[:] = values[-1]
        self._used(stream, b)

    @rule(waiter=streams, ev=events)
    def wait_event(self, waiter, ev):
        if waiter.closed or ev.closed:
            return self._closed_use(lambda: waiter.wait(ev))
        waiter.wait(ev)

    @rule(ev=events)
    def sync_event(self, ev):
        if ev.closed:
            return self._closed_use(ev.sync)
        ev.sync()
        assert ev.query()

    @rule(stream=streams)
    def sync(self, stream):
        if stream.closed:
            return self._closed_use(stream.sync)
        stream.sync()
        assert stream.query()
        for b in self.live_buffers:
            b.users.discard(stream)

    @rule()
    def synchronize_device(self):
        self.dev.sync()
        for b in self.live_buffers:
            b.users.clear()

    @rule(b=buffers)
    def check(self, b):
        """Read back (synchronously, after what the buffer waits for) and compare."""
        if self._refused(b, None):
            return
        self._order(None, b)
        if b.kind in ("host", "managed") and not b.users:
            out = b.obj.numpy(np.uint32).copy()
        else:
            out = b.obj.copy_to(np.empty(WORDS, np.uint32))
        np.testing.assert_array_equal(out, b.model)
        b.users.clear()

    # ---- closing, in any order --------------------------------------------------------------------

    @rule(b=consumes(buffers), stream=st.none() | streams)
    def close_buffer(self, b, stream):
        if b.obj.closed:
            return
        if stream is not None and stream.closed:
            with pytest.raises(rocpy.ClosedError):
                b.obj.close(stream=stream)
            stream = None
        if stream is not None:
            self._order(stream, b)          # freed after what it is used for on other streams
        b.obj.close(stream=stream)
        self.live_buffers.remove(b)
        self.closed.append(b.obj)

    @rule(s=consumes(streams))
    def close_stream(self, s):
        """Close with work possibly in flight: what the work uses stays alive until done."""
        if s.closed:
            return
        last = self.last_work[s] = s.record(timing=False)
        self.live_events.append(last)
        s.close()
        self.live_streams.remove(s)
        self.closed.append(s)

    @rule(ev=consumes(events))
    def close_event(self, ev):
        if ev.closed:
            return
        ev.close()
        self.live_events.remove(ev)
        self.closed.append(ev)

    @precondition(lambda self: self.closed)
    @rule(i=st.integers(0, 10**6))
    def use_a_closed_object(self, i):
        obj = self.closed[i % len(self.closed)]
        use = {hip.Stream: lambda: obj.sync(), hip.Event: lambda: obj.query()}.get(
            type(obj), lambda: obj.fill(0))
        self._closed_use(use)

    # ---- helpers -----------------------------------------------------------------------------------

    def _refused(self, b: Buf, stream) -> bool:
        """True (after checking the refusal) when `b` or `stream` is closed."""
        if b.obj.closed or (stream is not None and stream.closed):
            self._closed_use(lambda: b.obj.fill(0, stream=stream))
            return True
        return False

    @staticmethod
    def _closed_use(fn):
        with pytest.raises(rocpy.ClosedError):
            fn()

    steps = 0           # rules run, all examples together (reported by the test)
    examples = 0

    @invariant()
    def callbacks_in_order(self):
        HipMachine.steps += 1
        # on each stream, callbacks run in the order added; those not yet run are a suffix
        log = list(self.log)
        for key in {entry[0] for entry in log}:
            seen = [e for e in log if e[0] == key]
            assert seen == [e for e in self.expected_log if e[0] == key][:len(seen)], (seen, key)

    def teardown(self):
        try:
            for s in self.live_streams:
                s.sync()
            self.dev.sync()
            _dispatcher_barrier()   # callbacks of streams closed with work in flight, too
            for b in self.live_buffers:
                if not b.obj.closed:
                    out = b.obj.copy_to(np.empty(WORDS, np.uint32))
                    np.testing.assert_array_equal(out, b.model)
            assert sorted(self.log) == sorted(self.expected_log), "a callback was lost"
            self.callbacks_in_order()
        finally:
            for b in self.live_buffers:
                b.obj.close()
            for o in self.live_streams + self.live_events:
                o.close()
            self.kernels.clear()
            self.last_work.clear()
            self.live_buffers = self.live_streams = self.live_events = self.closed = []
        assert settle() == {}
        assert allocations() == self.start_allocations


class MachineKernels:
    paths: dict = {}


HipMachine.TestCase.settings = settings(
    max_examples=400 if SLOW else 40, stateful_step_count=100 if SLOW else 50, deadline=None,
    suppress_health_check=list(HealthCheck), derandomize=not SLOW, database=None)


def test_random_api_sequences(kernel_paths, capsys):
    MachineKernels.paths = kernel_paths
    from hypothesis.stateful import run_state_machine_as_test
    HipMachine.steps = HipMachine.examples = 0
    run_state_machine_as_test(HipMachine, settings=HipMachine.TestCase.settings)
    with capsys.disabled():
        print(f"\n[state machine] {HipMachine.examples} sequences, {HipMachine.steps} steps")
    assert HipMachine.steps >= HipMachine.examples
