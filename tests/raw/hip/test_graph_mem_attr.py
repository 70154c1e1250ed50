"""The device's graph memory pool attributes (clr hipamd/src/hip_graph.cpp at
rocm-6.2.0: hipDeviceGet/SetGraphMemAttribute, hipDeviceGraphMemTrim, over
the device's GetGraphMemoryPool()).  Stub: hip_graph_mem.c."""
from __future__ import annotations

import pytest

from .helpers import check, device_count, ffi, hipamd, lib, ok

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipDeviceGetGraphMemAttribute"),
                                         reason="the headers declare no hipDeviceGetGraphMemAttribute")]

FIGURES = ("hipGraphMemAttrUsedMemCurrent", "hipGraphMemAttrUsedMemHigh",
           "hipGraphMemAttrReservedMemCurrent", "hipGraphMemAttrReservedMemHigh")


def test_figures_of_a_graph_pool_with_nothing_allocated():
    v = ffi.new("uint64_t *", 99)
    for attr in FIGURES:
        v[0] = 99
        ok(lib.hipDeviceGetGraphMemAttribute(0, getattr(lib, attr), v))
        assert v[0] == 0
    # the high marks reset with 0 only (MemoryPool::SetAttribute)
    v[0] = 0
    ok(lib.hipDeviceSetGraphMemAttribute(0, lib.hipGraphMemAttrUsedMemHigh, v))
    ok(lib.hipDeviceSetGraphMemAttribute(0, lib.hipGraphMemAttrReservedMemHigh, v))
    v[0] = 5
    check(lib.hipDeviceSetGraphMemAttribute(0, lib.hipGraphMemAttrUsedMemHigh, v),
          "hipErrorInvalidValue")
    ok(lib.hipDeviceGraphMemTrim(0))


def test_graph_mem_attribute_bad_input():
    v = ffi.new("uint64_t *", 0)
    n = device_count()
    for dev in (-1, n):
        check(lib.hipDeviceGetGraphMemAttribute(dev, lib.hipGraphMemAttrUsedMemHigh, v),
              "hipErrorInvalidDevice")
        check(lib.hipDeviceSetGraphMemAttribute(dev, lib.hipGraphMemAttrUsedMemHigh, v),
              "hipErrorInvalidDevice")
        check(lib.hipDeviceGraphMemTrim(dev), "hipErrorInvalidDevice")
    # the device is checked before the value
    check(lib.hipDeviceGetGraphMemAttribute(-1, lib.hipGraphMemAttrUsedMemHigh, ffi.NULL),
          "hipErrorInvalidDevice")
    check(lib.hipDeviceGetGraphMemAttribute(0, lib.hipGraphMemAttrUsedMemHigh, ffi.NULL),
          "hipErrorInvalidValue")
    check(lib.hipDeviceSetGraphMemAttribute(0, lib.hipGraphMemAttrUsedMemHigh, ffi.NULL),
          "hipErrorInvalidValue")
    # the current figures cannot be set; an unknown attribute is refused
    check(lib.hipDeviceSetGraphMemAttribute(0, lib.hipGraphMemAttrUsedMemCurrent, v),
          "hipErrorInvalidValue")
    check(lib.hipDeviceGetGraphMemAttribute(0, ffi.cast("hipGraphMemAttributeType", 77), v),
          "hipErrorInvalidValue")
