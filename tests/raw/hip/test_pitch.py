"""Pitched and 3-D allocations and fills (hipamd hip_memory.cpp ihipMallocPitch,
hipMalloc3D, ihipMemset3D; stub: rocpy/_native/stub/hip_pitch.c).

Expectations from ROCm/hip-tests at rocm-5.7.1 (``HT`` below is
``catch/unit/memory/``), each cited by file and line."""
from __future__ import annotations

import numpy as np

from .helpers import check, ffi, hipamd, lib, memory_type, ok, stream

SIZE_MAX = (1 << 64) - 1
HT_PITCH = "hip-tests catch/unit/memory/hipMallocPitch.cc"
HT_MEMSET = "hip-tests catch/unit/memory/hipMemsetNegative.cc"


def extent(w, h, d):
    e = ffi.new("hipExtent *")
    e.width, e.height, e.depth = w, h, d
    return e[0]


def malloc3d(w, h, d):
    p = ffi.new("hipPitchedPtr *")
    ok(lib.hipMalloc3D(p, extent(w, h, d)))
    return p[0]


def pitch_alignment() -> int:
    v = ffi.new("int *")
    ok(lib.hipDeviceGetAttribute(v, lib.hipDeviceAttributeTexturePitchAlignment, 0))
    return v[0]


# hipamd-specific: rows padded to the image pitch alignment; the memory is
# hipMalloc's (hipFree releases it); hip-tests hipMallocPitch.cc:161
# (Unit_hipMallocPitch_ValidatePitch) writes and reads every row
@hipamd
def test_malloc_pitch_pads_rows_and_is_device_memory():
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    ok(lib.hipMallocPitch(p, pitch, 100, 7))
    align = pitch_alignment()
    assert pitch[0] % align == 0 and pitch[0] >= 100 and pitch[0] < 100 + align
    data = np.arange(100 * 7, dtype=np.uint8).reshape(7, 100)
    ok(lib.hipMemcpy2D(p[0], pitch[0], ffi.from_buffer(data), 100, 100, 7,
                       lib.hipMemcpyHostToDevice))
    out = np.zeros_like(data)
    ok(lib.hipMemcpy2D(ffi.from_buffer(out), 100, p[0], pitch[0], 100, 7,
                       lib.hipMemcpyDeviceToHost))
    assert (out == data).all()
    attrs = ffi.new("hipPointerAttribute_t *")
    ok(lib.hipPointerGetAttributes(attrs, p[0]))
    assert memory_type(attrs) == lib.hipMemoryTypeDevice
    ok(lib.hipFree(p[0]))


# hipamd-specific: a zero dimension allocates nothing and succeeds (ihipMallocPitch)
@hipamd
def test_malloc_pitch_zero_size_is_null():
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    p[0] = ffi.cast("void *", 1)
    ok(lib.hipMallocPitch(p, pitch, 0, 5))
    assert p[0] == ffi.NULL
    q = ffi.new("hipPitchedPtr *")
    ok(lib.hipMalloc3D(q, extent(4, 4, 0)))
    assert q.ptr == ffi.NULL


# hipamd-specific: bad arguments
@hipamd
def test_malloc_pitch_negative():
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    # HT hipMallocPitch.cc:212 (Invalid ptr)
    check(lib.hipMallocPitch(ffi.NULL, pitch, 1, 1), "hipErrorInvalidValue")
    # HT hipMallocPitch.cc:216 (Invalid pitch: 5.2 writes through it; clr checks it)
    check(lib.hipMallocPitch(p, ffi.NULL, 1, 1), "hipErrorInvalidValue")
    # HT hipMallocPitch.cc:227 (Max size_t height)
    check(lib.hipMallocPitch(p, pitch, 1, SIZE_MAX), "hipErrorOutOfMemory")
    # clr ihipMallocPitch: a width whose padding overflows (hip-tests checks
    # it on NVIDIA only, hipMallocPitch.cc:222)
    check(lib.hipMallocPitch(p, pitch, SIZE_MAX, 1), "hipErrorInvalidValue")


# hipamd-specific: hipMemAllocPitch is hipMallocPitch (elementSizeBytes unread)
@hipamd
def test_mem_alloc_pitch_negative_and_element_size_ignored():
    p, pitch = ffi.new("hipDeviceptr_t *"), ffi.new("size_t *")
    # HT hipMallocPitch.cc:260 (Invalid dptr), :265 (Invalid pitch), :278 (Max size_t height)
    check(lib.hipMemAllocPitch(ffi.NULL, pitch, 1, 1, 4), "hipErrorInvalidValue")
    check(lib.hipMemAllocPitch(p, ffi.NULL, 1, 1, 4), "hipErrorInvalidValue")
    check(lib.hipMemAllocPitch(p, pitch, 1, SIZE_MAX, 4), "hipErrorOutOfMemory")
    # hipMallocPitch.cc:245 expects InvalidValue for element sizes 0/7/12/17
    # on NVIDIA only: hipamd passes it through (clr wins)
    ok(lib.hipMemAllocPitch(p, pitch, 16, 2, 7))
    ok(lib.hipFree(p[0]))


# hipamd-specific: hipMalloc3D
@hipamd
def test_malloc3d_fields_and_negative():
    q = malloc3d(33, 5, 3)
    assert q.xsize == 33 and q.ysize == 5 and q.pitch % pitch_alignment() == 0
    ok(lib.hipFree(q.ptr))
    p = ffi.new("hipPitchedPtr *")
    # HT hipMallocPitch.cc:173 (Invalid ptr), :189 (Max height), :194 (Max depth)
    check(lib.hipMalloc3D(ffi.NULL, extent(1, 1, 1)), "hipErrorInvalidValue")
    check(lib.hipMalloc3D(p, extent(1, SIZE_MAX, 1)), "hipErrorOutOfMemory")
    check(lib.hipMalloc3D(p, extent(1, 1, SIZE_MAX)), "hipErrorOutOfMemory")


# hipamd-specific: hip-tests hipMemset3D.cc:34 (Unit_hipMemset3D_BasicFunctional)
# and :82 (the Async form): every byte of the extent set, padding untouched
@hipamd
def test_memset3d_sets_the_extent_only():
    w, h, d = 40, 6, 3
    q = malloc3d(w, h, d)
    ok(lib.hipMemset(q.ptr, 0, q.pitch * h * d))
    ok(lib.hipMemset3D(q, 0x22, extent(w, h, d)))
    s = stream()
    ok(lib.hipMemset3DAsync(q, 0x33, extent(8, h, d), s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros((d, h, q.pitch), dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), q.ptr, out.nbytes, lib.hipMemcpyDeviceToHost))
    assert (out[:, :, :8] == 0x33).all() and (out[:, :, 8:w] == 0x22).all()
    assert (out[:, :, w:] == 0).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(q.ptr))


# hipamd-specific: bad destinations and sizes, sync and async forms alike
@hipamd
def test_memset3d_negative():
    valid = extent(184, 57, 16)             # hipMemsetNegative.cc:25
    q = malloc3d(184, 57, 16)
    for api in (lambda p, e: lib.hipMemset3D(p, 0x42, e),
                lambda p, e: lib.hipMemset3DAsync(p, 0x42, e, ffi.NULL)):
        # HT hipMemsetNegative.cc:150 (zero-initialised pitched pointer)
        check(api(ffi.new("hipPitchedPtr *")[0], valid), "hipErrorInvalidValue")
        bad = ffi.new("hipPitchedPtr *", q)
        bad.ptr = ffi.NULL                  # :161 (Nullptr Dst)
        check(api(bad[0], valid), "hipErrorInvalidValue")
        host = ffi.new("char[]", 184 * 57 * 16)
        bad.ptr = host                      # :164 (Host Pointer as Dst)
        check(api(bad[0], valid), "hipErrorInvalidValue")
        bad = ffi.new("hipPitchedPtr *", q)
        bad.pitch = 1                       # :169 (Invalid Pitch)
        check(api(bad[0], valid), "hipErrorInvalidValue")
        # :181 (Max Width), :183 (Max Height), :186 (Max Depth), :189 (width beyond the pitch)
        for e in (extent(SIZE_MAX, 57, 16), extent(184, SIZE_MAX, 16),
                  extent(184, 57, SIZE_MAX), extent(q.pitch + 1, 57, 16)):
            check(api(q, e), "hipErrorInvalidValue")
        # :192/:194 (height/depth + 1) are skipped on AMD (EXSWCPHIPT-52:
        # hipamd misses them); the stub refuses the region beyond the allocation
        check(api(q, extent(184, 58, 16)), "hipErrorInvalidValue")
        check(api(q, extent(184, 57, 17)), "hipErrorInvalidValue")
        past = ffi.new("hipPitchedPtr *", q)
        past.ptr = ffi.cast("char *", q.ptr) + q.pitch * 57 * 16 + 1
        # :212 (out-of-bounds pointer, zero extent: success), :215 (valid extent)
        ok(api(past[0], extent(0, 0, 0)))
        check(api(past[0], valid), "hipErrorInvalidValue")
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipFree(q.ptr))


# hipamd-specific: pitched allocations are refused during stream capture
# (CHECK_STREAM_CAPTURE_SUPPORTED in hipMallocPitch/hipMalloc3D)
@hipamd
def test_pitched_allocation_during_capture_is_unsupported():
    s = stream()
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    check(lib.hipMallocPitch(p, pitch, 16, 16), "hipErrorStreamCaptureUnsupported")
    g = ffi.new("hipGraph_t *")
    check(lib.hipStreamEndCapture(s, g), "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))
