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

from rocpy import hip
from rel_support import SLOW, has_hsa

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
        except BaseException as exc:  # noqa: BLE001 - reported below
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
        except BaseException as exc:  # noqa: BLE001 - raised in __exit__
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
                    s.done                                     # noqa: B018 - a query
                elif op == 8:
                    ctx.alloc(64).close()                      # allocation churn
                elif n % 1000 == 9:
                    mine.synchronize()
                else:
                    tmp = ctx.alloc(16)
                    tmp.fill(0, stream=mine)                   # dropped: freed by the reaper
                    del tmp
            mine.synchronize()
            out = bufs[i].copy_to(np.empty(WORDS, np.uint32))
            assert (out == last[i]).all(), f"thread {i}: buffer holds {out[0]}, wrote {last[i]} last"
        finally:
            mine.synchronize()
            mine.close()

    with Collector(dev) as collector:
        run_threads(work)
    for s in shared:
        s.synchronize()
    dev.synchronize()
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
        s.synchronize()

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
                q.dispatch(k, WORDS, WORDS, (bufs[i], n, WORDS), completion_signal=done)
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
        q.synchronize(timeout=30)
    # +1 then +1 (even n) or -1 (odd n), from eight threads at once: atomic, nothing lost
    assert counter.load() == THREADS * 2 * ((n_dispatch + 1) // 2)
    assert fired == [1] * THREADS, f"asynchronous handlers lost or repeated: {fired}"
    for o in (*queues, counter, *bufs):
        o.close()
    del k
