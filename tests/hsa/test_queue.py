"""hsa.Queue: dispatches and their results, batches, barriers, indices, errors, lifetimes."""
from __future__ import annotations

import os
import sys
import threading

import numpy as np
import pytest

from rocpy import debug, hsa
from rocpy.codeobject import ArgumentCountError, ArgumentTypeError, LaunchConfigError
from rocpy.errors import CallbackError, CallbackWarning, ClosedError, HsaError

EXTRA_SOURCE = """
#include <hip/hip_runtime.h>
extern "C" __global__ void rocpy_hsa_boom(int *p) { p[0] = 1; }
extern "C" __global__ void rocpy_hsa_unemulated(int *p) { p[0] = 2; }
"""


@pytest.fixture
def extra(gpu, kernel_cache, tmp_path_factory):
    """Kernels the stub cannot run: one whose emulation fails, one without emulation."""
    from rocpy import stub
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from kernels.compile import compile_hip, find_hipcc
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed")
    src = tmp_path_factory.mktemp("src") / "rocpy_hsa_extra.hip"
    src.write_text(EXTRA_SOURCE)
    path = compile_hip("rocpy_hsa_extra", kernel_cache, (gpu.name,), source=str(src))
    stub.register_kernel("rocpy_hsa_boom", lambda d: 1)
    with hsa.Executable.load(gpu, path) as exe:
        yield exe
    stub.unregister_kernel("rocpy_hsa_boom")


def _vadd_case(shared, n):
    a, b, c = shared(n * 4), shared(n * 4), shared(n * 4)
    a.numpy(np.float32)[:] = np.arange(n, dtype=np.float32)
    b.numpy(np.float32)[:] = 2 * np.arange(n, dtype=np.float32)
    c.numpy(np.float32)[:] = -1
    return a, b, c


def test_dispatch_vadd(q, vadd, shared):
    n = 1000
    a, b, c = _vadd_case(shared, n)
    done = hsa.Signal(1)
    q.dispatch(vadd, grid=(n,), workgroup=(256,), args=(a, b, c, np.int32(n)),
               completion_signal=done)
    assert done.wait("eq", 0, timeout=30, raise_on_timeout=True) == 0
    assert (c.numpy(np.float32) == 3 * np.arange(n)).all()
    assert q.read_index == q.write_index == 1


def test_dispatch_fill_into_gpu_memory(q, fill, gpu, host_pool):
    dev = gpu.pools(segment="global", fine_grained=False)[0].allocate(4096)
    dev.fill(0)                        # allocations are not cleared
    done = hsa.Signal(1)
    q.dispatch(fill, 1024, 64, (dev, np.uint32(0xC0FFEE), np.int32(1000)), completion_signal=done)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    out = host_pool.allocate(4096)
    out.allow_access([gpu])            # the GPU's blit kernel writes it
    hsa.copy(out, dev, 4096)
    got = out.numpy(np.uint32)
    assert (got[:1000] == 0xC0FFEE).all() and (got[1000:] == 0).all()


def test_one_signal_for_many_dispatches(q, empty):
    done = hsa.Signal(10)
    for _ in range(10):
        q.dispatch(empty, 64, 64, completion_signal=done)
    assert done.wait("eq", 0, timeout=30) == 0


def test_dispatch_many_prepared(q, vadd, shared):
    n = 256
    cases = [_vadd_case(shared, n) for _ in range(4)]
    done = hsa.Signal(len(cases))
    batch = [vadd.prepare(n, 64, (a, b, c, np.int32(n)), completion_signal=done) for a, b, c in cases]
    assert "vadd" in repr(batch[0])
    q.dispatch_many(batch)
    assert done.wait("eq", 0, timeout=30, raise_on_timeout=True) == 0
    for a, b, c in cases:
        assert (c.numpy(np.float32) == 3 * np.arange(n)).all()
    assert q.write_index == len(cases)


def test_dispatch_many_repeats_one(q, empty):
    done = hsa.Signal(100)
    d = hsa.Dispatch(empty, 1, 1, completion_signal=done)
    q.dispatch_many(d, count=100)
    q.dispatch_many(d, count=0)
    assert done.wait("eq", 0, timeout=30) == 0
    q.dispatch_many([])
    with pytest.raises(ValueError, match="count must be"):
        q.dispatch_many(d, count=-1)
    with pytest.raises(TypeError, match="count= goes with a single Dispatch"):
        q.dispatch_many([d], count=2)
    with pytest.raises(TypeError, match=r"dispatches\[1\] must be an hsa.Dispatch"):
        q.dispatch_many([d, "d"])
    d.close()
    assert "closed" in repr(d)
    with pytest.raises(ClosedError, match="Dispatch is closed"):
        q.dispatch_many([d])
    with pytest.raises(ClosedError, match="Dispatch is closed"):
        q.dispatch_many(d, count=1)


def test_wrong_arguments(q, vadd):
    with pytest.raises(ArgumentCountError, match="takes 4 arguments"):
        q.dispatch(vadd, 64, 64, (0, 0, 0))
    with pytest.raises(ArgumentTypeError, match=r"args\[3\]"):
        q.dispatch(vadd, 64, 64, (0, 0, 0, "four"))
    with pytest.raises(ArgumentTypeError, match=r"args\[0\]"):
        q.dispatch(vadd, 64, 64, (np.zeros(4), 0, 0, 1))
    with pytest.raises(TypeError, match="kernel must be an hsa.Kernel"):
        q.dispatch("vadd", 64, 64, ())
    assert q.write_index == 0          # nothing was submitted


def test_kernel_without_arguments_refuses_some(q, empty):
    with pytest.raises(ArgumentCountError, match="takes 0 arguments"):
        q.dispatch(empty, 64, 64, (1,))


def test_bad_geometry(q, empty):
    for grid, wg in (((0,), 64), (64, 0), ((1, 2, 3, 4), 1), (64, 4096), (64, (64, 64)),
                     (2.5, 64)):
        with pytest.raises(LaunchConfigError):
            q.dispatch(empty, grid, wg)
    with pytest.raises(LaunchConfigError, match="dynamic_lds"):
        q.dispatch(empty, 64, 64, dynamic_lds=-1)
    with pytest.raises(ValueError, match="fence scopes"):
        q.dispatch(empty, 64, 64, fences=("system", "galaxy"))
    assert q.write_index == 0


def test_unhashable_geometry_works(q, empty):
    done = hsa.Signal(1)
    q.dispatch(empty, [64, 2], [32, 2], completion_signal=done, fences=["agent", "system"])
    assert done.wait("eq", 0, timeout=30) == 0


def test_closed_things_refuse(gpu, q, vadd, empty):
    sig = hsa.Signal(1)
    sig.close()
    with pytest.raises(ClosedError, match="completion signal is closed"):
        q.dispatch(empty, 64, 64, completion_signal=sig)
    vadd.executable.close()
    with pytest.raises(ClosedError, match="Kernel is closed"):
        q.dispatch(vadd, 64, 64, (0, 0, 0, np.int32(1)))
    q.close()
    for use in (lambda: q.dispatch(empty, 64, 64), lambda: q.barrier_and([]),
                lambda: q.read_index, q.sync, lambda: q.dispatch_many([])):
        with pytest.raises(ClosedError, match="Queue is closed"):
            use()


def test_barrier_and_waits_for_every_dependency(q, empty):
    s1, s2, s3, after = hsa.Signal(1), hsa.Signal(1), hsa.Signal(1), hsa.Signal(1)
    q.barrier_and([s1, None, s2], completion_signal=s3)
    q.dispatch(empty, 64, 64, completion_signal=after)
    assert s3.wait("eq", 0, timeout=0.05) == 1
    s1.store(0)
    assert s3.wait("eq", 0, timeout=0.05) == 1
    s2.store(0)
    assert s3.wait("eq", 0, timeout=30) == 0
    assert after.wait("eq", 0, timeout=30) == 0


def test_barrier_or_waits_for_any(q):
    s1, s2, done = hsa.Signal(1), hsa.Signal(1), hsa.Signal(1)
    q.barrier_or([s1, s2], completion_signal=done, barrier=True, fences="agent")
    assert done.wait("eq", 0, timeout=0.05) == 1
    s2.store(0)
    assert done.wait("eq", 0, timeout=30) == 0


def test_barrier_arguments(q):
    with pytest.raises(ValueError, match="barrier-OR packet takes at most 5 dependency signals"):
        q.barrier_or([hsa.Signal(0) for _ in range(6)])   # barrier_and chains (test_queue_control)
    with pytest.raises(TypeError, match=r"deps\[0\] must be an hsa.Signal"):
        q.barrier_or([1])
    q.barrier_and([])                       # no dependencies: completes at once
    q.sync(timeout=30)


def test_profiling_dispatch_times(gpu, empty):
    with gpu.create_queue(profiling=True) as q:
        assert q.profiling
        done = hsa.Signal(1)
        q.dispatch(empty, 1024, 64, completion_signal=done)
        done.wait("eq", 0, timeout=30, raise_on_timeout=True)
        t = q.dispatch_time(done)
        assert 0 < t.start <= t.end and t.seconds >= 0 and t.frequency > 0
        q.profiling = False
        assert not q.profiling


def test_kernarg_ring_wraps_and_results_stay_right(gpu, vadd, shared):
    n = 64
    with gpu.create_queue(size=64, kernarg_bytes=8192, kernarg_segments=2) as q:
        cases = [_vadd_case(shared, n) for _ in range(8)]
        done = hsa.Signal(400)
        for i in range(400):        # 400 x 64 B of kernarg: many segments, many ring laps
            a, b, c = cases[i % len(cases)]
            q.dispatch(vadd, n, 64, (a, b, c, np.int32(n)), completion_signal=done)
        assert done.wait("eq", 0, timeout=60, raise_on_timeout=True) == 0
        assert q.kernarg_generation > 4
        for a, b, c in cases:
            assert (c.numpy(np.float32) == 3 * np.arange(n)).all()
        q.sync(timeout=30)


def test_kernarg_too_large_for_the_ring(gpu, vadd):
    with gpu.create_queue(kernarg_bytes=4096, kernarg_segments=1) as q:
        q.dispatch(vadd, 64, 64, (0, 0, 0, np.int32(0)))        # fits (n = 0: touches no memory)
        with pytest.raises(ValueError, match="kernarg_bytes"):
            gpu.create_queue(kernarg_bytes=1024)


def test_what_a_dispatch_uses_lives_until_it_is_done(q, vadd, shared):
    n = 64
    gate, done = hsa.Signal(1), hsa.Signal(1)
    q.barrier_and([gate])                   # holds the dispatch back
    a, b, c = _vadd_case(shared, n)
    q.dispatch(vadd, n, 64, (a, b, c, np.int32(n)), completion_signal=done)
    del a, b, c
    debug.collect()
    assert debug.live_objects()["Buffer"] == 3
    gate.store(0)
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    q.sync(timeout=30)
    debug.collect()
    assert "Buffer" not in debug.live_objects()


def test_close_on_a_queue_releases_after_its_submitted_work(q, shared):
    """``close(stream=queue)``: the queue is a keep-alive timeline as a stream is
    (`rocpy._keepalive.Timeline`): the release waits for the packets submitted so far."""
    gate = hsa.Signal(1)
    buf = shared(64)
    q.barrier_and([gate])                   # the queue's work is not done
    buf.close(stream=q)
    assert buf.closed
    debug.collect()
    assert debug.live_objects()["Buffer"] == 1
    gate.store(0)
    q.sync(timeout=30)
    debug.collect()
    assert "Buffer" not in debug.live_objects()


def test_close_on_a_closed_queue_releases_now(gpu, shared):
    buf = shared(64)
    queue = gpu.create_queue()
    queue.close()
    buf.close(stream=queue)                 # no work left on it: nothing to wait for
    debug.collect()
    assert "Buffer" not in debug.live_objects()


def test_a_prepared_dispatch_holds_its_buffers(vadd, shared):
    a, b, c = _vadd_case(shared, 64)
    d = vadd.prepare(64, 64, (a, b, c, np.int32(64)))
    c.close()                                   # deferred: the dispatch uses it
    assert debug.live_objects()["Buffer"] == 3
    del d
    debug.collect()
    assert debug.live_objects()["Buffer"] == 2


def test_ring_full_waits_for_space(gpu, empty):
    with gpu.create_queue(size=gpu.queue_min_size) as q:
        done = hsa.Signal(2000)
        for _ in range(2000):
            q.dispatch(empty, 1, 1, completion_signal=done)
        assert done.wait("eq", 0, timeout=60) == 0
        assert q.write_index >= 2000


def test_synchronize(q, empty):
    q.sync(timeout=10)
    for _ in range(50):
        q.dispatch(empty, 64, 64)
    q.sync(timeout=30)
    assert q.read_index == q.write_index
    gate = hsa.Signal(1)
    q.barrier_and([gate])
    with pytest.raises(TimeoutError):
        q.sync(timeout=0.05)
    gate.store(0)
    q.sync(timeout=30)


# ---- queue errors --------------------------------------------------------------------------

def test_queue_error_is_raised_by_the_next_use(gpu, empty, stub_only, wait_for):
    from rocpy import stub
    seen = []
    got = threading.Event()
    with gpu.create_queue(on_error=lambda exc: (seen.append(exc), got.set())) as q:
        done = hsa.Signal(1)
        stub.inject("queue_error")
        q.dispatch(empty, 64, 64, completion_signal=done)
        assert got.wait(30)
        assert isinstance(seen[0], HsaError) and seen[0].name == "HSA_STATUS_ERROR_EXCEPTION"
        wait_for(lambda: q.error is not None)
        for _ in range(2):                       # the next use, and every use after
            with pytest.raises(HsaError) as e:
                q.dispatch(empty, 64, 64)
            assert e.value.name == "HSA_STATUS_ERROR_EXCEPTION"
            assert "asynchronous error" in e.value.call
        with pytest.raises(HsaError):
            q.barrier_and([])
        with pytest.raises(HsaError):
            q.sync()
        assert done.load() == 1                  # the failed packet never completed
        assert "failed" in repr(q)


def test_queue_error_without_a_handler(gpu, empty, stub_only, wait_for):
    from rocpy import stub
    q = gpu.create_queue()
    stub.inject("queue_error")
    q.dispatch(empty, 64, 64)
    wait_for(lambda: q.error is not None)
    with pytest.raises(HsaError, match="HSA_STATUS_ERROR_EXCEPTION"):
        q.dispatch(empty, 64, 64)
    q.close()


def test_queue_error_stops_a_waiting_producer(gpu, empty, stub_only):
    from rocpy import stub
    with gpu.create_queue(size=gpu.queue_min_size) as q:
        stub.inject("queue_error")
        with pytest.raises(HsaError, match="HSA_STATUS_ERROR_EXCEPTION"):
            for _ in range(10 * gpu.queue_min_size):  # fills the ring, then waits for space
                q.dispatch(empty, 1, 1)


def test_closing_from_on_error_releases_a_waiting_producer(gpu, empty, stub_only, wait_for):
    from rocpy import stub
    queues = []
    q = gpu.create_queue(size=gpu.queue_min_size, on_error=lambda exc: queues[0].close())
    queues.append(q)
    stub.inject("queue_error")
    with pytest.raises((ClosedError, HsaError)):
        for _ in range(10 * gpu.queue_min_size):
            q.dispatch(empty, 1, 1)
    wait_for(lambda: q.closed)
    queues.clear()


def test_close_from_another_thread_stops_synchronize(gpu, empty):
    q = gpu.create_queue()
    gate = hsa.Signal(1)
    q.barrier_and([gate])
    q.dispatch(empty, 1, 1)
    timer = threading.Timer(0.1, q.close)
    timer.start()
    with pytest.raises(ClosedError):
        q.sync(timeout=30)
    timer.join()


def test_on_error_exceptions_are_reported(gpu, empty, stub_only, wait_for):
    from rocpy import stub

    def handler(exc):
        raise RuntimeError("handler failed")

    with gpu.create_queue(on_error=handler) as q:
        stub.inject("queue_error")
        with pytest.warns(CallbackWarning, match="handler failed"):
            q.dispatch(empty, 64, 64)
            wait_for(lambda: q._failed.errors.pending)   # stored after its warning
        with pytest.raises(CallbackError, match="handler failed"):
            q.dispatch(empty, 64, 64)
        with pytest.raises(HsaError, match="HSA_STATUS_ERROR_EXCEPTION"):
            q.dispatch(empty, 64, 64)


def test_a_failing_kernel_fails_the_queue(gpu, extra, shared, stub_only, wait_for):
    p = shared(64)
    for name, status in (("rocpy_hsa_boom", "HSA_STATUS_ERROR_EXCEPTION"),
                         ("rocpy_hsa_unemulated", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT")):
        with gpu.create_queue() as q:
            q.dispatch(extra.kernel(name), 1, 1, (p,))
            wait_for(lambda: q.error is not None)
            assert q.error.name == status


def test_kernel_of_another_agent(run_python, vadd_path, stub_only):
    code = f"""
        import numpy as np
        from rocpy import hsa
        with hsa.Runtime() as rt:
            g0, g1 = rt.gpu_agents
            k = hsa.Executable.load(g0, {vadd_path!r}).kernel("vadd")
            q = g1.create_queue()
            try:
                q.dispatch(k, 64, 64, (0, 0, 0, np.int32(1)))
            except ValueError as e:
                print("REFUSED", e)
            q.close()
    """
    proc = run_python(code, env={"ROCPY_STUB_DEVICES": "2", "ROCPY_STUB_ARCH": "gfx90a"})
    assert proc.returncode == 0, proc.stderr
    assert "REFUSED kernel 'vadd' was loaded for" in proc.stdout
