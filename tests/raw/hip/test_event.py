"""Events (hipamd hip_event.cpp): flags, records with real timestamps,
queries, synchronisation, elapsed time and cross-stream waits."""
from __future__ import annotations

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import (HostLog, check, event, ffi, hipamd, lib, ok, stream)


# platform-independent
def test_create_and_destroy():
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(e))
    ok(lib.hipEventDestroy(e[0]))
    for flags in (lib.hipEventDefault, lib.hipEventBlockingSync, lib.hipEventDisableTiming,
                  lib.hipEventBlockingSync | lib.hipEventDisableTiming,
                  lib.hipEventInterprocess | lib.hipEventDisableTiming):
        ok(lib.hipEventCreateWithFlags(e, flags))
        ok(lib.hipEventDestroy(e[0]))
    check(lib.hipEventCreate(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipEventCreateWithFlags(ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipEventDestroy(ffi.NULL), "hipErrorInvalidHandle")


# hipamd-specific: interprocess needs DisableTiming (ROCm/clr), one release
# flag at most, no unknown bits, and destroyed handles are refused
@hipamd
@version_sensitive
def test_bad_event_flags_and_handles():
    e = ffi.new("hipEvent_t *")
    check(lib.hipEventCreateWithFlags(e, lib.hipEventInterprocess), "hipErrorInvalidValue")
    check(lib.hipEventCreateWithFlags(e, lib.hipEventReleaseToDevice | lib.hipEventReleaseToSystem),
          "hipErrorInvalidValue")
    check(lib.hipEventCreateWithFlags(e, 0x100), "hipErrorInvalidValue")
    dead = event()
    ok(lib.hipEventDestroy(dead))
    check(lib.hipEventDestroy(dead), "hipErrorContextIsDestroyed")
    check(lib.hipEventQuery(dead), "hipErrorContextIsDestroyed")
    check(lib.hipEventRecord(ffi.NULL, ffi.NULL), "hipErrorInvalidHandle")
    check(lib.hipEventSynchronize(ffi.NULL), "hipErrorInvalidHandle")
    check(lib.hipEventQuery(ffi.NULL), "hipErrorInvalidHandle")
    e2 = event()
    s = stream()
    ok(lib.hipStreamDestroy(s))
    check(lib.hipEventRecord(e2, s), "hipErrorContextIsDestroyed")
    check(lib.hipStreamWaitEvent(s, e2, 0), expect({      # hipStreamWaitEvent_common
        (5, 2): "hipErrorContextIsDestroyed", (5, 6): "hipErrorInvalidValue",
        (5, 7): "hipErrorInvalidHandle"}))
    check(lib.hipStreamWaitEvent(ffi.NULL, e2, 1), "hipErrorInvalidValue")
    check(lib.hipStreamWaitEvent(ffi.NULL, ffi.NULL, 0), "hipErrorInvalidHandle")
    ok(lib.hipEventDestroy(e2))


# hipamd-specific: an event never recorded is complete but has no time
@hipamd
def test_never_recorded_event():
    a, b = event(), event()
    ok(lib.hipEventQuery(a))
    ok(lib.hipEventSynchronize(a))
    ms = ffi.new("float *")
    check(lib.hipEventElapsedTime(ms, a, b), "hipErrorInvalidHandle")
    check(lib.hipEventElapsedTime(ms, a, a), "hipErrorInvalidHandle")
    ok(lib.hipStreamWaitEvent(ffi.NULL, a, 0))          # nothing to wait for
    ok(lib.hipEventDestroy(a))
    ok(lib.hipEventDestroy(b))


# platform-independent: a record completes when the stream reaches it, with a
# real timestamp
def test_record_query_synchronize_and_time():
    s = stream()
    start, stop = event(), event()
    log = HostLog()
    ok(lib.hipEventRecord(start, s))
    log.enqueue(s, "work", delay=0.1)
    ok(lib.hipEventRecord(stop, s))
    check(lib.hipEventQuery(stop), "hipErrorNotReady")
    ms = ffi.new("float *")
    check(lib.hipEventElapsedTime(ms, start, stop), "hipErrorNotReady")
    ok(lib.hipEventSynchronize(stop))
    ok(lib.hipEventQuery(stop))
    ok(lib.hipEventElapsedTime(ms, start, stop))
    assert 90.0 <= ms[0] < 5000.0
    ok(lib.hipEventElapsedTime(ms, stop, start))
    assert ms[0] <= -90.0
    ok(lib.hipEventElapsedTime(ms, stop, stop))
    assert ms[0] == 0.0
    check(lib.hipEventElapsedTime(ffi.NULL, start, stop), "hipErrorInvalidValue")
    check(lib.hipEventElapsedTime(ms, ffi.NULL, stop), "hipErrorInvalidHandle")
    for e in (start, stop):
        ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))


# platform-independent: DisableTiming events synchronise but do not time
def test_disable_timing():
    a, b = event(lib.hipEventDisableTiming), event()
    ok(lib.hipEventRecord(a, ffi.NULL))
    ok(lib.hipEventRecord(b, ffi.NULL))
    ok(lib.hipEventSynchronize(b))
    ok(lib.hipEventSynchronize(a))
    ms = ffi.new("float *")
    check(lib.hipEventElapsedTime(ms, a, b), "hipErrorInvalidHandle")
    check(lib.hipEventElapsedTime(ms, b, a), "hipErrorInvalidHandle")
    ok(lib.hipEventDestroy(a))
    ok(lib.hipEventDestroy(b))


# platform-independent: a later record replaces the earlier one
def test_rerecord():
    s = stream()
    e = event()
    ok(lib.hipEventRecord(e, s))
    ok(lib.hipEventSynchronize(e))
    log = HostLog()
    log.enqueue(s, "slow", delay=0.1)
    ok(lib.hipEventRecord(e, s))
    check(lib.hipEventQuery(e), "hipErrorNotReady")
    ok(lib.hipEventSynchronize(e))
    assert log.entries == ["slow"]
    ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))


# platform-independent: hipStreamWaitEvent orders two streams
def test_stream_wait_event_orders_streams():
    a, b = stream(lib.hipStreamNonBlocking), stream(lib.hipStreamNonBlocking)
    e = event(lib.hipEventDisableTiming)
    log = HostLog()
    log.enqueue(a, "first", delay=0.1)
    ok(lib.hipEventRecord(e, a))
    ok(lib.hipStreamWaitEvent(b, e, 0))
    log.enqueue(b, "second")
    ok(lib.hipStreamSynchronize(b))
    assert log.entries == ["first", "second"]
    ok(lib.hipEventDestroy(e))        # a record still pending elsewhere is fine
    ok(lib.hipStreamDestroy(a))
    ok(lib.hipStreamDestroy(b))


# platform-independent: destroying an event whose record is pending
def test_destroy_pending_event():
    s = stream()
    e = event()
    log = HostLog()
    log.enqueue(s, "slow", delay=0.05)
    ok(lib.hipEventRecord(e, s))
    ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipStreamDestroy(s))


# hipamd-specific (two devices): an event belongs to the device it was made on
@hipamd
@pytest.mark.multidevice
def test_event_of_another_device():
    e = event()
    ok(lib.hipSetDevice(1))
    s1 = stream()
    check(lib.hipEventRecord(e, s1), "hipErrorInvalidHandle")
    e1 = event()
    ok(lib.hipEventRecord(e1, s1))
    ok(lib.hipSetDevice(0))
    ok(lib.hipEventRecord(e, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipEventSynchronize(e1))
    ms = ffi.new("float *")
    check(lib.hipEventElapsedTime(ms, e, e1), "hipErrorInvalidHandle")
    ok(lib.hipStreamWaitEvent(ffi.NULL, e1, 0))          # across devices is fine
    ok(lib.hipStreamDestroy(s1))
    ok(lib.hipEventDestroy(e))
    ok(lib.hipEventDestroy(e1))
