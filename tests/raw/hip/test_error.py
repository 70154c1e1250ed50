"""The per-thread last error and error names (hipamd hip_error.cpp)."""
from __future__ import annotations

import threading

import pytest

from .helpers import BACKEND, check, ffi, hipamd, lib, name


# platform-independent
def test_error_names_are_the_enum_names():
    for status in ("hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory",
                   "hipErrorNoDevice", "hipErrorInvalidDevice", "hipErrorNotReady",
                   "hipErrorInvalidHandle", "hipErrorNotSupported",
                   "hipErrorStreamCaptureInvalidated", "hipErrorPeerAccessAlreadyEnabled"):
        assert name(getattr(lib, status)) == status


# hipamd-specific: 5.2 returns the name from hipGetErrorString too, and
# "hipErrorUnknown" for codes it does not know
@hipamd
def test_error_string_and_unknown_codes_as_hipamd_52():
    assert ffi.string(lib.hipGetErrorString(lib.hipErrorInvalidValue)) == b"hipErrorInvalidValue"
    assert ffi.string(lib.hipGetErrorName(12345)) == b"hipErrorUnknown"
    assert ffi.string(lib.hipGetErrorString(777)) == b"hipErrorUnknown"


# platform-independent
def test_get_last_error_returns_and_resets():
    check(lib.hipSetDevice(9999), "hipErrorInvalidDevice")
    check(lib.hipPeekAtLastError(), "hipErrorInvalidDevice")
    check(lib.hipPeekAtLastError(), "hipErrorInvalidDevice")
    check(lib.hipGetLastError(), "hipErrorInvalidDevice")
    check(lib.hipGetLastError())
    check(lib.hipPeekAtLastError())


# hipamd-specific: HIP_RETURN stores every status, hipSuccess included, so a
# successful call clears an earlier error (CUDA keeps it)
@hipamd
def test_a_successful_call_overwrites_the_last_error():
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    count = ffi.new("int *")
    check(lib.hipGetDeviceCount(count))
    check(lib.hipGetLastError())


# platform-independent
def test_last_error_is_per_thread():
    check(lib.hipSetDevice(-1), "hipErrorInvalidDevice")
    seen = []

    def other():
        seen.append(lib.hipPeekAtLastError())
        lib.hipMalloc(ffi.NULL, 16)        # an error of the other thread only
        seen.append(lib.hipGetLastError())

    t = threading.Thread(target=other)
    t.start()
    t.join()
    check(seen[0])
    check(seen[1], "hipErrorInvalidValue")
    check(lib.hipGetLastError(), "hipErrorInvalidDevice")


@pytest.mark.skipif(BACKEND != "nvidia", reason="HIP's NVIDIA platform only")
def test_error_names_come_from_cuda_on_nvidia():
    # platform difference: hipGetErrorName maps to cudaGetErrorName there
    assert ffi.string(lib.hipGetErrorName(0)) == b"cudaSuccess"
    assert ffi.string(ffi.cast("hipError_t", 0)) == "hipSuccess"
