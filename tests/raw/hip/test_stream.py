"""Streams (hipamd hip_stream.cpp): creation, flags and priorities, handle
validation, queries, host callbacks, the legacy null stream's implicit
synchronisation and the per-thread default stream."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from .helpers import (BACKEND, PER_THREAD, HostLog, check, ffi, hipamd, lib, malloc, ok,
                      stream)


# platform-independent
def test_create_with_flags_and_priority():
    s = ffi.new("hipStream_t *")
    ok(lib.hipStreamCreate(s))
    flags, prio = ffi.new("unsigned int *"), ffi.new("int *")
    ok(lib.hipStreamGetFlags(s[0], flags))
    assert flags[0] == lib.hipStreamDefault
    ok(lib.hipStreamDestroy(s[0]))
    ok(lib.hipStreamCreateWithFlags(s, lib.hipStreamNonBlocking))
    ok(lib.hipStreamGetFlags(s[0], flags))
    assert flags[0] == lib.hipStreamNonBlocking
    ok(lib.hipStreamDestroy(s[0]))
    least, greatest = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipDeviceGetStreamPriorityRange(least, greatest))
    for asked, got in [(greatest[0], greatest[0]), (least[0], least[0]),
                       (greatest[0] - 5, greatest[0]), (least[0] + 5, least[0])]:
        ok(lib.hipStreamCreateWithPriority(s, 0, asked))
        ok(lib.hipStreamGetPriority(s[0], prio))
        assert prio[0] == got                       # clamped to the range
        ok(lib.hipStreamDestroy(s[0]))
    check(lib.hipStreamCreate(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipStreamCreateWithFlags(ffi.NULL, 0), "hipErrorInvalidValue")


# hipamd-specific statuses
@hipamd
def test_bad_stream_handles():
    s = ffi.new("hipStream_t *")
    check(lib.hipStreamCreateWithFlags(s, 2), "hipErrorInvalidValue")
    check(lib.hipStreamCreateWithPriority(s, 7, 0), "hipErrorInvalidValue")
    check(lib.hipStreamCreateWithPriority(ffi.NULL, 0, 0), "hipErrorInvalidValue")
    check(lib.hipStreamDestroy(ffi.NULL), "hipErrorInvalidHandle")
    check(lib.hipStreamDestroy(PER_THREAD), "hipErrorInvalidHandle")   # = InvalidResourceHandle
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    check(lib.hipStreamDestroy(dead), "hipErrorContextIsDestroyed")
    check(lib.hipStreamSynchronize(dead), "hipErrorContextIsDestroyed")
    check(lib.hipStreamQuery(dead), "hipErrorContextIsDestroyed")
    flags, prio = ffi.new("unsigned int *"), ffi.new("int *")
    check(lib.hipStreamGetFlags(dead, flags), "hipErrorContextIsDestroyed")
    check(lib.hipStreamGetFlags(ffi.NULL, flags), "hipErrorInvalidValue")   # the null stream
    check(lib.hipStreamGetPriority(dead, prio), "hipErrorContextIsDestroyed")
    ok(lib.hipStreamGetPriority(ffi.NULL, prio))
    assert prio[0] == 0
    check(lib.hipStreamGetPriority(ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    cb = ffi.callback("void(hipStream_t, hipError_t, void *)", lambda *a: None)
    check(lib.hipStreamAddCallback(dead, cb, ffi.NULL, 0), "hipErrorContextIsDestroyed")
    check(lib.hipStreamAddCallback(ffi.NULL, cb, ffi.NULL, 1), "hipErrorInvalidValue")
    check(lib.hipStreamAddCallback(ffi.NULL, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    fn = ffi.callback("void(void *)", lambda u: None)
    check(lib.hipLaunchHostFunc(dead, fn, ffi.NULL), "hipErrorContextIsDestroyed")
    check(lib.hipLaunchHostFunc(ffi.NULL, ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    assert lib.hipGetStreamDeviceId(dead) == -1
    assert lib.hipGetStreamDeviceId(ffi.NULL) == 0


# hipamd-specific: CU masks
@hipamd
def test_cu_mask():
    s = ffi.new("hipStream_t *")
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(p, 0))
    words = (p.multiProcessorCount + 31) // 32
    mask = ffi.new("uint32_t[]", [0x0000FFFF] * words)
    ok(lib.hipExtStreamCreateWithCUMask(s, words, mask))
    out = ffi.new("uint32_t[]", words)
    ok(lib.hipExtStreamGetCUMask(s[0], words, out))
    assert out[0] == 0xFFFF
    check(lib.hipExtStreamGetCUMask(s[0], words - 1, out), "hipErrorInvalidValue")
    check(lib.hipExtStreamGetCUMask(s[0], words, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipExtStreamGetCUMask(ffi.NULL, words, out))
    assert bin(sum(out[i] << (32 * i) for i in range(words))).count("1") == p.multiProcessorCount
    ok(lib.hipStreamDestroy(s[0]))
    check(lib.hipExtStreamCreateWithCUMask(ffi.NULL, 1, mask), "hipErrorInvalidHandle")
    check(lib.hipExtStreamCreateWithCUMask(s, 0, mask), "hipErrorInvalidValue")


# platform-independent: query and synchronize follow the work
def test_query_not_ready_then_ready():
    s = stream()
    ok(lib.hipStreamQuery(s))
    log = HostLog()
    log.enqueue(s, "slow", delay=0.1)
    check(lib.hipStreamQuery(s), "hipErrorNotReady")
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipStreamQuery(s))
    assert log.entries == ["slow"]
    ok(lib.hipStreamDestroy(s))


# platform-independent: destroying a stream lets its pending work complete
def test_destroy_completes_pending_work():
    s = stream()
    log = HostLog()
    log.enqueue(s, "pending", delay=0.05)
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipDeviceSynchronize())
    assert log.entries == ["pending"]


# platform-independent: callbacks run in order, on another thread, and the
# stream waits for them
def test_callbacks_in_stream_order():
    s = stream()
    d = malloc(4)
    seen = []
    me = threading.get_ident()

    @ffi.callback("void(hipStream_t, hipError_t, void *)")
    def cb(stream_, status, user):
        seen.append((stream_ == s, status, int(ffi.cast("intptr_t", user)),
                     threading.get_ident() != me))
        time.sleep(0.02)

    ok(lib.hipMemsetD32Async(d, 1, 1, s))
    ok(lib.hipStreamAddCallback(s, cb, ffi.cast("void *", 7), 0))
    log = HostLog()
    log.enqueue(s, "after")
    ok(lib.hipStreamSynchronize(s))
    assert seen == [(True, lib.hipSuccess, 7, True)] and log.entries == ["after"]
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# platform-independent: the legacy null stream waits for blocking streams...
def test_null_stream_waits_for_blocking_streams():
    log = HostLog()
    s = stream(lib.hipStreamDefault)
    log.enqueue(s, "blocking", delay=0.1)
    log.enqueue(ffi.NULL, "null")
    ok(lib.hipDeviceSynchronize())
    assert log.entries == ["blocking", "null"]
    ok(lib.hipStreamDestroy(s))


# platform-independent: ...and blocking streams wait for the null stream
def test_blocking_streams_wait_for_null_stream():
    log = HostLog()
    s = stream(lib.hipStreamDefault)
    log.enqueue(ffi.NULL, "null", delay=0.1)
    log.enqueue(s, "blocking")
    ok(lib.hipDeviceSynchronize())
    assert log.entries == ["null", "blocking"]
    ok(lib.hipStreamDestroy(s))


# platform-independent: non-blocking streams do neither
@pytest.mark.skipif(BACKEND == "nvidia", reason="CUDA runs every stream's host callbacks on one "
                    "thread, so a slow callback holds back the others (platform difference)")
def test_non_blocking_streams_do_not_synchronize_with_null_stream():
    log = HostLog()
    s = stream(lib.hipStreamNonBlocking)
    log.enqueue(s, "nonblocking", delay=0.15)
    log.enqueue(ffi.NULL, "null")
    ok(lib.hipStreamSynchronize(ffi.NULL))
    assert log.entries == ["null"]
    ok(lib.hipDeviceSynchronize())
    log.enqueue(ffi.NULL, "null2", delay=0.15)
    log.enqueue(s, "nonblocking2")
    ok(lib.hipDeviceSynchronize())
    assert log.entries == ["null", "nonblocking", "nonblocking2", "null2"]
    ok(lib.hipStreamDestroy(s))


# platform-independent: two blocking streams are independent of each other
@pytest.mark.skipif(BACKEND == "nvidia", reason="CUDA runs every stream's host callbacks on one "
                    "thread, so a slow callback holds back the others (platform difference)")
def test_blocking_streams_are_concurrent():
    log = HostLog()
    a, b = stream(), stream()
    log.enqueue(a, "a", delay=0.15)
    log.enqueue(b, "b")
    ok(lib.hipStreamSynchronize(b))
    assert log.entries == ["b"]
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipStreamDestroy(a))
    ok(lib.hipStreamDestroy(b))


# platform-independent: work from several threads into several streams keeps
# each thread's order on each stream
def test_many_threads_many_streams_keep_order():
    streams = [stream(lib.hipStreamNonBlocking) for _ in range(3)]
    log = HostLog()
    per_thread = 40

    def submit(t):
        for i in range(per_thread):
            s = streams[(t + i) % len(streams)]
            log.enqueue(s, (t, (t + i) % len(streams), i))

    threads = [threading.Thread(target=submit, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok(lib.hipDeviceSynchronize())
    assert len(log.entries) == 4 * per_thread
    for t in range(4):
        for sidx in range(len(streams)):
            seq = [i for (tt, ss, i) in log.entries if tt == t and ss == sidx]
            assert seq == sorted(seq)
    for s in streams:
        ok(lib.hipStreamDestroy(s))


# platform-independent: device memory work from several threads on one stream
def test_one_stream_fed_by_threads_stays_fifo():
    s = stream()
    n = 256
    d = malloc(n * 4)
    outs = [np.zeros(n, dtype=np.uint32) for _ in range(30)]
    lock = threading.Lock()

    def submit(k):
        for j in range(k, 30, 3):
            with lock:          # the pair is one unit: fill, then read back
                ok(lib.hipMemsetD32Async(d, j, n, s))
                ok(lib.hipMemcpyAsync(ffi.from_buffer(outs[j]), d, n * 4,
                                      lib.hipMemcpyDeviceToHost, s))

    threads = [threading.Thread(target=submit, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok(lib.hipStreamSynchronize(s))
    for j, out in enumerate(outs):
        assert (out == j).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# platform-independent: the per-thread default stream is a blocking stream of
# its own for each thread
def test_per_thread_default_stream():
    log = HostLog()
    flags = ffi.new("unsigned int *")
    ok(lib.hipStreamGetFlags(PER_THREAD, flags))
    assert flags[0] == lib.hipStreamDefault
    log.enqueue(PER_THREAD, "mine", delay=0.1)
    log.enqueue(ffi.NULL, "null")                # waits: a blocking stream
    other = []

    def in_thread():
        lg = HostLog()
        lg.enqueue(PER_THREAD, "theirs")
        other.append(lib.hipStreamQuery(PER_THREAD))
        lib.hipStreamSynchronize(PER_THREAD)
        other.append(lg.entries)

    ok(lib.hipStreamSynchronize(ffi.NULL))
    assert log.entries == ["mine", "null"]
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    assert other[-1] == ["theirs"]
    ok(lib.hipStreamSynchronize(PER_THREAD))
    ok(lib.hipStreamQuery(PER_THREAD))


# hipamd-specific: hipDeviceReset destroys per-thread streams; they come back
@hipamd
def test_per_thread_stream_survives_device_reset():
    log = HostLog()
    log.enqueue(PER_THREAD, "before")
    ok(lib.hipDeviceReset())
    log.enqueue(PER_THREAD, "after")
    ok(lib.hipStreamSynchronize(PER_THREAD))
    assert log.entries == ["before", "after"]


# platform-independent: the _spt entry points use the per-thread stream for NULL
def test_spt_variants():
    if BACKEND == "nvidia":
        pytest.skip("HIP's NVIDIA platform has no _spt entry points")
    ok(lib.hipStreamSynchronize_spt(ffi.NULL))
    ok(lib.hipStreamQuery_spt(ffi.NULL))
    flags = ffi.new("unsigned int *")
    ok(lib.hipStreamGetFlags_spt(ffi.NULL, flags))
    prio = ffi.new("int *")
    ok(lib.hipStreamGetPriority_spt(ffi.NULL, prio))
