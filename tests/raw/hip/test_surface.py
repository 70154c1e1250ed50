"""Surface objects over arrays (hipamd hip_surface.cpp ihipCreateSurfaceObject,
ihipDestroySurfaceObject; stub: rocpy/_native/stub/hip_surface.c): creation,
checks and destruction are real; kernels cannot read them on the stub."""
from __future__ import annotations

import pytest
from rocm_versions import at_least

from .helpers import check, ffi, hipamd, lib, malloc, ok

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipCreateSurfaceObject"),
                                         reason="surfaces: the headers declare them for C++ only")]
N = ffi.NULL


def array(flags):
    a = ffi.new("hipArray_t *")
    d = ffi.new("hipChannelFormatDesc *")
    d.x, d.f = 32, lib.hipChannelFormatKindFloat
    ok(lib.hipMallocArray(a, d, 64, 4, flags))
    return a[0]


def resource(arr):
    r = ffi.new("hipResourceDesc *")
    r.resType = lib.hipResourceTypeArray
    r.res.array.array = arr
    return r


def flag_cases():
    yield 0
    if at_least(5, 7):      # surface-load-store arrays exist from 5.7 (STUB_RULE_ARRAY_SURFACE_*)
        yield lib.hipArraySurfaceLoadStore


@pytest.mark.parametrize("flags", list(flag_cases()))
def test_create_and_destroy(flags):
    arr = array(flags)
    surf = ffi.new("hipSurfaceObject_t *")
    ok(lib.hipCreateSurfaceObject(surf, resource(arr)))
    assert surf[0] != N
    other = ffi.new("hipSurfaceObject_t *")
    ok(lib.hipCreateSurfaceObject(other, resource(arr)))
    assert other[0] != surf[0]
    ok(lib.hipDestroySurfaceObject(surf[0]))
    check(lib.hipDestroySurfaceObject(surf[0]), "hipErrorInvalidValue")     # twice
    ok(lib.hipDestroySurfaceObject(other[0]))
    ok(lib.hipFreeArray(arr))


def test_bad_arguments():
    arr = array(0)
    surf = ffi.new("hipSurfaceObject_t *")
    check(lib.hipCreateSurfaceObject(N, resource(arr)), "hipErrorInvalidValue")
    check(lib.hipCreateSurfaceObject(surf, N), "hipErrorInvalidValue")
    r = resource(arr)
    r.resType = lib.hipResourceTypeLinear
    check(lib.hipCreateSurfaceObject(surf, r), "hipErrorInvalidValue")
    check(lib.hipCreateSurfaceObject(surf, resource(N)), "hipErrorInvalidValue")
    bogus = malloc(64)                                       # not an array
    check(lib.hipCreateSurfaceObject(surf, resource(ffi.cast("hipArray_t", bogus))),
          "hipErrorInvalidValue")
    ok(lib.hipFreeArray(arr))
    check(lib.hipCreateSurfaceObject(surf, resource(arr)), "hipErrorInvalidValue")   # freed
    ok(lib.hipDestroySurfaceObject(ffi.cast("hipSurfaceObject_t", 0)))              # null: fine
    host = ffi.new("char[64]")
    check(lib.hipDestroySurfaceObject(ffi.cast("hipSurfaceObject_t", host)), "hipErrorInvalidValue")
    # ihipFree: hipamd frees whatever memory object it is given
    ok(lib.hipDestroySurfaceObject(ffi.cast("hipSurfaceObject_t", bogus)))
    check(lib.hipFree(bogus), "hipErrorInvalidValue")
