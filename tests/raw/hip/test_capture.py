"""Stream capture (seed 003 section 7; ROCm/clr hip_graph.cpp rules): work
on a capturing stream becomes graph nodes instead of running; calls that
are unsafe during a capture fail and invalidate it, as its mode says."""
from __future__ import annotations

import threading

import numpy as np

from .helpers import (requires, PER_THREAD, HostLog, check, event, ffi, hipamd, lib, malloc, ok, stream)

pytestmark = requires("hipStreamBeginCapture", "hipGraphCreate")

GLOBAL, THREAD_LOCAL, RELAXED = (lib.hipStreamCaptureModeGlobal,
                                 lib.hipStreamCaptureModeThreadLocal,
                                 lib.hipStreamCaptureModeRelaxed)


def status_of(s):
    st = ffi.new("hipStreamCaptureStatus *")
    ok(lib.hipStreamIsCapturing(s, st))
    return st[0]


def end(s, expected="hipSuccess"):
    g = ffi.new("hipGraph_t *")
    check(lib.hipStreamEndCapture(s, g), expected)
    return g[0]


def node_count(g):
    n = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, ffi.NULL, n))
    return n[0]


def on_other_thread(fn):
    """Run fn() to its end on a new thread; what it returned."""
    result = []
    t = threading.Thread(target=lambda: result.append(fn()))
    t.start()
    t.join()
    return result[0]


def run(g, s):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipGraphExecDestroy(x[0]))


# platform-independent: captured work is recorded, not run, then replayed
def test_capture_records_instead_of_running():
    n = 64
    d = malloc(n * 4)
    ok(lib.hipMemset(d, 0, n * 4))
    out = np.zeros(n, dtype=np.uint32)
    s = stream()
    log = HostLog()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    assert status_of(s) == lib.hipStreamCaptureStatusActive
    ok(lib.hipMemsetD32Async(d, 5, n, s))
    log.enqueue(s, "host")
    ok(lib.hipMemcpyAsync(ffi.from_buffer(out), d, n * 4, lib.hipMemcpyDeviceToHost, s))
    st, cid = ffi.new("hipStreamCaptureStatus *"), ffi.new("unsigned long long *")
    ok(lib.hipStreamGetCaptureInfo(s, st, cid))
    assert st[0] == lib.hipStreamCaptureStatusActive and cid[0] > 0
    graph_out, ndeps = ffi.new("hipGraph_t *"), ffi.new("size_t *")
    deps_out = ffi.new("hipGraphNode_t **")
    ok(lib.hipStreamGetCaptureInfo_v2(s, st, cid, graph_out, deps_out, ndeps))
    assert ndeps[0] == 1 and graph_out[0] != ffi.NULL
    g = end(s)
    assert status_of(s) == lib.hipStreamCaptureStatusNone
    assert log.entries == [] and (out == 0).all()          # nothing ran
    assert node_count(g) == 3
    run(g, s)
    assert log.entries == ["host"] and (out == 5).all()
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# platform-independent: fork and join through events
def test_fork_join_across_streams():
    origin, side = stream(), stream()
    fork, join = event(lib.hipEventDisableTiming), event(lib.hipEventDisableTiming)
    log = HostLog()
    ok(lib.hipStreamBeginCapture(origin, GLOBAL))
    log.enqueue(origin, "start")
    ok(lib.hipEventRecord(fork, origin))
    ok(lib.hipStreamWaitEvent(side, fork, 0))
    assert status_of(side) == lib.hipStreamCaptureStatusActive
    log.enqueue(side, "side", delay=0.05)
    log.enqueue(origin, "main")
    ok(lib.hipEventRecord(join, side))
    ok(lib.hipStreamWaitEvent(origin, join, 0))
    log.enqueue(origin, "end")
    check(lib.hipStreamEndCapture(side, ffi.new("hipGraph_t *")),
          "hipErrorStreamCaptureUnmatched")
    g = end(origin)
    assert status_of(side) == lib.hipStreamCaptureStatusNone
    assert node_count(g) == 4
    run(g, origin)
    assert log.entries[0] == "start" and log.entries[-1] == "end"
    assert sorted(log.entries[1:3]) == ["main", "side"]
    ok(lib.hipGraphDestroy(g))
    for x in (fork, join):
        ok(lib.hipEventDestroy(x))
    for x in (origin, side):
        ok(lib.hipStreamDestroy(x))


# platform-independent: a fork that never joins back
def test_unjoined_fork():
    origin, side = stream(), stream()
    fork = event()
    log = HostLog()
    ok(lib.hipStreamBeginCapture(origin, GLOBAL))
    ok(lib.hipEventRecord(fork, origin))
    ok(lib.hipStreamWaitEvent(side, fork, 0))
    log.enqueue(side, "lost")
    log.enqueue(origin, "main")
    end(origin, "hipErrorStreamCaptureUnjoined")
    assert status_of(side) == lib.hipStreamCaptureStatusNone
    ok(lib.hipEventDestroy(fork))
    ok(lib.hipStreamDestroy(origin))
    ok(lib.hipStreamDestroy(side))


# hipamd-specific statuses of the capture calls
@hipamd
def test_bad_capture_calls():
    s = stream()
    check(lib.hipStreamBeginCapture(ffi.NULL, GLOBAL), "hipErrorStreamCaptureUnsupported")
    check(lib.hipStreamBeginCapture(s, 7), "hipErrorInvalidValue")
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(lib.hipStreamBeginCapture(s, GLOBAL), "hipErrorIllegalState")
    end(s)
    check(lib.hipStreamEndCapture(s, ffi.new("hipGraph_t *")), "hipErrorIllegalState")
    check(lib.hipStreamEndCapture(s, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipStreamEndCapture(ffi.NULL, ffi.new("hipGraph_t *")), "hipErrorIllegalState")
    check(lib.hipStreamIsCapturing(s, ffi.NULL), "hipErrorInvalidValue")
    assert status_of(ffi.NULL) == lib.hipStreamCaptureStatusNone
    mode = ffi.new("hipStreamCaptureMode *", 9)
    check(lib.hipThreadExchangeStreamCaptureMode(mode), "hipErrorInvalidValue")
    check(lib.hipThreadExchangeStreamCaptureMode(ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipStreamDestroy(s))
    check(lib.hipStreamBeginCapture(s, GLOBAL), "hipErrorContextIsDestroyed")
    check(lib.hipStreamIsCapturing(s, ffi.new("hipStreamCaptureStatus *")),
          "hipErrorContextIsDestroyed")


# platform-independent: synchronising a capturing stream invalidates it
def test_synchronize_invalidates():
    s = stream()
    log = HostLog()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(lib.hipStreamSynchronize(s), "hipErrorStreamCaptureUnsupported")
    assert status_of(s) == lib.hipStreamCaptureStatusInvalidated
    check(lib.hipLaunchHostFunc(s, log.host_fn("x"), ffi.NULL),
          "hipErrorStreamCaptureInvalidated")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(lib.hipStreamQuery(s), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))
    assert log.entries == []


# platform-independent: in global mode an allocation anywhere is unsafe...
def test_global_mode_forbids_allocation_in_every_thread():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    p = ffi.new("void **")
    check(on_other_thread(lambda: lib.hipMalloc(p, 64)), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))


# platform-independent: ...unless that thread chose relaxed for itself
def test_thread_exchange_to_relaxed_allows_allocation():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))

    def relaxed_thread():
        mode = ffi.new("hipStreamCaptureMode *", RELAXED)
        result = [lib.hipThreadExchangeStreamCaptureMode(mode), mode[0]]
        p = ffi.new("void **")
        result.append(lib.hipMalloc(p, 64))
        result.append(lib.hipFree(p[0]))
        return result

    assert on_other_thread(relaxed_thread) == [lib.hipSuccess, GLOBAL, lib.hipSuccess, lib.hipSuccess]
    g = end(s)
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


# platform-independent: thread-local captures only bind their own thread
def test_thread_local_mode():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, THREAD_LOCAL))

    def other():
        p = ffi.new("void **")
        allocated = lib.hipMalloc(p, 64)
        return allocated, lib.hipFree(p[0])

    assert on_other_thread(other) == (lib.hipSuccess, lib.hipSuccess)
    p = ffi.new("void **")
    check(lib.hipMalloc(p, 64), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))


# platform-independent: relaxed captures forbid nothing
def test_relaxed_mode_allows_allocation_and_end_from_another_thread():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, RELAXED))
    d = malloc(64)
    ok(lib.hipFree(d))
    ok(lib.hipGraphDestroy(on_other_thread(lambda: end(s))))
    ok(lib.hipStreamDestroy(s))


# platform-independent: a non-relaxed capture must end in its own thread
def test_end_from_another_thread_is_wrong_thread():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(on_other_thread(lambda: lib.hipStreamEndCapture(s, ffi.new("hipGraph_t *"))),
          "hipErrorStreamCaptureWrongThread")
    g = end(s)
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


# platform-independent: synchronous copies and device synchronisation
def test_synchronous_calls_during_capture():
    s = stream()
    d = malloc(64)
    host = np.zeros(16, dtype=np.uint32)
    ok(lib.hipStreamBeginCapture(s, RELAXED))
    check(lib.hipMemcpy(d, ffi.from_buffer(host), 64, lib.hipMemcpyHostToDevice),
          "hipErrorStreamCaptureImplicit")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamBeginCapture(s, RELAXED))
    check(lib.hipMemset(d, 0, 64), "hipErrorStreamCaptureImplicit")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipamd-specific (ROCm/clr's CHECK_SUPPORTED_DURING_CAPTURE): no device
# synchronisation during any capture
@hipamd
def test_device_synchronize_during_capture():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, RELAXED))
    check(lib.hipDeviceSynchronize(), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))


# platform-independent: the legacy null stream would wait for a capturing
# blocking stream: refused; a non-blocking capture does not involve it
def test_legacy_stream_and_capture():
    blocking, nonblocking = stream(), stream(lib.hipStreamNonBlocking)
    log = HostLog()
    ok(lib.hipStreamBeginCapture(blocking, RELAXED))
    check(lib.hipLaunchHostFunc(ffi.NULL, log.host_fn("null"), ffi.NULL),
          "hipErrorStreamCaptureImplicit")
    end(blocking, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamBeginCapture(nonblocking, RELAXED))
    log.enqueue(ffi.NULL, "null")
    ok(lib.hipStreamSynchronize(ffi.NULL))
    g = end(nonblocking)
    assert log.entries == ["null"]
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(blocking))
    ok(lib.hipStreamDestroy(nonblocking))


# hipamd-specific (ROCm/clr): in global mode, waiting on an event of a user
# stream from any thread is unsafe too
@hipamd
def test_event_synchronize_during_global_capture():
    s, other = stream(), stream()
    e = event()
    ok(lib.hipEventRecord(e, other))
    ok(lib.hipStreamSynchronize(other))
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(on_other_thread(lambda: lib.hipEventSynchronize(e)), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipEventSynchronize(e))
    ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipStreamDestroy(other))


# hipamd-specific (ROCm/clr): an event recorded in a capture cannot be
# queried, and trying invalidates the capture
@hipamd
def test_captured_event_cannot_be_queried():
    s = stream()
    e = event()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    ok(lib.hipEventRecord(e, s))
    check(lib.hipEventQuery(e), "hipErrorCapturedEvent")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipEventQuery(e))
    ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))


# hipamd-specific: stream callbacks are refused in a capture (as CUDA does)
@hipamd
def test_stream_callback_during_capture():
    s = stream()
    cb = ffi.callback("void(hipStream_t, hipError_t, void *)", lambda *a: None)
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    check(lib.hipStreamAddCallback(s, cb, ffi.NULL, 0), "hipErrorStreamCaptureUnsupported")
    end(s, "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))


# platform-independent: the per-thread stream captures like any other
def test_capture_on_per_thread_stream():
    log = HostLog()
    ok(lib.hipStreamBeginCapture(PER_THREAD, THREAD_LOCAL))
    log.enqueue(PER_THREAD, "a")
    log.enqueue(PER_THREAD, "b")
    g = end(PER_THREAD)
    assert node_count(g) == 2 and log.entries == []
    run(g, PER_THREAD)
    assert log.entries == ["a", "b"]
    ok(lib.hipGraphDestroy(g))


# hipamd-specific: destroying a capturing stream ends its capture
@hipamd
def test_destroying_a_capturing_stream():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    ok(lib.hipStreamDestroy(s))
    d = malloc(16)                        # no capture forbids it any more
    ok(lib.hipFree(d))
