"""hipGetProcAddress (headers of 6.2 on; clr hipamd/src/hip_device.cpp, the
same at rocm-6.2.0 and amd-staging): the runtime's own function by name.
Stub: hip_proc_address.c over the generated table of every HIP function."""
from __future__ import annotations

import pytest

from .helpers import check, ffi, hipamd, lib, ok

pytestmark = pytest.mark.skipif(not hasattr(lib, "hipGetProcAddress"),
                                reason="the headers declare no hipGetProcAddress")


def proc(name: bytes, version: int = 600, status=None):
    pfn = ffi.new("void **")
    return lib.hipGetProcAddress(name, pfn, version, 0, status or ffi.NULL), pfn[0]


def test_the_address_is_the_runtimes_function():
    status = ffi.new("hipDriverProcAddressQueryResult *", 99)
    rc, fn = proc(b"hipGetDeviceCount", status=status)
    ok(rc)
    assert status[0] == lib.HIP_GET_PROC_ADDRESS_SUCCESS
    count = ffi.new("int *")
    ok(ffi.cast("hipError_t (*)(int *)", fn)(count))
    direct = ffi.new("int *")
    ok(lib.hipGetDeviceCount(direct))
    assert count[0] == direct[0] >= 1
    # and a stateful one: the device set through the pointer is the thread's
    rc, set_device = proc(b"hipSetDevice")
    ok(rc)
    ok(ffi.cast("hipError_t (*)(int)", set_device)(0))


@hipamd
def test_device_properties_means_r0600_from_600():
    rc, fn = proc(b"hipGetDeviceProperties", 600)
    ok(rc)
    rc, r0600 = proc(b"hipGetDevicePropertiesR0600", 600)
    ok(rc)
    assert fn == r0600


@hipamd
def test_proc_address_bad_input():
    pfn = ffi.new("void **")
    check(lib.hipGetProcAddress(ffi.NULL, pfn, 600, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGetProcAddress(b"", pfn, 600, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGetProcAddress(b"hipMalloc", ffi.NULL, 600, 0, ffi.NULL), "hipErrorInvalidValue")
    status = ffi.new("hipDriverProcAddressQueryResult *", 99)
    pfn[0] = ffi.cast("void *", 1)
    check(lib.hipGetProcAddress(b"hipNoSuchFunction", pfn, 600, 0, status), "hipErrorInvalidValue")
    assert pfn[0] == ffi.NULL
    assert status[0] == lib.HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
    assert lib.hipGetLastError() == lib.hipErrorInvalidValue
