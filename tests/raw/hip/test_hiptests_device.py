"""hip-tests catch/unit/device (rocm-6.2.0) as a judge: argument checks of the
device API (see hiptests.py for the form of a fact)."""
from __future__ import annotations

import pytest
from rocm_versions import version_sensitive

from .helpers import ffi, hipamd, lib
from .hiptests import Env, Fact, ids

pytestmark = [hipamd, version_sensitive]

I, P, N = "int *", "size_t *", ffi.NULL
CHAR = "char[256]"


def _new(t):
    return ffi.new(t)


FACTS = [
    Fact("device/hipDeviceCanAccessPeer.cc:94", lambda e: lib.hipDeviceCanAccessPeer(N, 0, 1),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceCanAccessPeer.cc:98", lambda e: lib.hipDeviceCanAccessPeer(_new(I), -1, 1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceCanAccessPeer.cc:99",
         lambda e: lib.hipDeviceCanAccessPeer(_new(I), e.device_count(), 0), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceCanAccessPeer.cc:103", lambda e: lib.hipDeviceCanAccessPeer(_new(I), 0, -1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceCanAccessPeer.cc:104",
         lambda e: lib.hipDeviceCanAccessPeer(_new(I), 0, e.device_count()), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceEnableDisablePeerAccess.cc:98", lambda e: lib.hipDeviceEnablePeerAccess(-1, 0),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceEnableDisablePeerAccess.cc:99",
         lambda e: lib.hipDeviceEnablePeerAccess(e.device_count(), 0), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceEnableDisablePeerAccess.cc:162", lambda e: lib.hipDeviceDisablePeerAccess(-1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceEnableDisablePeerAccess.cc:163",
         lambda e: lib.hipDeviceDisablePeerAccess(e.device_count()), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceGetName.cc:75", lambda e: lib.hipDeviceGetName(N, 256, 0), "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetName.cc:82", lambda e: lib.hipDeviceGetName(_new(CHAR), 0, 0),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetName.cc:88", lambda e: lib.hipDeviceGetName(_new(CHAR), -1, 0),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetName.cc:106",
         lambda e: lib.hipDeviceGetName(_new(CHAR), 256, e.device_count()), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceGetName.cc:106(-1)", lambda e: lib.hipDeviceGetName(_new(CHAR), 256, -1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceSetGetCacheConfig.cc:79",
         lambda e: lib.hipDeviceSetCacheConfig(ffi.cast("hipFuncCache_t", -1)),
         {(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 6): "hipSuccess",
          (6, 4): "hipErrorInvalidValue"},
         note="hip-tests 6.2 expects hipSuccess on AMD; hipamd 5.3-5.5 has no cache config "
              "(NotSupported); clr checks the value after the 6.3 branch",
         hiptests="hipSuccess"),
    Fact("device/hipDeviceSetGetCacheConfig.cc:199", lambda e: lib.hipDeviceGetCacheConfig(N),
         "hipErrorInvalidValue"),
    # hipLimitStackSize (0) is newer than the 5.2 headers: by value
    Fact("device/hipDeviceSetGetLimit.cc:183", lambda e: lib.hipDeviceGetLimit(N, ffi.cast("enum hipLimit_t", 0)),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceSetGetSharedMemConfig.cc:75",
         lambda e: lib.hipDeviceSetSharedMemConfig(ffi.cast("hipSharedMemConfig", -1)),
         {(5, 2): "hipSuccess", (5, 3): "hipErrorNotSupported", (5, 5): "hipSuccess",
          (5, 6): "hipErrorInvalidValue"},
         note="hipamd up to 5.5 does not check the value (5.3/5.4: NotSupported for any)",
         hiptests="hipErrorInvalidValue"),
    Fact("device/hipDeviceSetGetSharedMemConfig.cc:206", lambda e: lib.hipDeviceGetSharedMemConfig(N),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceTotalMem.cc:54", lambda e: lib.hipDeviceTotalMem(N, 0), "hipErrorInvalidValue"),
    Fact("device/hipDeviceTotalMem.cc:59", lambda e: lib.hipDeviceTotalMem(_new(P), -1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceTotalMem.cc:66", lambda e: lib.hipDeviceTotalMem(_new(P), e.device_count()),
         "hipErrorInvalidDevice"),
    Fact("device/hipDriverGetVersion.cc:67", lambda e: lib.hipDriverGetVersion(N), "hipErrorInvalidValue"),
    Fact("device/hipRuntimeGetVersion.cc", lambda e: lib.hipRuntimeGetVersion(N), "hipErrorInvalidValue"),
    Fact("device/hipGetDeviceAttribute.cc:535",
         lambda e: lib.hipHostGetDevicePointer(ffi.new("void **"), ffi.new("char[64]"), 0),
         "hipErrorInvalidValue", note="host memory HIP does not know"),
    Fact("device/hipGetSetDeviceFlags.cc:48", lambda e: lib.hipGetDeviceFlags(N), "hipErrorInvalidValue"),
    Fact("device/hipGetSetDeviceFlags.cc:247(0b011)", lambda e: lib.hipSetDeviceFlags(0b011),
         {(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"},
         note="hip-tests skips it on AMD (EXSWCPHIPT-115); clr refuses overlapping schedule flags "
              "from 5.5", hiptests="hipErrorInvalidValue"),
    Fact("device/hipGetSetDeviceFlags.cc:247(0b101)", lambda e: lib.hipSetDeviceFlags(0b101),
         {(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}),
    Fact("device/hipGetSetDeviceFlags.cc:247(0b110)", lambda e: lib.hipSetDeviceFlags(0b110),
         {(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}),
    Fact("device/hipGetSetDeviceFlags.cc:247(0b111)", lambda e: lib.hipSetDeviceFlags(0b111),
         {(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}),
    Fact("device/hipGetSetDeviceFlags.cc:247(0b100000)", lambda e: lib.hipSetDeviceFlags(0b100000),
         "hipErrorInvalidValue"),
    Fact("device/hipGetSetDeviceFlags.cc:247(0xFFFF)", lambda e: lib.hipSetDeviceFlags(0xFFFF),
         "hipErrorInvalidValue"),
    Fact("device/hipInit.cc:69", lambda e: lib.hipInit(1),
         {(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"},
         note="hipInit ignores its flags up to 5.4", hiptests="hipErrorInvalidValue"),
    Fact("device/hipInit.cc:69(0)", lambda e: lib.hipInit(0), "hipSuccess"),
    Fact("device/hipSetGetDevice.cc:185", lambda e: lib.hipGetDevice(N), "hipErrorInvalidValue"),
    Fact("device/hipSetGetDevice.cc:187", lambda e: lib.hipSetDevice(-1), "hipErrorInvalidDevice"),
    Fact("device/hipSetGetDevice.cc:190", lambda e: lib.hipSetDevice(e.device_count()),
         "hipErrorInvalidDevice"),
    Fact("device/hipSetGetDevice.cc:250", lambda e: lib.hipDeviceGet(N, 0),
         {(5, 2): "hipErrorInvalidDevice", (5, 5): "hipErrorInvalidValue"},
         note="ihipDeviceGet returned InvalidDevice for a null pointer up to 5.4",
         hiptests="hipErrorInvalidValue"),
    Fact("device/hipSetGetDevice.cc:256", lambda e: lib.hipDeviceGet(_new("hipDevice_t *"), e.device_count()),
         "hipErrorInvalidDevice"),
    Fact("device/hipSetGetDevice.cc:261", lambda e: lib.hipDeviceGet(_new("hipDevice_t *"), -1),
         "hipErrorInvalidDevice"),
    Fact("device/hipGetDeviceCount.cc", lambda e: lib.hipGetDeviceCount(N), "hipErrorInvalidValue"),
    Fact("device/hipGetDeviceProperties.cc", lambda e: lib.hipGetDeviceProperties(N, 0),
         "hipErrorInvalidValue"),
    Fact("device/hipGetDeviceProperties.cc(-1)",
         lambda e: lib.hipGetDeviceProperties(_new("hipDeviceProp_t *"), -1), "hipErrorInvalidDevice"),
    Fact("device/hipGetDeviceProperties.cc(count)",
         lambda e: lib.hipGetDeviceProperties(_new("hipDeviceProp_t *"), e.device_count()),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceGetAttribute.cc", lambda e: lib.hipDeviceGetAttribute(
        N, lib.hipDeviceAttributeMaxThreadsPerBlock, 0), "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetAttribute.cc(-1)", lambda e: lib.hipDeviceGetAttribute(
        _new(I), lib.hipDeviceAttributeMaxThreadsPerBlock, -1), "hipErrorInvalidDevice"),
    Fact("device/hipDeviceGetPCIBusId.cc", lambda e: lib.hipDeviceGetPCIBusId(N, 32, 0),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetPCIBusId.cc(len)", lambda e: lib.hipDeviceGetPCIBusId(_new(CHAR), 0, 0),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetPCIBusId.cc(dev)", lambda e: lib.hipDeviceGetPCIBusId(_new(CHAR), 32, -1),
         "hipErrorInvalidDevice"),
    Fact("device/hipDeviceGetByPCIBusId.cc", lambda e: lib.hipDeviceGetByPCIBusId(N, b"0000:03:00.0"),
         "hipErrorInvalidValue"),
    Fact("device/hipDeviceGetStreamPriorityRange.cc",
         lambda e: lib.hipDeviceGetStreamPriorityRange(N, N), "hipSuccess"),
    Fact("device/hipChooseDevice.cc", lambda e: lib.hipChooseDevice(N, _new("hipDeviceProp_t *")),
         "hipErrorInvalidValue"),
    Fact("device/hipChooseDevice.cc(prop)", lambda e: lib.hipChooseDevice(_new(I), N),
         "hipErrorInvalidValue"),
]


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()
    lib.hipSetDeviceFlags(lib.hipDeviceScheduleAuto)


@pytest.mark.parametrize("fact", FACTS, ids=ids(FACTS))
def test_hiptests_device(env, fact):
    fact.check(env)
