"""HIP behaviour that changed between ROCm releases, one expectation per rule
written with its per-release values (tests/rocm_versions.py), read in hipamd /
clr at the tags named (the stub's rules table, stub_version.c, has the same
rows).  On the stub the release is ROCPY_STUB_ROCM's; on a GPU the runtime's."""
from __future__ import annotations

import threading

from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, lib, ok, requires, stream

pytestmark = [hipamd, version_sensitive]


def test_wait_event_on_an_unknown_stream():
    # hipStreamWaitEvent_common: 5.2-5.5 ContextIsDestroyed after the flags check,
    # 5.6 InvalidValue, 5.7 InvalidHandle (hip-tests hipStreamWaitEvent.cc:76 asks
    # for InvalidHandle with stream 0xFFFF)
    event = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(event))
    try:
        bogus = ffi.cast("hipStream_t", 0xFFFF)
        check(lib.hipStreamWaitEvent(bogus, event[0], 0), expect({
            (5, 2): "hipErrorContextIsDestroyed", (5, 6): "hipErrorInvalidValue",
            (5, 7): "hipErrorInvalidHandle"}))
        # flags are looked at first up to 5.6, after the stream from 5.7
        check(lib.hipStreamWaitEvent(bogus, event[0], 1), expect({
            (5, 2): "hipErrorInvalidValue", (5, 7): "hipErrorInvalidHandle"}))
        check(lib.hipStreamWaitEvent(ffi.NULL, event[0], 1), "hipErrorInvalidValue")
    finally:
        ok(lib.hipEventDestroy(event[0]))


def test_wait_event_on_a_destroyed_stream():
    stream = ffi.new("hipStream_t *")
    event = ffi.new("hipEvent_t *")
    ok(lib.hipStreamCreate(stream))
    ok(lib.hipEventCreate(event))
    ok(lib.hipStreamDestroy(stream[0]))
    check(lib.hipStreamWaitEvent(stream[0], event[0], 0), expect({
        (5, 2): "hipErrorContextIsDestroyed", (5, 6): "hipErrorInvalidValue",
        (5, 7): "hipErrorInvalidHandle"}))
    ok(lib.hipEventDestroy(event[0]))


def test_set_device_flags_with_two_schedule_flags():
    # hipSetDeviceFlags: 5.3/5.4 have the check, but its Auto term is always
    # false (hipDeviceScheduleAuto == 0), so it first refuses at 5.5
    two = lib.hipDeviceScheduleSpin | lib.hipDeviceScheduleYield
    check(lib.hipSetDeviceFlags(two), expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    check(lib.hipSetDeviceFlags(lib.hipDeviceScheduleSpin | lib.hipDeviceScheduleBlockingSync),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    # one schedule flag with MapHost is fine in every release
    ok(lib.hipSetDeviceFlags(lib.hipDeviceScheduleYield | lib.hipDeviceMapHost))
    ok(lib.hipSetDeviceFlags(lib.hipDeviceScheduleAuto))
    ok(lib.hipSetDeviceFlags(lib.hipDeviceScheduleSpin))


def test_init_flags():
    # hipInit: flags are ignored up to 5.4, must be 0 from 5.5
    ok(lib.hipInit(0))
    check(lib.hipInit(1), expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))


def test_device_get_null():
    # ihipDeviceGet: the null pointer was InvalidDevice up to 5.4
    check(lib.hipDeviceGet(ffi.NULL, 0), expect({(5, 2): "hipErrorInvalidDevice",
                                                 (5, 5): "hipErrorInvalidValue"}))
    # a null pointer and a bad ordinal: the pointer is looked at first from 5.5
    check(lib.hipDeviceGet(ffi.NULL, -1), expect({(5, 2): "hipErrorInvalidDevice",
                                                  (5, 5): "hipErrorInvalidValue"}))
    dev = ffi.new("hipDevice_t *")
    check(lib.hipDeviceGet(dev, -1), "hipErrorInvalidDevice")


def test_shared_mem_config():
    # hipDeviceSetSharedMemConfig: hipSuccess for anything in 5.2, NotSupported in
    # 5.3/5.4, hipSuccess again in 5.5, values checked from clr 5.6
    bad = expect({(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 5): "hipSuccess",
                  (5, 6): "hipErrorInvalidValue"})
    good = expect({(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 5): "hipSuccess"})
    check(lib.hipDeviceSetSharedMemConfig(ffi.cast("hipSharedMemConfig", -1)), bad)
    check(lib.hipDeviceSetSharedMemConfig(ffi.cast("hipSharedMemConfig", 3)), bad)
    for value in ("hipSharedMemBankSizeDefault", "hipSharedMemBankSizeFourByte",
                  "hipSharedMemBankSizeEightByte"):
        check(lib.hipDeviceSetSharedMemConfig(getattr(lib, value)), good)
    config = ffi.new("hipSharedMemConfig *")
    ok(lib.hipDeviceGetSharedMemConfig(config))
    assert config[0] == lib.hipSharedMemBankSizeFourByte


def test_cache_config():
    # hipDeviceSetCacheConfig: NotSupported in hipamd 5.3-5.5, hipSuccess again in
    # clr 5.6; values checked after the 6.3 branch (not in release/rocm-rel-6.3.0.1)
    bad = expect({(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 6): "hipSuccess",
                  (6, 4): "hipErrorInvalidValue"})
    good = expect({(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 6): "hipSuccess"})
    check(lib.hipDeviceSetCacheConfig(ffi.cast("hipFuncCache_t", -1)), bad)
    check(lib.hipDeviceSetCacheConfig(ffi.cast("hipFuncCache_t", 4)), bad)
    for value in ("hipFuncCachePreferNone", "hipFuncCachePreferShared", "hipFuncCachePreferL1",
                  "hipFuncCachePreferEqual"):
        check(lib.hipDeviceSetCacheConfig(getattr(lib, value)), good)


def _limit(value: int):
    """hipLimitStackSize (0) and hipLimitRange (3) are newer than 5.2's headers; cast
    when a test runs (the NVIDIA platform's cdef has no enum hipLimit_t to cast to)."""
    return ffi.cast("enum hipLimit_t", value)


STACK, RANGE = 0, 3


def test_get_limit():
    # hipDeviceGetLimit: 5.2 knows hipLimitMallocHeapSize only; from 5.3 the stack
    # size too, and limit >= hipLimitRange is InvalidValue
    size = ffi.new("size_t *")
    ok(lib.hipDeviceGetLimit(size, lib.hipLimitMallocHeapSize))
    assert size[0] > 0
    check(lib.hipDeviceGetLimit(size, _limit(STACK)), expect({(5, 2): "hipErrorUnsupportedLimit",
                                                      (5, 3): "hipSuccess"}))
    check(lib.hipDeviceGetLimit(size, _limit(RANGE)), expect({(5, 2): "hipErrorUnsupportedLimit",
                                                      (5, 3): "hipErrorInvalidValue"}))
    check(lib.hipDeviceGetLimit(size, lib.hipLimitPrintfFifoSize), "hipErrorUnsupportedLimit")


@requires("hipDeviceSetLimit")          # declared from the 5.3 headers
def test_set_limit():
    # hipDeviceSetLimit: NotSupported in 5.2; the stack size from 5.3 (at most
    # 128 KiB - 16, rocclr Device::UpdateStackSize); the heap size from clr 5.6
    size = ffi.new("size_t *")
    check(lib.hipDeviceSetLimit(_limit(STACK), 4096), expect({(5, 2): "hipErrorNotSupported",
                                                      (5, 3): "hipSuccess"}))
    if lib.hipDeviceGetLimit(size, _limit(STACK)) == 0:
        assert size[0] == 4096
        check(lib.hipDeviceSetLimit(_limit(STACK), (128 << 10) - 15), "hipErrorInvalidValue")
        ok(lib.hipDeviceGetLimit(size, _limit(STACK)))
        assert size[0] == 4096
        ok(lib.hipDeviceSetLimit(_limit(STACK), 1024))
    check(lib.hipDeviceSetLimit(_limit(RANGE), 1), expect({(5, 2): "hipErrorNotSupported",
                                                   (5, 3): "hipErrorInvalidValue"}))
    check(lib.hipDeviceSetLimit(lib.hipLimitPrintfFifoSize, 1),
          expect({(5, 2): "hipErrorNotSupported", (5, 3): "hipErrorUnsupportedLimit"}))
    check(lib.hipDeviceSetLimit(lib.hipLimitMallocHeapSize, 1 << 20), expect({
        (5, 2): "hipErrorNotSupported", (5, 3): "hipErrorUnsupportedLimit", (5, 6): "hipSuccess"}))
    ok(lib.hipDeviceGetLimit(size, lib.hipLimitMallocHeapSize))
    check(lib.hipDeviceSetLimit(lib.hipLimitMallocHeapSize, size[0]), expect({
        (5, 2): "hipErrorNotSupported", (5, 3): "hipErrorUnsupportedLimit", (5, 6): "hipErrorInvalidValue"}))


def test_host_get_device_pointer_flags():
    host = ffi.new("void **")
    ok(lib.hipHostMalloc(host, 64, 0))
    try:
        dptr = ffi.new("void **")
        ok(lib.hipHostGetDevicePointer(dptr, host[0], 0))
        # clr 6.1 checks `devicePointer == nullptr || flags != 0`
        check(lib.hipHostGetDevicePointer(dptr, host[0], 1),
              expect({(5, 2): "hipSuccess", (6, 1): "hipErrorInvalidValue"}))
        check(lib.hipHostGetDevicePointer(ffi.NULL, host[0], 0), "hipErrorInvalidValue")
    finally:
        ok(lib.hipHostFree(host[0]))


def test_error_string():
    # hipGetErrorString: the enum name in 5.2 (ihipGetErrorName), the descriptive
    # text from 5.3 (ihipGetErrorString); unknown codes likewise
    def text(status):
        return ffi.string(lib.hipGetErrorString(status)).decode()
    assert text(lib.hipErrorInvalidValue) == expect({(5, 2): "hipErrorInvalidValue",
                                                     (5, 3): "invalid argument"})
    assert text(lib.hipSuccess) == expect({(5, 2): "hipSuccess", (5, 3): "no error"})
    assert text(lib.hipErrorInvalidHandle) == expect({(5, 2): "hipErrorInvalidHandle",
                                                      (5, 3): "invalid resource handle"})
    assert text(777) == expect({(5, 2): "hipErrorUnknown", (5, 3): "unknown error"})
    # hipGetErrorName is the name in every release
    assert ffi.string(lib.hipGetErrorName(lib.hipErrorInvalidValue)) == b"hipErrorInvalidValue"


def test_successful_call_and_the_last_error():
    # HIP_RETURN stored every status up to 6.x; from 7.0 only errors other than
    # hipErrorNotReady (CUDA's semantics; HIP 7.0 changes, "Update hipGetLastError")
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    count = ffi.new("int *")
    ok(lib.hipGetDeviceCount(count))
    check(lib.hipPeekAtLastError(), expect({(5, 2): "hipSuccess", (7, 0): "hipErrorInvalidDevice"}))
    check(lib.hipGetLastError(), expect({(5, 2): "hipSuccess", (7, 0): "hipErrorInvalidDevice"}))
    check(lib.hipGetLastError())


def test_not_ready_and_the_last_error():
    gate = threading.Event()

    def wait(_user):
        gate.wait(30)
    hold = ffi.callback("void(void *)", wait)
    s = stream()
    try:
        ok(lib.hipLaunchHostFunc(s, hold, ffi.NULL))
        check(lib.hipMalloc(ffi.NULL, 16), "hipErrorInvalidValue")
        check(lib.hipStreamQuery(s), "hipErrorNotReady")
        # hipErrorNotReady is a status, not an error, from 7.0: the earlier error stays
        check(lib.hipPeekAtLastError(), expect({(5, 2): "hipErrorNotReady",
                                                (7, 0): "hipErrorInvalidValue"}))
    finally:
        gate.set()
        ok(lib.hipStreamSynchronize(s))
        ok(lib.hipStreamDestroy(s))
    lib.hipGetLastError()


def test_last_error_semantics_are_per_thread_in_every_release():
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    seen = []
    t = threading.Thread(target=lambda: seen.append(lib.hipGetLastError()))
    t.start()
    t.join()
    check(seen[0])
    check(lib.hipGetLastError(), "hipErrorInvalidDevice")
