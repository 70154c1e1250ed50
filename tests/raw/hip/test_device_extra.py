"""hipDeviceGetTexture1DLinearMaxWidth and hipSetValidDevices (clr
hipamd/src/hip_device_runtime.cpp, amd-staging).  Stub: hip_device_extra.c."""
from __future__ import annotations

import pytest

from .helpers import check, device_count, ffi, hipamd, lib, ok, stub_only

pytestmark = hipamd


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


def _linear_max_width_params() -> int:
    """How many parameters the headers give hipDeviceGetTexture1DLinearMaxWidth (0: none)."""
    f = getattr(lib, "hipDeviceGetTexture1DLinearMaxWidth", None)
    return len(ffi.typeof(f).args) if f is not None else 0


# hipamd's definition (size_t *, const hipChannelFormatDesc *, int), as 5.7 and 7.x declare it
declared_as_defined = pytest.mark.skipif(
    _linear_max_width_params() != 3,
    reason="the headers do not declare hipDeviceGetTexture1DLinearMaxWidth as hipamd defines it")


@declared_as_defined
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


@declared_as_defined
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


@stub_only
@pytest.mark.skipif(_linear_max_width_params() != 2,
                    reason="only HIP 6.4's headers declare (hipMemPool_t *, int)")
def test_texture_1d_linear_max_width_misdeclared_is_refused():
    # no call through HIP 6.4's declaration can reach hipamd's three parameters
    pool = ffi.new("hipMemPool_t *")
    check(lib.hipDeviceGetTexture1DLinearMaxWidth(pool, 0), "hipErrorNotSupported")


@needs("hipSetValidDevices")
def test_set_valid_devices_is_not_implemented_by_hipamd():
    devices = ffi.new("int[]", [0])
    check(lib.hipSetValidDevices(devices, 1), "hipErrorNotSupported")
    assert lib.hipGetLastError() == lib.hipErrorNotSupported
