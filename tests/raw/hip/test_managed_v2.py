"""hipMemAdvise_v2 / hipMemPrefetchAsync_v2 (7.x headers; hipamd hip_hmm.cpp:
a hipMemLocation where v1 takes a device; stub:
rocpy/_native/stub/hip_managed_v2.c over hip_managed.c)."""
from __future__ import annotations

import pytest

from .helpers import check, ffi, hipamd, lib, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipMemAdvise_v2"),
                                         reason="hipMem*_v2: 7.x headers")]
PAGE = 4096
CPU, INVALID = -1, -2


@pytest.fixture
def managed():
    p = ffi.new("void **")
    ok(lib.hipMallocManaged(p, PAGE, lib.hipMemAttachGlobal))
    yield p[0]
    ok(lib.hipFree(p[0]))


def loc(kind, ident=0):
    v = ffi.new("hipMemLocation *")
    v.type, v.id = kind, ident
    return v[0]


def attribute(attr, ptr):
    v = ffi.new("int32_t[1]")
    ok(lib.hipMemRangeGetAttribute(v, 4, attr, ptr, PAGE))
    return v[0]


def test_advice_by_location(managed):
    ok(lib.hipMemAdvise_v2(managed, PAGE, lib.hipMemAdviseSetPreferredLocation,
                           loc(lib.hipMemLocationTypeDevice, 0)))
    assert attribute(lib.hipMemRangeAttributePreferredLocation, managed) == 0
    ok(lib.hipMemAdvise_v2(managed, PAGE, lib.hipMemAdviseSetPreferredLocation,
                           loc(lib.hipMemLocationTypeHost, 12345)))      # id ignored
    assert attribute(lib.hipMemRangeAttributePreferredLocation, managed) == CPU
    ok(lib.hipMemAdvise_v2(managed, PAGE, lib.hipMemAdviseUnsetPreferredLocation,
                           loc(lib.hipMemLocationTypeHost)))
    assert attribute(lib.hipMemRangeAttributePreferredLocation, managed) == INVALID


@pytest.mark.parametrize("kind,expected", [("Device", 0), ("Host", CPU)])
def test_prefetch_by_location(managed, kind, expected):
    s = stream()
    ok(lib.hipMemPrefetchAsync_v2(managed, PAGE, loc(getattr(lib, "hipMemLocationType" + kind)),
                                  0, s))
    ok(lib.hipStreamSynchronize(s))
    assert attribute(lib.hipMemRangeAttributeLastPrefetchLocation, managed) == expected
    ok(lib.hipStreamDestroy(s))


def test_bad_arguments(managed):
    dev = loc(lib.hipMemLocationTypeDevice, 0)
    n = ffi.new("int *")
    ok(lib.hipGetDeviceCount(n))
    A = lib.hipMemAdviseSetReadMostly
    check(lib.hipMemAdvise_v2(ffi.NULL, PAGE, A, dev), "hipErrorInvalidValue")
    check(lib.hipMemAdvise_v2(managed, 0, A, dev), "hipErrorInvalidValue")
    check(lib.hipMemAdvise_v2(managed, PAGE, A, loc(lib.hipMemLocationTypeInvalid)),
          "hipErrorInvalidValue")
    check(lib.hipMemAdvise_v2(managed, PAGE, A, loc(lib.hipMemLocationTypeDevice, n[0])),
          "hipErrorInvalidValue")
    check(lib.hipMemPrefetchAsync_v2(managed, PAGE, dev, 1, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemPrefetchAsync_v2(ffi.NULL, PAGE, dev, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemPrefetchAsync_v2(managed, PAGE, loc(lib.hipMemLocationTypeHostNuma), 0,
                                     ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemPrefetchAsync_v2(managed, PAGE, loc(lib.hipMemLocationTypeDevice, n[0]), 0,
                                     ffi.NULL), "hipErrorInvalidDevice")
    # both refused while a stream captures (CHECK_STREAM_CAPTURE_SUPPORTED)
    s = stream()
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    check(lib.hipMemAdvise_v2(managed, PAGE, A, dev), "hipErrorStreamCaptureUnsupported")
    g = ffi.new("hipGraph_t *")
    lib.hipStreamEndCapture(s, g)
    if g[0] != ffi.NULL:
        ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))
