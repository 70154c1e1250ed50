"""Copies and fills (hipamd hip_memory.cpp: ihipMemcpy, ihipMemcpyParam3D,
ihipMemset)."""
from __future__ import annotations

import time

import numpy as np
import pytest

from .helpers import (BACKEND, HostLog, check, ffi, hipamd, host_malloc, lib, malloc, ok, stream,
                      stub_only)

H2D, D2H, D2D, H2H, DEFAULT = (lib.hipMemcpyHostToDevice, lib.hipMemcpyDeviceToHost,
                               lib.hipMemcpyDeviceToDevice, lib.hipMemcpyHostToHost,
                               lib.hipMemcpyDefault)


def buf(a):
    return ffi.from_buffer(a)


# platform-independent: every kind, and Default detecting the pointers
@pytest.mark.parametrize("kind", ["explicit", "default"])
def test_round_trip_every_kind(kind):
    n = 4096
    src = np.random.default_rng(1).integers(0, 255, n, dtype=np.uint8)
    a, b = malloc(n), malloc(n)
    pinned = host_malloc(n)
    k = (lambda x: DEFAULT) if kind == "default" else (lambda x: x)
    ok(lib.hipMemcpy(a, buf(src), n, k(H2D)))
    ok(lib.hipMemcpy(b, a, n, k(D2D)))
    ok(lib.hipMemcpy(pinned, b, n, k(D2H)))
    out = np.zeros(n, dtype=np.uint8)
    ok(lib.hipMemcpy(buf(out), pinned, n, k(H2H)))
    assert (out == src).all()
    ok(lib.hipFree(a))
    ok(lib.hipFree(b))
    ok(lib.hipHostFree(pinned))


# platform-independent: the driver-style entry points
def test_htod_dtoh_dtod_and_async_forms():
    n = 1024
    src = np.arange(n, dtype=np.uint8)
    a, b = malloc(n), malloc(n)
    s = stream()
    out = np.zeros(n, dtype=np.uint8)
    ok(lib.hipMemcpyHtoD(a, buf(src), n))
    ok(lib.hipMemcpyDtoD(b, a, n))
    ok(lib.hipMemcpyDtoH(buf(out), b, n))
    assert (out == src).all()
    out[:] = 0
    ok(lib.hipMemcpyHtoDAsync(a, buf(src[::-1].copy()), n, s))
    ok(lib.hipMemcpyDtoDAsync(b, a, n, s))
    ok(lib.hipMemcpyDtoHAsync(buf(out), b, n, s))
    ok(lib.hipStreamSynchronize(s))
    assert (out == src[::-1]).all()
    ok(lib.hipMemcpyWithStream(buf(out), a, n, D2H, s))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(a))
    ok(lib.hipFree(b))


# hipamd-specific statuses of bad copies
@hipamd
def test_bad_copies():
    d = malloc(256)
    host = np.zeros(512, dtype=np.uint8)
    check(lib.hipMemcpy(d, buf(host), 512, H2D), "hipErrorInvalidValue")      # past the end
    check(lib.hipMemcpy(ffi.cast("char *", d) + 200, buf(host), 100, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy(ffi.NULL, buf(host), 16, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy(d, ffi.NULL, 16, H2D), "hipErrorInvalidValue")
    ok(lib.hipMemcpy(ffi.NULL, ffi.NULL, 0, H2D))                          # nothing to do
    other = np.zeros(512, dtype=np.uint8)
    check(lib.hipMemcpy(buf(other), buf(host), 16, H2D), "hipErrorInvalidValue")  # both pageable
    ok(lib.hipMemcpy(buf(other), buf(host), 16, DEFAULT))
    ok(lib.hipMemcpy(buf(other), buf(host), 16, H2H))
    ok(lib.hipMemcpy(d, buf(host), 16, D2H))       # hipamd ignores the kind of known memory
    ok(lib.hipFree(d))


# platform-independent: a synchronous copy runs on the null stream, which
# waits for the device's blocking streams
def test_sync_copy_waits_for_blocking_streams():
    n = 1 << 12
    d = malloc(n)
    ok(lib.hipMemset(d, 0, n))
    s = stream()
    log = HostLog()
    log.enqueue(s, "slow", delay=0.1)
    ok(lib.hipMemsetD32Async(d, 5, n // 4, s))
    out = np.zeros(n // 4, dtype=np.uint32)
    ok(lib.hipMemcpy(buf(out), d, n, D2H))
    assert (out == 5).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipamd-specific: an "async" copy from pageable memory is synchronous
@hipamd
def test_async_copy_from_pageable_memory_completes_before_returning():
    n = 1024
    d = malloc(n)
    s = stream()
    log = HostLog()
    log.enqueue(s, "slow", delay=0.1)
    src = np.full(n, 1, dtype=np.uint8)
    t0 = time.monotonic()
    ok(lib.hipMemcpyAsync(d, buf(src), n, H2D, s))
    assert time.monotonic() - t0 > 0.05 and log.entries == ["slow"]
    src[:] = 2                                  # too late to matter
    out = np.zeros(n, dtype=np.uint8)
    ok(lib.hipMemcpy(buf(out), d, n, D2H))
    assert (out == 1).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# platform-independent: pinned memory copies are asynchronous and in order
def test_async_copies_from_pinned_memory_are_ordered():
    n = 1 << 16
    h = host_malloc(n)
    hv = np.frombuffer(ffi.buffer(h, n), dtype=np.uint8)
    d = malloc(n)
    s = stream()
    out = host_malloc(n)
    ov = np.frombuffer(ffi.buffer(out, n), dtype=np.uint8)
    for value in range(1, 20):
        ok(lib.hipMemsetAsync(d, value, n, s))
        ok(lib.hipMemcpyAsync(out, d, n, D2H, s))
    ok(lib.hipStreamSynchronize(s))
    assert (ov == 19).all()
    hv[:] = 4
    ok(lib.hipMemcpyAsync(d, h, n, H2D, s))
    ok(lib.hipMemcpyAsync(out, d, n, D2H, s))
    ok(lib.hipStreamSynchronize(s))
    assert (ov == 4).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))
    ok(lib.hipHostFree(h))
    ok(lib.hipHostFree(out))


# platform-independent: fills of every width
def test_memset_widths():
    n = 64
    d = malloc(n * 4)
    out = np.zeros(n, dtype=np.uint32)
    ok(lib.hipMemset(d, 0xAB, n * 4))
    ok(lib.hipMemcpy(buf(out), d, n * 4, D2H))
    assert (out == 0xABABABAB).all()
    ok(lib.hipMemsetD16(d, 0x1234, n * 2))
    ok(lib.hipMemcpy(buf(out), d, n * 4, D2H))
    assert (out == 0x12341234).all()
    ok(lib.hipMemsetD32(d, 0x01020304, n))
    ok(lib.hipMemcpy(buf(out), d, n * 4, D2H))
    assert (out == 0x01020304).all()
    ok(lib.hipMemsetD8(d, 0x7F, n * 4))
    ok(lib.hipMemcpy(buf(out), d, n * 4, D2H))
    assert (out == 0x7F7F7F7F).all()
    s = stream()
    ok(lib.hipMemsetD8Async(d, 1, n * 4, s))
    ok(lib.hipMemsetD16Async(d, 2, n, s))          # the first half
    ok(lib.hipMemsetD32Async(ffi.cast("char *", d) + n * 2, 3, n // 2, s))
    ok(lib.hipMemsetAsync(d, 4, 4, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipMemcpy(buf(out), d, n * 4, D2H))
    assert out[0] == 0x04040404 and (out[1:n // 2] == 0x00020002).all()
    assert (out[n // 2:] == 3).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipamd-specific statuses of bad fills
@hipamd
def test_bad_memsets():
    d = malloc(64)
    local = np.zeros(64, dtype=np.uint8)
    check(lib.hipMemset(buf(local), 0, 64), "hipErrorInvalidValue")     # not device memory
    check(lib.hipMemset(d, 0, 65), "hipErrorInvalidValue")
    check(lib.hipMemsetD32(d, 0, 17), "hipErrorInvalidValue")
    check(lib.hipMemset(ffi.NULL, 0, 4), "hipErrorInvalidValue")
    ok(lib.hipMemset(ffi.NULL, 0, 0))
    check(lib.hipMemsetAsync(buf(local), 0, 64, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipFree(d))


def pitched(width, height, pitch):
    d = malloc(pitch * height)
    ok(lib.hipMemset(d, 0, pitch * height))
    return d


# platform-independent: 2D copies with pitches on both sides
def test_memcpy_2d():
    w, h, dpitch = 100, 8, 128
    src = np.arange(w * h, dtype=np.uint8).reshape(h, w)
    d = pitched(w, h, dpitch)
    ok(lib.hipMemcpy2D(d, dpitch, buf(src), w, w, h, H2D))
    back = np.zeros((h, w + 4), dtype=np.uint8)
    ok(lib.hipMemcpy2D(buf(back), w + 4, d, dpitch, w, h, D2H))
    assert (back[:, :w] == src).all() and (back[:, w:] == 0).all()
    s = stream()
    d2 = pitched(w, h, dpitch)
    ok(lib.hipMemcpy2DAsync(d2, dpitch, d, dpitch, w, h, D2D, s))
    ok(lib.hipStreamSynchronize(s))
    flat = np.zeros(dpitch * h, dtype=np.uint8)
    ok(lib.hipMemcpy(buf(flat), d2, dpitch * h, D2H))
    assert (flat.reshape(h, dpitch)[:, :w] == src).all()
    ok(lib.hipMemcpy2D(d2, dpitch, d, dpitch, 0, h, D2D))          # nothing to do
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))
    ok(lib.hipFree(d2))


# hipamd-specific statuses of bad 2D copies
@hipamd
def test_bad_memcpy_2d():
    w, h, pitch = 64, 4, 64
    d = pitched(w, h, pitch)
    host = np.zeros(w * h * 2, dtype=np.uint8)
    check(lib.hipMemcpy2D(d, 32, buf(host), w, w, h, H2D), "hipErrorInvalidPitchValue")
    check(lib.hipMemcpy2D(d, pitch, buf(host), w, w, h + 1, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy2D(buf(host), w, buf(host), w, w, h, D2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy2D(d, pitch, buf(host), w, w, h, 42), "hipErrorInvalidMemcpyDirection")
    ok(lib.hipMemcpy2D(buf(host), w, d, pitch, w, h, H2H))   # pinned detection: known memory
    ok(lib.hipFree(d))


def pitched_ptr(ptr, pitch, xsize, ysize):
    p = ffi.new("hipPitchedPtr *")
    p.ptr, p.pitch, p.xsize, p.ysize = ptr, pitch, xsize, ysize
    return p[0]


# platform-independent: a 3D box out of a bigger volume
@pytest.mark.skipif(BACKEND == "nvidia", reason="HIP 5.2's NVIDIA headers declare "
                    "hipMemcpy3DParms for nvcc only")
def test_memcpy_3d():
    X, Y, Z = 16, 8, 4
    vol = np.arange(X * Y * Z, dtype=np.uint8).reshape(Z, Y, X)
    d = malloc(X * Y * Z)
    ok(lib.hipMemcpy(d, buf(vol), vol.nbytes, H2D))
    out = np.zeros((2, 3, 4), dtype=np.uint8)
    p = ffi.new("hipMemcpy3DParms *")
    p.srcPtr = pitched_ptr(d, X, X, Y)
    p.srcPos.x, p.srcPos.y, p.srcPos.z = 5, 2, 1
    p.dstPtr = pitched_ptr(buf(out), 4, 4, 3)
    p.extent.width, p.extent.height, p.extent.depth = 4, 3, 2
    p.kind = D2H
    ok(lib.hipMemcpy3D(p))
    assert (out == vol[1:3, 2:5, 5:9]).all()
    s = stream()
    out[:] = 0
    ok(lib.hipMemcpy3DAsync(p, s))
    ok(lib.hipStreamSynchronize(s))
    assert (out == vol[1:3, 2:5, 5:9]).all()
    p.extent.depth = 0
    ok(lib.hipMemcpy3D(p))                                     # nothing to do
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipamd-specific statuses of bad 3D copies
@hipamd
def test_bad_memcpy_3d():
    d = malloc(256)
    p = ffi.new("hipMemcpy3DParms *")
    check(lib.hipMemcpy3D(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemcpy3D(p), "hipErrorInvalidValue")          # neither array nor pointer
    p.srcPtr = pitched_ptr(d, 16, 16, 4)
    p.dstPtr = pitched_ptr(d, 16, 16, 4)
    p.srcArray = ffi.cast("hipArray_t", 0x1000)
    check(lib.hipMemcpy3D(p), "hipErrorInvalidValue")          # both array and pointer
    p.srcArray = ffi.NULL
    p.extent.width, p.extent.height, p.extent.depth = 16, 4, 8  # 512 bytes of 256
    p.kind = D2D
    check(lib.hipMemcpy3D(p), "hipErrorInvalidValue")
    ok(lib.hipFree(d))


# stub: an array handle that is no array is refused (hipamd's is_valid on
# its memory object; arrays themselves: tests/raw/hip/test_array.py)
@stub_only
def test_memcpy_3d_unknown_array_is_invalid_value():
    d = malloc(256)
    p = ffi.new("hipMemcpy3DParms *")
    p.srcArray = ffi.cast("hipArray_t", 0x1000)
    p.dstPtr = pitched_ptr(d, 16, 16, 4)
    p.extent.width, p.extent.height, p.extent.depth = 16, 4, 1
    p.kind = D2D
    check(lib.hipMemcpy3D(p), "hipErrorInvalidValue")
    ok(lib.hipFree(d))


# platform-independent: 2D fills
def test_memset_2d():
    w, h, pitch = 10, 5, 16
    d = pitched(w, h, pitch)
    ok(lib.hipMemset2D(d, pitch, 9, w, h))
    s = stream()
    ok(lib.hipMemset2DAsync(d, pitch, 8, 2, h, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros((h, pitch), dtype=np.uint8)
    ok(lib.hipMemcpy(buf(out), d, pitch * h, D2H))
    assert (out[:, :2] == 8).all() and (out[:, 2:w] == 9).all() and (out[:, w:] == 0).all()
    if BACKEND != "nvidia":
        check(lib.hipMemset2D(d, pitch, 0, w, h + 1), "hipErrorInvalidValue")
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))
