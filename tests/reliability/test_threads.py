"""Eight threads sharing streams, events, HSA queues and signals, with the collector running.

Each thread runs a fixed mix of cheap operations (OPS of them; 10^4 in CI, 10^5
with ROCPY_SLOW=1) on objects all threads share, then checks its own results:

* no deadlock: every thread finishes within a deadline (else the test fails
  with every thread's stack);
* no lost completion: every host callback added ran exactly once, every
  completion signal reached 0, every event completed;
* correct final data: each thread's buffer holds what it wrote last;
* finalizers on other threads: a collector thread keeps making cyclic garbage
  that owns buffers, events and streams and collects it, so their releases are
  posted from the collector's thread while the workers work.
"""
from __future__ import annotations

import faulthandler
import gc
import sys
import threading
import time

import numpy as np
import pytest
from rel_support import SLOW, has_hsa

import rocpy
import rocpy.debug
from rocpy import hip

THREADS = 8
OPS = 100_000 if SLOW else 10_000
DEADLINE = 600.0 if SLOW else 120.0
WORDS = 256


def run_threads(target, n=THREADS, deadline=DEADLINE):
    """Run target(i) on n threads; fail with every stack if one is still running at the deadline."""
    errors: list = []

    def wrap(i):
        try:
            target(i)
        except BaseException as exc:
            errors.append((i, exc))

    threads = [threading.Thread(target=wrap, args=(i,), name=f"worker-{i}", daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    end = time.monotonic() + deadline
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        pytest.fail(f"deadlock or livelock: {stuck} still running after {deadline} s (stacks on stderr)")
    if errors:
        i, exc = errors[0]
        raise AssertionError(f"thread {i} failed ({len(errors)} failed in all): {exc!r}") from exc


class Collector:
    """A thread making cyclic garbage that owns rocpy objects, collecting it as it goes."""

    def __init__(self, dev) -> None:
        self.dev = dev
        self.stop = threading.Event()
        self.made = 0
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self.guarded, name="collector", daemon=True)

    def guarded(self) -> None:
        try:
            self.run()
        except BaseException as exc:
            self.error = exc

    def run(self) -> None:
        ctx = self.dev.context
        while not self.stop.is_set():
            for _ in range(20):
                a, b = [], []
                a.append(b)
                b.append(a)                       # a cycle: only the collector frees it
                a.append(ctx.alloc(64))
                a.append(hip.Event(self.dev))
                if self.made % 10 == 0:
                    s = self.dev.create_stream()
                    a[1].fill(1, stream=s)       # work in flight when the stream is collected
                    a.append(s)
                self.made += 1
                del a, b
            gc.collect()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(30)
        assert not self.thread.is_alive(), "the collector thread hung"
        if self.error is not None:
            raise AssertionError(f"the collector thread failed: {self.error!r}") from self.error


def test_eight_threads_share_streams_and_events(dev):
    ctx = dev.context
    shared = [dev.create_stream(), dev.create_stream(non_blocking=True)]
    events = [hip.Event(dev, timing=False) for _ in range(THREADS)]
    for ev in events:
        ev.record(shared[0])
    bufs = [ctx.alloc(WORDS * 4) for _ in range(THREADS)]
    ran = [0] * THREADS
    added = [0] * THREADS
    last = [None] * THREADS

    def bump(i):
        ran[i] += 1     # one callback thread: no race

    def work(i):
        mine = dev.create_stream(non_blocking=(i % 2 == 1))
        try:
            s = shared[i % 2]
            for n in range(OPS):
                op = n % 10
                if op in (0, 5):
                    bufs[i].fill(np.uint32(n), stream=mine)
                    last[i] = n
                elif op == 1:
                    events[i].record(mine)
                elif op == 2:
                    mine.wait(events[(i + 1) % THREADS])       # another thread's event
                elif op == 3:
                    s.wait(events[i])
                elif op == 4:
                    mine.add_callback(bump, i)
                    added[i] += 1
                elif op == 6:
                    events[(i + 3) % THREADS].query()
                elif op == 7:
                    s.query()
                elif op == 8:
                    ctx.alloc(64).close()                      # allocation churn
                elif n % 1000 == 9:
                    mine.sync()
                else:
                    tmp = ctx.alloc(16)
                    tmp.fill(0, stream=mine)                   # dropped: freed by the reaper
                    del tmp
            mine.sync()
            out = bufs[i].copy_to(np.empty(WORDS, np.uint32))
            assert (out == last[i]).all(), f"thread {i}: buffer holds {out[0]}, wrote {last[i]} last"
        finally:
            mine.sync()
            mine.close()

    with Collector(dev) as collector:
        run_threads(work)
    for s in shared:
        s.sync()
    dev.sync()
    from rocpy.hip._callbacks import _dispatcher_barrier
    _dispatcher_barrier()
    assert ran == added, f"callbacks lost: ran {ran}, added {added}"
    assert all(ev.query() for ev in events)
    assert collector.made > 0
    for o in (*shared, *events, *bufs):
        o.close()


def test_threads_launching_one_kernel_into_shared_streams(dev, kernels):
    """One Kernel object, its argument packing buffers shared by eight launching threads."""
    k = kernels["fill"]
    shared = [dev.create_stream() for _ in range(2)]
    bufs = [dev.context.alloc(WORDS * 4) for _ in range(THREADS)]
    n_launch = OPS // 2

    def work(i):
        s = shared[i % 2]
        for n in range(n_launch):
            k.launch(1, WORDS, (bufs[i], np.uint32(i * 1_000_000 + n), np.int32(WORDS)), stream=s)
        s.sync()

    run_threads(work)
    for i, b in enumerate(bufs):
        out = b.copy_to(np.empty(WORDS, np.uint32))
        assert (out == i * 1_000_000 + n_launch - 1).all(), f"thread {i}'s last launch is not last"
    for o in (*shared, *bufs):
        o.close()


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
def test_eight_threads_share_hsa_queues_and_signals(hsa_rt, kernel_paths):
    from rocpy import hsa
    gpu, cpu = hsa_rt.gpu_agents[0], hsa_rt.cpu_agents[0]
    pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
    k = hsa.Executable.load(gpu, kernel_paths["fill"]).kernel("fill")
    queues = [gpu.create_queue(), gpu.create_queue()]
    counter = hsa.Signal(0)
    bufs = [pool.allocate(WORDS * 4) for _ in range(THREADS)]
    for b in bufs:
        b.allow_access([gpu])
    n_dispatch = OPS // 2
    fired = [0] * THREADS

    def work(i):
        q = queues[i % 2]
        done = hsa.Signal(0)
        try:
            for n in range(n_dispatch):
                done.add(1)
                q.dispatch(k, WORDS, WORDS, (bufs[i], np.uint32(n), np.int32(WORDS)), completion_signal=done)
                counter.add(1)
                counter.subtract(1) if n % 2 else counter.add(1)
                if n % 100 == 99:
                    assert done.wait("eq", 0, timeout=30) == 0, "a completion was lost"
            assert done.wait("eq", 0, timeout=30) == 0, "a completion was lost"
            flag = hsa.Signal(1)
            flag.on("eq", 0, lambda v, i=i: fired.__setitem__(i, fired[i] + 1))
            flag.store(0)
            deadline = time.monotonic() + 10
            while not fired[i] and time.monotonic() < deadline:
                time.sleep(0.001)
            flag.close()
            assert (bufs[i].numpy(np.uint32) == n_dispatch - 1).all()
        finally:
            done.close()

    run_threads(work)
    for q in queues:
        q.sync(timeout=30)
    # +1 then +1 (even n) or -1 (odd n), from eight threads at once: atomic, nothing lost
    assert counter.load() == THREADS * 2 * ((n_dispatch + 1) // 2)
    assert fired == [1] * THREADS, f"asynchronous handlers lost or repeated: {fired}"
    for o in (*queues, counter, *bufs):
        o.close()
    k = None


def test_reaper_backlog_stays_bounded_under_load(dev):
    """Regression: threads dropping objects faster than the one reaper thread releases
    them (each hipFree waits for the device's work) grew its backlog, and the native
    resources behind it, without bound.  Making new objects now waits while the
    backlog is past rocpy._handle.BACKLOG_HIGH."""
    from rocpy import _handle, _reaper
    ctx = dev.context
    busy = dev.create_stream()
    big = ctx.alloc(32 << 20)
    stop = threading.Event()
    peak = [0]

    def keep_device_busy(_):
        prev = None
        while not stop.is_set():
            ev = busy.record(timing=False) if prev is None else prev
            big.fill(7, stream=busy)             # ~ms each on the stub: hipFree waits for them
            prev = busy.record(timing=False)
            ev.sync()
            ev.close()
        prev.sync()
        prev.close()

    def drop(_):
        end = time.monotonic() + 1.5
        while time.monotonic() < end:
            for _ in range(50):
                ctx.alloc(64)                     # dropped at once: released by the reaper
            peak[0] = max(peak[0], _reaper._queue.qsize())

    t = threading.Thread(target=keep_device_busy, args=(0,), daemon=True)
    t.start()
    try:
        run_threads(drop, n=4, deadline=60)
    finally:
        stop.set()
        t.join(30)
    busy.sync()
    assert peak[0] <= _handle.BACKLOG_HIGH + 1000, f"the reaper's backlog reached {peak[0]}"
    busy.close()
    big.close()


RACE = """
    import sys, threading, time, numpy as np, rocpy
    from rocpy import hip
    lib, ffi = hip.lib, hip.ffi
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    b = dev.context.alloc(256)
    what = sys.argv[2]
    outcomes = set()
    for trial in range(300):
        stop = threading.Event()
        if what == "raw stream":
            p = ffi.new("hipStream_t *"); lib.hipStreamCreate(p); h = p[0]
            def use():
                while not stop.is_set():
                    if lib.hipMemsetAsync(ffi.cast("void *", b.ptr), 0, 256, h) or lib.hipStreamQuery(h) == 709:
                        return
            close = lambda: lib.hipStreamDestroy(h)
        elif what == "raw event":
            s = ffi.new("hipStream_t *"); lib.hipStreamCreate(s)
            p = ffi.new("hipEvent_t *"); lib.hipEventCreate(p); h = p[0]
            def use():
                while not stop.is_set():
                    if lib.hipEventRecord(h, s[0]) or lib.hipStreamWaitEvent(s[0], h, 0):
                        return
            close = lambda: (lib.hipEventDestroy(h), lib.hipStreamSynchronize(s[0]), lib.hipStreamDestroy(s[0]))
        else:
            s = dev.create_stream()
            ev = hip.Event(dev)
            def use():
                try:
                    while not stop.is_set():
                        k.launch(1, 64, (b, np.uint32(1), np.int32(64)), stream=s)
                        b.fill(1, stream=s); ev.record(s); s.query(); s.wait(ev)
                except rocpy.ClosedError:
                    outcomes.add("ClosedError")
                except rocpy.HipError as e:
                    outcomes.add(e.name)
            close = lambda: (s.close(), ev.close())
        t = threading.Thread(target=use); t.start()
        time.sleep(0.001)
        close()
        stop.set(); t.join()
    dev.sync(); rocpy.debug.collect()
    print(sorted(outcomes), rocpy.debug.live_objects())
"""


@pytest.mark.parametrize("what", ["raw stream", "raw event", "Stream and Event"])
def test_closing_what_another_thread_uses_does_not_crash(what, py, kernel_paths):
    """Regression: hipStreamDestroy / hipEventDestroy on one thread while another thread's
    call was using the handle freed it under that call (heap corruption, abort).  The stub
    now keeps a stream or event a call resolved until the call returns; the thread using it
    gets ClosedError, or the runtime's status for a destroyed handle."""
    proc = py(RACE, args=(kernel_paths["fill"], what), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outcomes, live = proc.stdout.strip().rsplit("] ", 1)
    assert set(eval(outcomes + "]")) <= {"ClosedError", "hipErrorContextIsDestroyed",  # noqa: S307
                                         "hipErrorInvalidHandle"}
    assert live == "{'Module': 1, 'DeviceBuffer': 1}"


@pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")
@pytest.mark.parametrize("how", ["wait", "wait_any"])
def test_closing_a_signal_other_threads_wait_on(how, hsa_rt):
    """close() while threads wait on the signal: the waiters raise ClosedError at their
    next slice, and the native destroy happens only once the last has left."""
    import threading

    from rocpy import hsa
    sig, other = hsa.Signal(1), hsa.Signal(1)
    outcomes, started = [], threading.Barrier(5)

    def waiter():
        started.wait()
        try:
            if how == "wait":
                sig.wait("eq", 0, timeout=10)
            else:
                hsa.Signal.wait_any([other, sig], timeout=10)
            outcomes.append("returned")
        except rocpy.ClosedError as e:
            outcomes.append("closed" if "closed while waited on" in str(e) else repr(e))

    threads = [threading.Thread(target=waiter) for _ in range(4)]
    for t in threads:
        t.start()
    started.wait()
    deadline = time.monotonic() + 5
    while sig._rec.children < 4 and time.monotonic() < deadline:
        time.sleep(0.001)                  # until all four are inside the wait
    sig.close()
    assert sig.closed                       # closed for every use at once
    # ... but not destroyed under the waiters (they leave at the end of a 0.1 s slice)
    assert rocpy.debug.live_objects().get("Signal") == 2
    with pytest.raises(rocpy.ClosedError):
        sig.load()
    for t in threads:
        t.join(5)
    assert outcomes == ["closed"] * 4
    other.close()
    assert "Signal" not in rocpy.debug.live_objects()   # destroyed once the waiters left
