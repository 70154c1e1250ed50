"""hipExtGetLastError, hipDrvGetErrorName, hipDrvGetErrorString (clr
hipamd/src/hip_error.cpp, rocm-6.2.0 and amd-staging).  Stub: hip_error_drv.c."""
from __future__ import annotations

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, lib, ok

pytestmark = hipamd


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


@needs("hipExtGetLastError")
def test_ext_get_last_error_returns_and_resets():
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    check(lib.hipExtGetLastError(), "hipErrorInvalidDevice")
    ok(lib.hipExtGetLastError())
    ok(lib.hipGetLastError())


@needs("hipDrvGetErrorName")
def test_drv_get_error_name():
    s = ffi.new("const char **")
    ok(lib.hipDrvGetErrorName(lib.hipErrorInvalidValue, s))
    assert ffi.string(s[0]) == b"hipErrorInvalidValue"
    ok(lib.hipDrvGetErrorName(lib.hipErrorUnknown, s))
    assert ffi.string(s[0]) == b"hipErrorUnknown"
    # a value with no name: the name of hipErrorUnknown and hipErrorInvalidValue
    check(lib.hipDrvGetErrorName(ffi.cast("hipError_t", 12345), s), "hipErrorInvalidValue")
    assert ffi.string(s[0]) == b"hipErrorUnknown"
    check(lib.hipDrvGetErrorName(lib.hipErrorInvalidValue, ffi.NULL), "hipErrorInvalidValue")


@needs("hipDrvGetErrorString")
def test_drv_get_error_string_is_get_error_string():
    s = ffi.new("const char **")
    ok(lib.hipDrvGetErrorString(lib.hipErrorOutOfMemory, s))
    assert ffi.string(s[0]) == ffi.string(lib.hipGetErrorString(lib.hipErrorOutOfMemory))
    ok(lib.hipDrvGetErrorString(lib.hipErrorUnknown, s))
    check(lib.hipDrvGetErrorString(lib.hipErrorOutOfMemory, ffi.NULL), "hipErrorInvalidValue")


@version_sensitive
@needs("hipDrvGetErrorString")
def test_drv_get_error_string_of_an_unknown_value():
    # hipamd compares the text with "unknown error": from 5.3 that is what
    # ihipGetErrorString gives for a value it does not know; before, the
    # name "hipErrorUnknown", which never matches
    s = ffi.new("const char **")
    status = lib.hipDrvGetErrorString(ffi.cast("hipError_t", 12345), s)
    check(status, expect({(5, 2): "hipSuccess", (5, 3): "hipErrorInvalidValue"}))
    assert ffi.string(s[0]) == expect({(5, 2): b"hipErrorUnknown", (5, 3): b"unknown error"})
