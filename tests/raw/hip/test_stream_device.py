"""hipStreamGetDevice (headers of 5.7 on; clr hipamd/src/hip_stream.cpp,
rocm-6.2.0 and amd-staging: a null output first, then hip::isValid, whose
failure is hipErrorContextIsDestroyed).  Stub: hip_stream_device.c."""
from __future__ import annotations

import pytest

from .helpers import PER_THREAD, check, device_count, ffi, hipamd, lib, ok, stream

pytestmark = pytest.mark.skipif(not hasattr(lib, "hipStreamGetDevice"),
                                reason="the headers declare no hipStreamGetDevice")


def test_stream_device_of_each_kind_of_stream():
    dev = ffi.new("hipDevice_t *", -1)
    s = stream()
    ok(lib.hipStreamGetDevice(s, dev))
    assert dev[0] == 0
    for handle in (ffi.NULL, PER_THREAD):
        dev[0] = -1
        ok(lib.hipStreamGetDevice(handle, dev))
        assert dev[0] == 0
    ok(lib.hipStreamDestroy(s))


@pytest.mark.multidevice
def test_stream_keeps_the_device_it_was_made_on():
    assert device_count() >= 2
    ok(lib.hipSetDevice(1))
    s = stream()
    ok(lib.hipSetDevice(0))
    dev = ffi.new("hipDevice_t *")
    ok(lib.hipStreamGetDevice(s, dev))
    assert dev[0] == 1
    ok(lib.hipStreamGetDevice(ffi.NULL, dev))
    assert dev[0] == 0                      # the null stream: the current device's
    ok(lib.hipStreamDestroy(s))


@hipamd
def test_stream_device_bad_input():
    s = stream()
    check(lib.hipStreamGetDevice(s, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipStreamDestroy(s))
    # the output is checked before the stream
    check(lib.hipStreamGetDevice(s, ffi.NULL), "hipErrorInvalidValue")
    dev = ffi.new("hipDevice_t *", 7)
    check(lib.hipStreamGetDevice(s, dev), "hipErrorContextIsDestroyed")
    assert dev[0] == 7
    assert lib.hipGetLastError() == lib.hipErrorContextIsDestroyed
