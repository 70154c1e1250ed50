"""Arrays (hipamd hip_memory.cpp ihipArrayCreate, ihipArrayDestroy, array copies;
stub: rocpy/_native/stub/hip_array.c, packed linear storage).

Expectations from ROCm/hip-tests at rocm-5.7.1, ``catch/unit/memory/``,
each cited by file and line."""
from __future__ import annotations

import numpy as np
import pytest

from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, lib, ok, stream, stub_only

pytestmark = hipamd

H2D, D2H = lib.hipMemcpyHostToDevice, lib.hipMemcpyDeviceToHost


def float4():
    return lib.hipCreateChannelDesc(32, 32, 32, 32, lib.hipChannelFormatKindFloat)


def malloc_array(width, height, desc=None, flags=0):
    a = ffi.new("hipArray_t *")
    d = ffi.new("hipChannelFormatDesc *", desc if desc is not None else
                lib.hipCreateChannelDesc(32, 0, 0, 0, lib.hipChannelFormatKindSigned))
    ok(lib.hipMallocArray(a, d, width, height, flags))
    return a[0]


def driver_desc(width, height, fmt=None, channels=1):
    d = ffi.new("HIP_ARRAY_DESCRIPTOR *")
    d.Width, d.Height = width, height
    d.Format = lib.HIP_AD_FORMAT_FLOAT if fmt is None else fmt
    d.NumChannels = channels
    return d


# the channel descriptor is what was asked for (hipCreateChannelDesc)
def test_create_channel_desc_and_get_channel_desc():
    d = float4()
    assert (d.x, d.y, d.z, d.w, d.f) == (32, 32, 32, 32, lib.hipChannelFormatKindFloat)
    a = malloc_array(16, 4, d)
    got = ffi.new("hipChannelFormatDesc *")
    ok(lib.hipGetChannelDesc(got, a))
    assert (got.x, got.y, got.z, got.w, got.f) == (32, 32, 32, 32, lib.hipChannelFormatKindFloat)
    check(lib.hipGetChannelDesc(ffi.NULL, a), "hipErrorInvalidValue")
    ok(lib.hipFreeArray(a))


# hipamd: hipFreeArray / hipArrayDestroy of null or of something that is no
# array is hipErrorInvalidValue (ihipArrayDestroy); hip-tests hipArray.cc
# frees every array it makes with hipFreeArray
def test_free_array_null_and_twice():
    check(lib.hipFreeArray(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipArrayDestroy(ffi.NULL), "hipErrorInvalidValue")
    a = malloc_array(8, 8)
    ok(lib.hipFreeArray(a))
    check(lib.hipFreeArray(a), "hipErrorInvalidValue")
    b = ffi.new("hipArray_t *")
    ok(lib.hipArrayCreate(b, driver_desc(32, 2)))
    ok(lib.hipArrayDestroy(b[0]))
    check(lib.hipArrayDestroy(b[0]), "hipErrorInvalidValue")


# hipMallocArray's bad arguments
@version_sensitive
def test_malloc_array_negative():
    a = ffi.new("hipArray_t *")
    d = ffi.new("hipChannelFormatDesc *", float4())
    # hipMallocArray.cc:521 (zero width, heights 0 and 32)
    for h in (0, 32):
        check(lib.hipMallocArray(a, d, 0, h, lib.hipArrayDefault), "hipErrorInvalidValue")
    # :529 (null array), :535 (null desc: hipamd reads it; the stub checks)
    check(lib.hipMallocArray(ffi.NULL, d, 1024, 0, 0), "hipErrorInvalidValue")
    check(lib.hipMallocArray(a, ffi.NULL, 1024, 0, 0), "hipErrorInvalidValue")
    # :504 (a channel layout hipamd has no format for: 3 channels)
    three = ffi.new("hipChannelFormatDesc *",
                    lib.hipCreateChannelDesc(32, 32, 32, 0, lib.hipChannelFormatKindFloat))
    check(lib.hipMallocArray(a, three, 1024, 1024, 0), "hipErrorInvalidValue")
    # :697 (beyond the device's 2-D image limits)
    big = ffi.new("int *")
    ok(lib.hipDeviceGetAttribute(big, lib.hipDeviceAttributeMaxTexture2DWidth, 0))
    check(lib.hipMallocArray(a, d, big[0] + 1, 1, 0), "hipErrorInvalidValue")
    # hipamd's ihipArrayCreate: 5.2 refuses surface, cubemap and gather
    # arrays with hipErrorNotSupported before any size check (hip-tests
    # expects InvalidValue for some of these sizes on AMD: clr's order wins);
    # 5.3 makes cubemaps hipErrorInvalidValue, 5.7 accepts the other two
    check(lib.hipMallocArray(a, d, 64, 64, lib.hipArrayCubemap),
          expect({(5, 2): "hipErrorNotSupported", (5, 3): "hipErrorInvalidValue"}))
    for flag in (lib.hipArraySurfaceLoadStore, lib.hipArrayTextureGather):
        status = lib.hipMallocArray(a, d, 64, 64, flag)
        check(status, expect({(5, 2): "hipErrorNotSupported", (5, 7): "hipSuccess"}))
        if status == 0:
            ok(lib.hipFreeArray(a[0]))


# hipArrayCreate / hipArray3DCreate / hipMalloc3DArray
def test_driver_array_create_negative():
    a = ffi.new("hipArray_t *")
    # hipArrayCreate.cc:306 (zero width), :319 (null array), :323 (null desc)
    for h in (0, 1024):
        check(lib.hipArrayCreate(a, driver_desc(0, h, channels=4)), "hipErrorInvalidValue")
    check(lib.hipArrayCreate(ffi.NULL, driver_desc(1024, 1024, channels=4)), "hipErrorInvalidValue")
    check(lib.hipArrayCreate(a, ffi.NULL), "hipErrorInvalidValue")
    # :340 (channels other than 1, 2, 4)
    for n in (0, 3, 5, 8):
        check(lib.hipArrayCreate(a, driver_desc(1024, 0, channels=n)), "hipErrorInvalidValue")
    # :363 (a format that is no HIP_AD_FORMAT_*)
    check(lib.hipArrayCreate(a, driver_desc(1024, 0, fmt=0x7f, channels=4)), "hipErrorInvalidValue")
    # :291 (2-D beyond the image limits)
    w = ffi.new("int *")
    ok(lib.hipDeviceGetAttribute(w, lib.hipDeviceAttributeMaxTexture2DHeight, 0))
    check(lib.hipArrayCreate(a, driver_desc(16, w[0] + 1)), "hipErrorInvalidValue")
    d3 = ffi.new("HIP_ARRAY3D_DESCRIPTOR *")
    d3.Width, d3.Height, d3.Depth, d3.Format, d3.NumChannels = 8, 8, 8, lib.HIP_AD_FORMAT_FLOAT, 1
    # hipArray3DCreate.cc:213 (null array), :220 (null desc)
    check(lib.hipArray3DCreate(ffi.NULL, d3), "hipErrorInvalidValue")
    check(lib.hipArray3DCreate(a, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipArray3DCreate(a, d3))
    ok(lib.hipArrayDestroy(a[0]))
    e = ffi.new("hipExtent *")
    d = ffi.new("hipChannelFormatDesc *", float4())
    # hipMalloc3DArray.cc:248 (null array), :259 (null desc), :271 (zero
    # width), :287 (zero height with a depth, not layered)
    e.width, e.height, e.depth = 6, 6, 6
    check(lib.hipMalloc3DArray(ffi.NULL, d, e[0], 0), "hipErrorInvalidValue")
    check(lib.hipMalloc3DArray(a, ffi.NULL, e[0], 0), "hipErrorInvalidValue")
    e.width = 0
    check(lib.hipMalloc3DArray(a, d, e[0], 0), "hipErrorInvalidValue")
    e.width, e.height = 6, 0
    check(lib.hipMalloc3DArray(a, d, e[0], 0), "hipErrorInvalidValue")
    e.height = 6
    ok(lib.hipMalloc3DArray(a, d, e[0], 0))
    ok(lib.hipFreeArray(a[0]))


# 5.2's public hipArray fields, as ihipArrayCreate fills them
def test_array_fields_as_hipamd_fills_them():
    try:
        ffi.sizeof("struct hipArray")
    except ffi.error:
        pytest.skip("these headers make hipArray opaque (HIP 6+): no public fields to check")
    a = ffi.new("hipArray_t *")
    ok(lib.hipArrayCreate(a, driver_desc(20, 3, lib.HIP_AD_FORMAT_UNSIGNED_INT16, 2)))
    arr = a[0]
    assert (arr.width, arr.height, arr.depth) == (20, 3, 0)
    assert arr.Format == lib.HIP_AD_FORMAT_UNSIGNED_INT16 and arr.NumChannels == 2
    assert (arr.desc.x, arr.desc.y, arr.desc.z, arr.desc.f) == (16, 16, 0,
                                                                lib.hipChannelFormatKindUnsigned)
    ok(lib.hipArrayDestroy(arr))


# hipMemcpy2DToArray / FromArray round trip, offsets in bytes and rows
# (hipMemcpy2DToArray.cc, hipMemcpy2DFromArray.cc basic sections)
def test_2d_copies_to_and_from_an_array():
    w, h = 16, 8                               # int elements
    a = malloc_array(w, h)
    src = np.arange(w * h, dtype=np.int32).reshape(h, w)
    ok(lib.hipMemcpy2DToArray(a, 0, 0, ffi.from_buffer(src), w * 4, w * 4, h, H2D))
    out = np.zeros((h, w), dtype=np.int32)
    ok(lib.hipMemcpy2DFromArray(ffi.from_buffer(out), w * 4, a, 0, 0, w * 4, h, D2H))
    assert (out == src).all()
    part = np.zeros((2, 3), dtype=np.int32)
    s = stream()
    ok(lib.hipMemcpy2DFromArrayAsync(ffi.from_buffer(part), 12, a, 4 * 4, 5, 12, 2, D2H, s))
    ok(lib.hipStreamSynchronize(s))
    assert (part == src[5:7, 4:7]).all()
    patch = np.full((2, 2), -1, dtype=np.int32)
    ok(lib.hipMemcpy2DToArrayAsync(a, 8, 1, ffi.from_buffer(patch), 8, 8, 2, H2D, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipMemcpy2DFromArray(ffi.from_buffer(out), w * 4, a, 0, 0, w * 4, h, D2H))
    expect = src.copy()
    expect[1:3, 2:4] = -1
    assert (out == expect).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFreeArray(a))


def test_2d_array_copies_negative():
    w, h = 16, 8
    a = malloc_array(w, h)
    host = np.zeros((h, 2 * w), dtype=np.int32)
    hp = ffi.from_buffer(host)
    # hipMemcpy2DToArray.cc:159 / hipMemcpy2DFromArray.cc:169: a null array
    # is hipErrorInvalidHandle (ihipMemcpy2DToArray's InvalidResourceHandle)
    check(lib.hipMemcpy2DToArray(ffi.NULL, 0, 0, hp, 2 * w * 4, w * 4, h, H2D),
          "hipErrorInvalidHandle")
    check(lib.hipMemcpy2DFromArray(hp, 2 * w * 4, ffi.NULL, 0, 0, w * 4, h, D2H),
          "hipErrorInvalidHandle")
    # hipMemcpy2DToArray.cc:164 / hipMemcpy2DFromArray.cc:164: null host side
    check(lib.hipMemcpy2DToArray(a, 0, 0, ffi.NULL, 2 * w * 4, w * 4, h, H2D),
          "hipErrorInvalidValue")
    check(lib.hipMemcpy2DFromArray(ffi.NULL, 2 * w * 4, a, 0, 0, w * 4, h, D2H),
          "hipErrorInvalidValue")
    # hipamd's hipMemcpy2DToArray_common: a zero pitch is InvalidPitchValue
    check(lib.hipMemcpy2DToArray(a, 0, 0, hp, 0, w * 4, h, H2D), "hipErrorInvalidPitchValue")
    # hipMemcpy2DToArray.cc:176-190 (NVIDIA-only there, EXSWHTEC-119): the
    # region beyond the array; the stub refuses it as validateRegion does
    check(lib.hipMemcpy2DToArray(a, 4, 0, hp, 2 * w * 4, w * 4, h, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy2DToArray(a, 0, 1, hp, 2 * w * 4, w * 4, h, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpy2DToArray(a, 0, 0, hp, 2 * w * 4, w * 4, h + 1, H2D),
          "hipErrorInvalidValue")
    # hipMemcpy2DToArray.cc:196: an invalid kind
    check(lib.hipMemcpy2DToArray(a, 0, 0, hp, 2 * w * 4, w * 4, h,
                                 ffi.cast("hipMemcpyKind", -1)), "hipErrorInvalidMemcpyDirection")
    ok(lib.hipFreeArray(a))


# hipMemcpyHtoA / AtoH on a 1-D array
def test_htoa_atoh():
    n = 1024
    a = malloc_array(n, 0)
    src = np.arange(n, dtype=np.int32)
    ok(lib.hipMemcpyHtoA(a, 0, ffi.from_buffer(src), n * 4))
    out = np.zeros(n, dtype=np.int32)
    ok(lib.hipMemcpyAtoH(ffi.from_buffer(out), a, 0, n * 4))
    assert (out == src).all()
    hp = ffi.from_buffer(out)
    # hipMemcpyAtoH.cc:100/:104 and hipMemcpyHtoA.cc:100/:104 (null sides)
    check(lib.hipMemcpyAtoH(ffi.NULL, a, 0, n * 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoH(hp, ffi.NULL, 0, n * 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoA(ffi.NULL, 0, hp, n * 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoA(a, 0, ffi.NULL, n * 4), "hipErrorInvalidValue")
    # hipMemcpyAtoH.cc:108/:113, hipMemcpyHtoA.cc:108/:113 (offset or count beyond it)
    check(lib.hipMemcpyAtoH(hp, a, n * 4 + 10, n * 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoH(hp, a, 0, n * 4 + 10), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoA(a, n * 4 + 10, hp, n * 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoA(a, 0, hp, n * 4 + 10), "hipErrorInvalidValue")
    ok(lib.hipFreeArray(a))
    # hipMemcpyAtoH.cc:123, hipMemcpyHtoA.cc:124: a 2-D array's whole size
    # (the copy is one row)
    b = malloc_array(32, 32)
    big = np.zeros(32 * 32, dtype=np.int32)
    check(lib.hipMemcpyAtoH(ffi.from_buffer(big), b, 0, big.nbytes), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoA(b, 0, ffi.from_buffer(big), big.nbytes), "hipErrorInvalidValue")
    ok(lib.hipFreeArray(b))


# hipMemcpy3D with an array side: the extent's width counts elements
# (hipamd getDrvMemcpy3DDesc) -- hipMemcpy3D.cc array sections
def test_memcpy3d_to_and_from_an_array():
    w, h, d = 8, 4, 2
    arr = ffi.new("hipArray_t *")
    e = ffi.new("hipExtent *")
    e.width, e.height, e.depth = w, h, d
    desc = ffi.new("hipChannelFormatDesc *",
                   lib.hipCreateChannelDesc(32, 0, 0, 0, lib.hipChannelFormatKindFloat))
    ok(lib.hipMalloc3DArray(arr, desc, e[0], 0))
    src = np.arange(w * h * d, dtype=np.float32).reshape(d, h, w)
    p = ffi.new("hipMemcpy3DParms *")
    p.srcPtr.ptr, p.srcPtr.pitch, p.srcPtr.xsize, p.srcPtr.ysize = ffi.from_buffer(src), w * 4, w, h
    p.dstArray = arr[0]
    p.extent = e[0]
    p.kind = H2D
    ok(lib.hipMemcpy3D(p))
    out = np.zeros_like(src)
    q = ffi.new("hipMemcpy3DParms *")
    q.srcArray = arr[0]
    q.dstPtr.ptr, q.dstPtr.pitch, q.dstPtr.xsize, q.dstPtr.ysize = ffi.from_buffer(out), w * 4, w, h
    q.extent = e[0]
    q.kind = D2H
    ok(lib.hipMemcpy3D(q))
    assert (out == src).all()
    ok(lib.hipFreeArray(arr[0]))


# hipMemcpyParam2D between host memory and an array (driver form: x in bytes)
def test_memcpy_param2d_with_an_array():
    w, h = 8, 4
    a = malloc_array(w, h)
    src = np.arange(w * h, dtype=np.int32).reshape(h, w)
    c = ffi.new("hip_Memcpy2D *")
    c.srcMemoryType, c.srcHost, c.srcPitch = lib.hipMemoryTypeHost, ffi.from_buffer(src), w * 4
    c.dstMemoryType, c.dstArray = lib.hipMemoryTypeArray, a
    c.WidthInBytes, c.Height = w * 4, h
    ok(lib.hipMemcpyParam2D(c))
    out = np.zeros_like(src)
    c2 = ffi.new("hip_Memcpy2D *")
    c2.srcMemoryType, c2.srcArray, c2.srcXInBytes, c2.srcY = lib.hipMemoryTypeArray, a, 8, 1
    c2.dstMemoryType, c2.dstHost, c2.dstPitch = lib.hipMemoryTypeHost, ffi.from_buffer(out), w * 4
    c2.WidthInBytes, c2.Height = 8, 3
    ok(lib.hipMemcpyParam2DAsync(c2, ffi.NULL))
    ok(lib.hipStreamSynchronize(ffi.NULL))
    assert (out[:3, :2] == src[1:4, 2:4]).all()
    check(lib.hipMemcpyParam2D(ffi.NULL), "hipErrorInvalidValue")
    c2.srcXInBytes = w * 4 - 4              # 8 bytes from the last element: past the row
    check(lib.hipMemcpyParam2D(c2), "hipErrorInvalidValue")
    ok(lib.hipFreeArray(a))


# stub: arrays are device memory the tracker counts (and frees)
@stub_only
def test_array_storage_is_tracked():
    before = lib.rocpy_stub_live_allocations()
    a = malloc_array(64, 64)
    assert lib.rocpy_stub_live_allocations() == before + 1
    ok(lib.hipFreeArray(a))
    assert lib.rocpy_stub_live_allocations() == before


@pytest.mark.parametrize("api", ["hipMallocArray", "hipFreeArray"])
def test_array_calls_during_capture_are_unsupported(api):
    s = stream()
    a = malloc_array(4, 4) if api == "hipFreeArray" else None
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    if api == "hipMallocArray":
        out = ffi.new("hipArray_t *")
        d = ffi.new("hipChannelFormatDesc *", float4())
        check(lib.hipMallocArray(out, d, 4, 4, 0), "hipErrorStreamCaptureUnsupported")
    else:
        check(lib.hipFreeArray(a), "hipErrorStreamCaptureUnsupported")
    g = ffi.new("hipGraph_t *")
    lib.hipStreamEndCapture(s, g)
    ok(lib.hipStreamDestroy(s))
    if a is not None:
        ok(lib.hipFreeArray(a))
