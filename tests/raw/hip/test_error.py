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


# hipamd-specific: "hipErrorUnknown" for a code it does not know (the text
# hipGetErrorString gives changed at 5.3: test_versions.py)
@hipamd
def test_unknown_codes_are_named_unknown():
    assert ffi.string(lib.hipGetErrorName(12345)) == b"hipErrorUnknown"


# platform-independent
def test_get_last_error_returns_and_resets():
    check(lib.hipSetDevice(9999), "hipErrorInvalidDevice")
    check(lib.hipPeekAtLastError(), "hipErrorInvalidDevice")
    check(lib.hipPeekAtLastError(), "hipErrorInvalidDevice")
    check(lib.hipGetLastError(), "hipErrorInvalidDevice")
    check(lib.hipGetLastError())
    check(lib.hipPeekAtLastError())


# what a successful call does to the last error changed at 7.0: test_versions.py


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
