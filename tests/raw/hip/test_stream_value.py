"""Stream memory operations (hipamd hip_stream_ops.cpp ihipStreamOperation;
ROCclr's barrier-value conditions; stub: hip_stream_value.c).

The cases are ROCm/hip-tests' at rocm-5.7.1 (``catch/unit/stream/
hipStreamValue.cc``), each cited by line: a value that fails the condition
holds the stream, one that passes releases it."""
from __future__ import annotations

import time

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, host_malloc, lib, malloc, ok, stream

pytestmark = hipamd

ALL = (1 << 64) - 1
# (line, condition, mask, wait value, failing value, passing value)
WAIT32 = [
    (371, "Gte", 0xF, 0x4, 0x3, 0x6),
    (373, "Eq", 0x0000FFFF, 0x00000001, 0x0FFF0000, 0x0FFF0001),
    (377, "Eq", 0xFF, 0x11, 0x25, 0x11),
    (379, "And", 0xFF, 0xF4A, 0xF35, 0x02),
    (384, "Eq", 0xFFFFFFFF, 0x7FFFFFFF, 0x7FFF0000, 0x7FFFFFFF),
    (387, "Gte", 0xFFFFFFFF, 0x7FFF0001, 0x7FFF0000, 0x7FFF0010),
    (390, "And", 0xFFFFFFFF, 0x70F0F0F0, 0x0F0F0F0F, 0x1F0F0F0F),
    (393, "Nor", 0xFFFFFFFF, 0x7AAAAAAA, 0x85555555, 0x9AAAAAAA),
]
WAIT64 = [
    (438, "Gte", 0x0000FFFFFFFFFFFF, 0x000000007FFF0001, 0x7FFF00007FFF0000, 0x000000007FFF0001),
    (443, "Gte", 0xF, 0x4, 0x3, 0x6),
    (445, "Eq", 0x0000FFFFFFFFFFFF, 0x000000000FFF0001, 0x7FFF00000FFF0000, 0x7F0000000FFF0001),
    (450, "Eq", 0xFF, 0x11, 0x25, 0x11),
]


def held(s, seconds=0.05) -> bool:
    time.sleep(seconds)
    return lib.hipStreamQuery(s) == lib.hipErrorNotReady


@pytest.mark.parametrize("bits,case", [(32, c) for c in WAIT32] + [(64, c) for c in WAIT64],
                         ids=lambda v: str(v[0]) if isinstance(v, tuple) else str(v))
@pytest.mark.parametrize("where", ["host", "device"])
def test_wait_value_conditions(bits, case, where):
    _, cond, mask, value, fail, passing = case
    dtype = np.uint32 if bits == 32 else np.uint64
    word = host_malloc(8) if where == "host" else malloc(8)
    view = np.frombuffer(ffi.buffer(word, 8), dtype=dtype)     # stub memory is host memory
    view[0] = fail
    s = stream()
    wait = lib.hipStreamWaitValue32 if bits == 32 else lib.hipStreamWaitValue64
    ok(wait(s, word, value, getattr(lib, "hipStreamWaitValue" + cond), mask))
    assert held(s)
    view[0] = passing
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipHostFree(word) if where == "host" else lib.hipFree(word))


# hipStreamValue.cc:231 (Unit_hipStreamValue_Write): the value lands when
# the stream gets there, in order with the stream's other work
@pytest.mark.parametrize("bits", [32, 64])
def test_write_value_in_stream_order(bits):
    gate, word = host_malloc(4), malloc(8)
    ffi.cast("uint32_t *", gate)[0] = 0         # fresh memory holds anything
    s = stream()
    ok(lib.hipStreamWaitValue32(s, gate, 1, lib.hipStreamWaitValueEq, 0xFFFFFFFF))
    write = lib.hipStreamWriteValue32 if bits == 32 else lib.hipStreamWriteValue64
    value = 0x4321 if bits == 32 else 0x7FFF0000FFFF0000
    ok(write(s, word, value, 0))
    dtype = np.uint32 if bits == 32 else np.uint64
    view = np.frombuffer(ffi.buffer(word, 8), dtype=dtype)
    assert view[0] != value and held(s)
    np.frombuffer(ffi.buffer(gate, 4), dtype=np.uint32)[0] = 1
    ok(lib.hipStreamSynchronize(s))
    assert view[0] == value
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipHostFree(gate))
    ok(lib.hipFree(word))


# ihipStreamOperation: memory hipamd does not know is hipErrorInvalidValue;
# an unknown condition too (ShouldNotReachHere there)
def test_stream_value_negative():
    word = malloc(8)
    local = ffi.new("uint64_t *")
    check(lib.hipStreamWaitValue32(ffi.NULL, ffi.NULL, 0, 0, ALL & 0xFFFFFFFF),
          "hipErrorInvalidValue")
    check(lib.hipStreamWaitValue64(ffi.NULL, local, 0, 0, ALL), "hipErrorInvalidValue")
    check(lib.hipStreamWriteValue32(ffi.NULL, local, 0, 0), "hipErrorInvalidValue")
    check(lib.hipStreamWriteValue64(ffi.NULL, ffi.NULL, 0, 0), "hipErrorInvalidValue")
    check(lib.hipStreamWaitValue32(ffi.NULL, word, 0, 7, 0xFFFFFFFF), "hipErrorInvalidValue")
    # the last 4 bytes of an allocation hold no 8-byte word
    check(lib.hipStreamWriteValue64(ffi.NULL, ffi.cast("char *", word) + 4, 0, 0),
          "hipErrorInvalidValue")
    s = stream()
    ok(lib.hipStreamDestroy(s))
    check(lib.hipStreamWriteValue32(s, word, 1, 0), "hipErrorContextIsDestroyed")
    ok(lib.hipFree(word))
