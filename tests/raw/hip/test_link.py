"""Links between devices and the device attributes hipamd added for AMD
(hipamd hip_peer.cpp, hip_device_runtime.cpp; stub: hip_link.c,
hip_device_attr.c), and hipHostRegister of an impossible size.

Expectations from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/device/``,
``catch/unit/memory/hipHostRegister.cc``), each cited by file and line."""
from __future__ import annotations

import pytest

from rocm_versions import expect, version_sensitive

from .helpers import check, device_count, ffi, hipamd, lib, ok, stub_only

pytestmark = hipamd

P2P = ("hipDevP2PAttrPerformanceRank", "hipDevP2PAttrAccessSupported",
       "hipDevP2PAttrNativeAtomicSupported", "hipDevP2PAttrHipArrayAccessSupported")


def attribute(a, device=0):
    v = ffi.new("int *")
    ok(lib.hipDeviceGetAttribute(v, a, device))
    return v[0]


# hipGetDeviceAttribute.cc:547-551 (the AMD attributes hip-tests prints;
# an unanswered one would abort the test): image support, physical CUs,
# fine-grain support, as hipamd 5.2's switch answers them
def test_amd_attributes_are_answered():
    props = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(props, 0))
    assert attribute(lib.hipDeviceAttributeImageSupport) in (0, 1)
    assert attribute(lib.hipDeviceAttributePhysicalMultiProcessorCount) >= \
        props.multiProcessorCount > 0
    assert attribute(lib.hipDeviceAttributeFineGrainSupport) in (0, 1)
    assert attribute(lib.hipDeviceAttributeMemoryPoolsSupported) == 1


# stub: the stub's devices have images (arrays are implemented, textures
# are refused: rocpy.hip.stub_unsupported) and fine-grained memory
@stub_only
def test_stub_image_and_fine_grain_support():
    assert attribute(lib.hipDeviceAttributeImageSupport) == 1
    assert attribute(lib.hipDeviceAttributeFineGrainSupport) == 1


# hipExtGetLinkTypeAndHopCount.cc:103-150 (Negative_Parameters)
def test_link_type_and_hop_count_negative():
    t, h = ffi.new("uint32_t *"), ffi.new("uint32_t *")
    n = device_count()
    check(lib.hipExtGetLinkTypeAndHopCount(0, 0, t, h), "hipErrorInvalidValue")       # :103
    check(lib.hipExtGetLinkTypeAndHopCount(n, 0, t, h), "hipErrorInvalidDevice")      # :108
    check(lib.hipExtGetLinkTypeAndHopCount(0, n, t, h), "hipErrorInvalidDevice")      # :114
    check(lib.hipExtGetLinkTypeAndHopCount(n, n + 1, t, h), "hipErrorInvalidDevice")  # :120
    check(lib.hipExtGetLinkTypeAndHopCount(-1, 0, t, h), "hipErrorInvalidValue")      # :127
    check(lib.hipExtGetLinkTypeAndHopCount(0, -1, t, h), "hipErrorInvalidValue")      # :132
    check(lib.hipExtGetLinkTypeAndHopCount(-1, -2, t, h), "hipErrorInvalidValue")     # :137
    check(lib.hipExtGetLinkTypeAndHopCount(0, 1, ffi.NULL, h), "hipErrorInvalidValue")   # :142
    check(lib.hipExtGetLinkTypeAndHopCount(0, 1, t, ffi.NULL), "hipErrorInvalidValue")   # :146
    check(lib.hipExtGetLinkTypeAndHopCount(0, 1, ffi.NULL, ffi.NULL), "hipErrorInvalidValue")


# hipExtGetLinkTypeAndHopCount.cc: two devices have a link; ROCclr's
# findLinkInfo: the HSA link's type, hops = NUMA distance / one hop's
@pytest.mark.multidevice
def test_link_type_and_hop_count_between_two_devices():
    t, h = ffi.new("uint32_t *"), ffi.new("uint32_t *")
    ok(lib.hipExtGetLinkTypeAndHopCount(0, 1, t, h))
    ok(lib.hipExtGetLinkTypeAndHopCount(1, 0, t, h))
    assert h[0] >= 1


@stub_only
@pytest.mark.multidevice
def test_stub_link_is_pcie_two_hops():
    t, h = ffi.new("uint32_t *"), ffi.new("uint32_t *")
    ok(lib.hipExtGetLinkTypeAndHopCount(0, 1, t, h))
    # hsa_pool.c: one PCIe link of NUMA distance 40; ROCclr: 40 / 20
    assert (t[0], h[0]) == (lib.HSA_AMD_LINK_INFO_TYPE_PCIE, 2)
    v = ffi.new("int *")
    ok(lib.hipDeviceGetP2PAttribute(v, lib.hipDevP2PAttrPerformanceRank, 0, 1))
    assert v[0] == lib.HSA_AMD_LINK_INFO_TYPE_PCIE     # hipamd answers with the link type


# hipDeviceGetP2PAttribute.cc:124-154 (Negative_Parameters, two devices)
@pytest.mark.multidevice
def test_p2p_attribute_negative():
    v = ffi.new("int *")
    a = lib.hipDevP2PAttrAccessSupported
    n = device_count()
    check(lib.hipDeviceGetP2PAttribute(ffi.NULL, a, 0, 1), "hipErrorInvalidValue")       # :124
    check(lib.hipDeviceGetP2PAttribute(v, ffi.cast("hipDeviceP2PAttr", 10), 0, 1),
          "hipErrorInvalidValue")                                                        # :130
    check(lib.hipDeviceGetP2PAttribute(v, a, -1, 1), "hipErrorInvalidDevice")           # :136
    check(lib.hipDeviceGetP2PAttribute(v, a, 0, -1), "hipErrorInvalidDevice")           # :138
    check(lib.hipDeviceGetP2PAttribute(v, a, n, 1), "hipErrorInvalidDevice")            # :147
    check(lib.hipDeviceGetP2PAttribute(v, a, 0, n), "hipErrorInvalidDevice")            # :149
    check(lib.hipDeviceGetP2PAttribute(v, a, 0, 0), "hipErrorInvalidDevice")            # :154


# every attribute between two devices answers; access as hipDeviceCanAccessPeer
@pytest.mark.multidevice
@pytest.mark.parametrize("name", P2P)
def test_p2p_attributes_between_two_devices(name):
    v = ffi.new("int *")
    ok(lib.hipDeviceGetP2PAttribute(v, getattr(lib, name), 0, 1))
    if name in ("hipDevP2PAttrAccessSupported", "hipDevP2PAttrHipArrayAccessSupported"):
        can = ffi.new("int *")
        ok(lib.hipDeviceCanAccessPeer(can, 0, 1))
        assert v[0] == can[0]


def test_p2p_attribute_with_one_device_is_invalid_device():
    v = ffi.new("int *")
    check(lib.hipDeviceGetP2PAttribute(v, lib.hipDevP2PAttrAccessSupported, 0, device_count()),
          "hipErrorInvalidDevice")


# hipHostRegister.cc:199 (null), :204 (zero size), :217 (a size no memory
# backs): hip-tests expects InvalidValue there, as clr 5.6+ answers a failed
# Buffer::create failing: hipErrorInvalidValue from hipamd rocm-5.3.0
# (ihipHostRegister), hipErrorOutOfMemory in 5.2; flags > 15 refused from 5.4
@version_sensitive
def test_host_register_negative():
    import numpy as np
    host = np.zeros(4, dtype=np.int32)
    p = ffi.from_buffer(host)
    check(lib.hipHostRegister(ffi.NULL, 1, 0), "hipErrorInvalidValue")
    check(lib.hipHostRegister(p, 0, 0), "hipErrorInvalidValue")
    free_, total = ffi.new("size_t *"), ffi.new("size_t *")
    ok(lib.hipMemGetInfo(free_, total))
    import os
    host_bytes = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    cannot_lock = expect({(5, 2): "hipErrorOutOfMemory", (5, 3): "hipErrorInvalidValue"})
    check(lib.hipHostRegister(p, max(free_[0], host_bytes) + 4096, 0), cannot_lock)
    check(lib.hipHostRegister(p, (1 << 64) - 16, 0), cannot_lock)
    # flags beyond the four defined bits (hipHostRegister.cc:188): 5.2/5.3
    # do not read them and register the range
    st = lib.hipHostRegister(p, 16, 0xF0)
    check(st, expect({(5, 2): "hipSuccess", (5, 4): "hipErrorInvalidValue"}))
    if st == 0:
        ok(lib.hipHostUnregister(p))
