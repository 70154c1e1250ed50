"""hip-tests as a judge for pointer sync-memops, surfaces, stream attributes
and stream ids (see hiptests.py for the form of a fact).  Sources: ROCm/hip-tests
``catch/unit`` at 87c8a04 (memory/hipPointerSetAttribute.cc, surface/*) and,
for the 7.1 functions, ROCm/rocm-systems ``projects/hip-tests/catch/unit``
(stream/hipStreamSetGetAttributes.cc at 40ac732, stream/hipStreamGetId.cc at
18441d7).  A fact whose function these headers lack skips."""
from __future__ import annotations

import pytest
from rocm_versions import at_least

from .helpers import PER_THREAD, ffi, hipamd, lib, malloc
from .hiptests import Env, Fact, ids

pytestmark = hipamd
N = ffi.NULL
BAD_STREAM = ffi.cast("hipStream_t", -1)


def _has(name):
    return hasattr(lib, name)


def _freed(e):
    p = malloc(4)
    assert lib.hipFree(p) == 0
    return p


def _device(e, size=4):
    p = malloc(size)
    e.later(lambda: lib.hipFree(p))
    return p


def _value(v):
    return ffi.new("unsigned int *", v)


def _sync():
    return getattr(lib, "HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS", 0)


POINTER = [
    Fact("memory/hipPointerSetAttribute.cc:82",
         lambda e: lib.hipPointerSetAttribute(N, _sync(), _device(e)), "hipErrorInvalidValue"),
    Fact("memory/hipPointerSetAttribute.cc:87",
         lambda e: lib.hipPointerSetAttribute(_value(0), ffi.cast("hipPointer_attribute", -1),
                                              _device(e)), "hipErrorInvalidValue"),
    Fact("memory/hipPointerSetAttribute.cc:93",
         lambda e: lib.hipPointerSetAttribute(_value(0), _sync(), N), "hipErrorInvalidValue"),
    Fact("memory/hipPointerSetAttribute.cc:99",
         lambda e: lib.hipPointerSetAttribute(_value(0), _sync(), ffi.new("int *")),
         "hipErrorInvalidDevicePointer"),
    Fact("memory/hipPointerSetAttribute.cc:105",
         lambda e: lib.hipPointerSetAttribute(_value(0), _sync(), _freed(e)),
         "hipErrorInvalidDevicePointer"),
]


def _surface_array(e, freed=False):
    a = ffi.new("hipArray_t *")
    d = ffi.new("hipChannelFormatDesc *")
    d.x, d.f = 32, lib.hipChannelFormatKindFloat
    # hip-tests' surface-load-store array; before 5.7 hipamd makes none
    # (STUB_RULE_ARRAY_SURFACE_GATHER_ACCEPTED) and a default array serves
    flags = lib.hipArraySurfaceLoadStore if at_least(5, 7) else 0
    assert lib.hipMallocArray(a, d, 64, 0, flags) == 0
    if freed:
        assert lib.hipFreeArray(a[0]) == 0
    else:
        e.later(lambda: lib.hipFreeArray(a[0]))
    return a[0]


def _resc(e, array="new", res_type=None):
    r = ffi.new("hipResourceDesc *")
    r.resType = lib.hipResourceTypeArray if res_type is None else res_type
    r.res.array.array = {"new": lambda: _surface_array(e), "null": lambda: N,
                         "freed": lambda: _surface_array(e, freed=True)}[array]()
    return r


def _create_destroy_twice(e):
    s = ffi.new("hipSurfaceObject_t *")
    assert lib.hipCreateSurfaceObject(s, _resc(e)) == 0
    assert lib.hipDestroySurfaceObject(s[0]) == 0
    return lib.hipDestroySurfaceObject(s[0])


SURFACE = [
    Fact("surface/hipCreateSurfaceObject.cc:57",
         lambda e: lib.hipCreateSurfaceObject(N, _resc(e)), "hipErrorInvalidValue"),
    Fact("surface/hipCreateSurfaceObject.cc:61",
         lambda e: lib.hipCreateSurfaceObject(ffi.new("hipSurfaceObject_t *"), N),
         "hipErrorInvalidValue"),
    Fact("surface/hipCreateSurfaceObject.cc:66",
         lambda e: lib.hipCreateSurfaceObject(ffi.new("hipSurfaceObject_t *"),
                                              _resc(e, res_type=lib.hipResourceTypeLinear)),
         "hipErrorInvalidValue"),
    Fact("surface/hipCreateSurfaceObject.cc:72",
         lambda e: lib.hipCreateSurfaceObject(ffi.new("hipSurfaceObject_t *"), _resc(e, "null")),
         "hipErrorInvalidValue", note="HT_NVIDIA only in hip-tests; clr's ihipCreateSurfaceObject "
         "refuses a null array with hipErrorInvalidValue", hiptests="hipErrorInvalidHandle"),
    Fact("surface/hipCreateSurfaceObject.cc:82",
         lambda e: lib.hipCreateSurfaceObject(ffi.new("hipSurfaceObject_t *"), _resc(e, "freed")),
         "hipErrorInvalidValue", note="HT_NVIDIA only in hip-tests; clr: is_valid(array->data) "
         "fails, hipErrorInvalidValue", hiptests="hipErrorContextIsDestroyed"),
    Fact("surface/hipDestroySurfaceObject.cc:46",
         lambda e: lib.hipDestroySurfaceObject(ffi.cast("hipSurfaceObject_t", 0)), "hipSuccess"),
    Fact("surface/hipDestroySurfaceObject.cc:64", _create_destroy_twice, "hipErrorInvalidValue"),
]


def _attr_value(policy=None):
    v = ffi.new("hipLaunchAttributeValue *")
    if policy is not None:
        v.syncPolicy = policy
    return v


def _policy():
    return getattr(lib, "hipLaunchAttributeSynchronizationPolicy", 0)


def _roundtrip(e, policy):
    s = e.stream()
    status = lib.hipStreamSetAttribute(s, _policy(), _attr_value(policy))
    if status:
        return status
    out = _attr_value()
    status = lib.hipStreamGetAttribute(s, _policy(), out)
    return status if status else ("hipSuccess" if out.syncPolicy == policy else "other policy")


def _ids(e, *streams):
    out, idv = [], ffi.new("unsigned long long *")
    for s in streams:
        assert lib.hipStreamGetId(s, idv) == 0
        out.append(idv[0])
    return out


HT_ATTR = "stream/hipStreamSetGetAttributes.cc"
STREAM = [
    *[Fact(f"{HT_ATTR}:69[{p}]", lambda e, p=p: _roundtrip(e, getattr(lib, "hipSyncPolicy" + p)),
           "hipSuccess", note="set, then read back at :72-:73")
      for p in ("Auto", "Spin", "Yield", "BlockingSync")],
    Fact(f"{HT_ATTR}:116",
         lambda e: lib.hipStreamGetAttribute(BAD_STREAM, _policy(), _attr_value()),
         "hipErrorInvalidHandle", note="hipErrorInvalidResourceHandle is the same status"),
    Fact(f"{HT_ATTR}:122",
         lambda e: lib.hipStreamGetAttribute(e.stream(), ffi.cast("hipLaunchAttributeID", -1),
                                             _attr_value()), "hipErrorInvalidValue"),
    Fact(f"{HT_ATTR}:128", lambda e: lib.hipStreamGetAttribute(e.stream(), _policy(), N),
         "hipErrorInvalidValue"),
    Fact(f"{HT_ATTR}:161",
         lambda e: lib.hipStreamSetAttribute(BAD_STREAM, _policy(),
                                             _attr_value(getattr(lib, "hipSyncPolicyAuto", 1))),
         "hipErrorInvalidHandle"),
    Fact(f"{HT_ATTR}:167",
         lambda e: lib.hipStreamSetAttribute(e.stream(), ffi.cast("hipLaunchAttributeID", -1),
                                             _attr_value()), "hipErrorInvalidValue"),
    Fact(f"{HT_ATTR}:173", lambda e: lib.hipStreamSetAttribute(e.stream(), _policy(), N),
         "hipErrorInvalidValue"),
    Fact(f"{HT_ATTR}:179",
         lambda e: lib.hipStreamSetAttribute(e.stream(), _policy(),
                                             _attr_value(ffi.cast("hipSynchronizationPolicy", -1))),
         "hipErrorInvalidValue"),
    Fact("stream/hipStreamGetId.cc:58", lambda e: lib.hipStreamGetId(e.stream(), N),
         "hipErrorInvalidValue"),
    Fact("stream/hipStreamGetId.cc:76",
         lambda e: (lambda a, b: "hipSuccess" if a != b else "same id")(
             *_ids(e, e.stream(), e.stream())),
         "hipSuccess"),
    Fact("stream/hipStreamGetId.cc:85",
         lambda e: "hipSuccess" if _ids(e, PER_THREAD)[0] else "zero id", "hipSuccess"),
]


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


@pytest.mark.skipif(not _has("hipPointerSetAttribute"), reason="5.5+ headers")
@pytest.mark.parametrize("fact", POINTER, ids=ids(POINTER))
def test_hiptests_pointer_set_attribute(env, fact):
    fact.check(env)


@pytest.mark.skipif(not _has("hipCreateSurfaceObject"), reason="surfaces: C++-only declarations")
@pytest.mark.parametrize("fact", SURFACE, ids=ids(SURFACE))
def test_hiptests_surface(env, fact):
    fact.check(env)


@pytest.mark.skipif(not _has("hipStreamGetAttribute"), reason="7.x headers")
@pytest.mark.parametrize("fact", STREAM, ids=ids(STREAM))
def test_hiptests_stream_attributes(env, fact):
    fact.check(env)
