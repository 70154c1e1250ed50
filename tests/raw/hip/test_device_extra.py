"""hipDeviceGetTexture1DLinearMaxWidth and hipSetValidDevices (clr
hipamd/src/hip_device_runtime.cpp, amd-staging).  Stub: hip_device_extra.c."""
from __future__ import annotations

import pytest

from .helpers import check, device_count, ffi, hipamd, lib, ok

pytestmark = hipamd


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


@needs("hipDeviceGetTexture1DLinearMaxWidth")
def test_texture_1d_linear_max_width_is_the_limit_over_the_element_size():
    prop = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(prop, 0))
    width = ffi.new("size_t *")
    float4 = ffi.new("hipChannelFormatDesc *",
                     lib.hipCreateChannelDesc(32, 32, 32, 32, lib.hipChannelFormatKindFloat))
    ok(lib.hipDeviceGetTexture1DLinearMaxWidth(width, float4, 0))
    assert width[0] == prop.maxTexture1DLinear // 16 > 0
    byte = ffi.new("hipChannelFormatDesc *",
                   lib.hipCreateChannelDesc(8, 0, 0, 0, lib.hipChannelFormatKindUnsigned))
    ok(lib.hipDeviceGetTexture1DLinearMaxWidth(width, byte, 0))
    assert width[0] == prop.maxTexture1DLinear


@needs("hipDeviceGetTexture1DLinearMaxWidth")
def test_texture_1d_linear_max_width_bad_input():
    width = ffi.new("size_t *")
    none = ffi.new("hipChannelFormatDesc *",
                   lib.hipCreateChannelDesc(0, 0, 0, 0, lib.hipChannelFormatKindNone))
    one = ffi.new("hipChannelFormatDesc *",
                  lib.hipCreateChannelDesc(32, 0, 0, 0, lib.hipChannelFormatKindFloat))
    check(lib.hipDeviceGetTexture1DLinearMaxWidth(ffi.NULL, one, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetTexture1DLinearMaxWidth(width, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetTexture1DLinearMaxWidth(width, none, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetTexture1DLinearMaxWidth(width, one, device_count()),
          "hipErrorInvalidDevice")


@needs("hipSetValidDevices")
def test_set_valid_devices_is_not_implemented_by_hipamd():
    devices = ffi.new("int[]", [0])
    check(lib.hipSetValidDevices(devices, 1), "hipErrorNotSupported")
    assert lib.hipGetLastError() == lib.hipErrorNotSupported
