"""Array descriptors and array-to-array / array-to-device copies, as clr
hipamd/src/hip_memory.cpp (rocm-6.2.0) has them: hipArrayGetInfo,
hipArrayGetDescriptor, hipArray3DGetDescriptor (ihipArray3DGetDescriptor),
hipMemcpyAtoA/AtoD/DtoA/AtoHAsync/HtoAAsync (ihipMemcpy*Validate: offsets and
counts in bytes, truncated to whole elements, within the array's first row),
hipMemcpy2DArrayToArray (hipMemcpy2DValidateArray).  Stub:
rocpy/_native/stub/hip_array_copy.c.  Each test skips, naming the function,
where the headers do not declare it (5.2's)."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, lib, malloc, ok, stream

pytestmark = hipamd


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


def array3d(width, height, depth, fmt=None, channels=1, flags=0):
    d = ffi.new("HIP_ARRAY3D_DESCRIPTOR *")
    d.Width, d.Height, d.Depth = width, height, depth
    d.Format = lib.HIP_AD_FORMAT_FLOAT if fmt is None else fmt
    d.NumChannels, d.Flags = channels, flags
    a = ffi.new("hipArray_t *")
    ok(lib.hipArray3DCreate(a, d))
    return a[0]


def unknown_array():
    return ffi.cast("hipArray_t", 0x1000)


@needs("hipArray3DGetDescriptor", "hipArrayGetDescriptor")
def test_descriptors_give_back_what_was_created():
    a = array3d(16, 8, 4, lib.HIP_AD_FORMAT_UNSIGNED_INT16, 2)
    d3 = ffi.new("HIP_ARRAY3D_DESCRIPTOR *")
    ok(lib.hipArray3DGetDescriptor(d3, a))
    assert (d3.Width, d3.Height, d3.Depth, d3.Format, d3.NumChannels, d3.Flags) == (
        16, 8, 4, lib.HIP_AD_FORMAT_UNSIGNED_INT16, 2, 0)
    d2 = ffi.new("HIP_ARRAY_DESCRIPTOR *")
    ok(lib.hipArrayGetDescriptor(d2, a))
    assert (d2.Width, d2.Height, d2.Format, d2.NumChannels) == (
        16, 8, lib.HIP_AD_FORMAT_UNSIGNED_INT16, 2)
    ok(lib.hipArrayDestroy(a))


@needs("hipArray3DGetDescriptor", "hipArrayGetDescriptor")
def test_descriptors_bad_input():
    a = array3d(4, 4, 0)
    for fn, t in ((lib.hipArray3DGetDescriptor, "HIP_ARRAY3D_DESCRIPTOR *"),
                  (lib.hipArrayGetDescriptor, "HIP_ARRAY_DESCRIPTOR *")):
        out = ffi.new(t)
        # a null array first (hipErrorInvalidHandle), then a null output
        check(fn(out, ffi.NULL), "hipErrorInvalidHandle")
        check(fn(ffi.NULL, ffi.NULL), "hipErrorInvalidHandle")
        check(fn(ffi.NULL, a), "hipErrorInvalidValue")
        # not in hipArraySet
        check(fn(out, unknown_array()), "hipErrorInvalidHandle")
        assert lib.hipGetLastError() == lib.hipErrorInvalidHandle
    ok(lib.hipArrayDestroy(a))
    check(lib.hipArray3DGetDescriptor(ffi.new("HIP_ARRAY3D_DESCRIPTOR *"), a),
          "hipErrorInvalidHandle")


@needs("hipArrayGetInfo")
def test_array_get_info():
    desc = ffi.new("hipChannelFormatDesc *",
                   lib.hipCreateChannelDesc(32, 32, 32, 32, lib.hipChannelFormatKindFloat))
    a = ffi.new("hipArray_t *")
    ok(lib.hipMalloc3DArray(a, desc, (8, 4, 2), 0))
    got = ffi.new("hipChannelFormatDesc *")
    ext = ffi.new("hipExtent *")
    flags = ffi.new("unsigned int *", 99)
    ok(lib.hipArrayGetInfo(got, ext, flags, a[0]))
    assert (got.x, got.y, got.z, got.w, got.f) == (32, 32, 32, 32, lib.hipChannelFormatKindFloat)
    assert (ext.width, ext.height, ext.depth) == (8, 4, 2)
    assert flags[0] == 0
    # each output may be null; all null is hipSuccess without a lookup
    ext2 = ffi.new("hipExtent *")
    ok(lib.hipArrayGetInfo(ffi.NULL, ext2, ffi.NULL, a[0]))
    assert ext2.width == 8
    ok(lib.hipArrayGetInfo(ffi.NULL, ffi.NULL, ffi.NULL, unknown_array()))
    check(lib.hipArrayGetInfo(got, ext, flags, ffi.NULL), "hipErrorInvalidHandle")
    check(lib.hipArrayGetInfo(got, ffi.NULL, ffi.NULL, unknown_array()), "hipErrorInvalidHandle")
    ok(lib.hipFreeArray(a[0]))


def fill_row(a, values: np.ndarray):
    ok(lib.hipMemcpyHtoA(a, 0, ffi.from_buffer(values), values.nbytes))


def read_row(a, n) -> np.ndarray:
    out = np.zeros(n, dtype=np.float32)
    ok(lib.hipMemcpyAtoH(ffi.from_buffer(out), a, 0, out.nbytes))
    return out


@needs("hipMemcpyAtoA")
def test_memcpy_atoa_copies_within_the_first_row():
    src, dst = array3d(16, 0, 0), array3d(16, 0, 0)
    fill_row(src, np.arange(16, dtype=np.float32))
    fill_row(dst, np.zeros(16, dtype=np.float32))
    ok(lib.hipMemcpyAtoA(dst, 8, src, 4, 16))          # elements 1..4 of src to 2..5 of dst
    assert read_row(dst, 16).tolist() == [0, 0, 1, 2, 3, 4] + [0] * 10
    # offsets and counts are truncated to whole elements (ihipMemcpyAtoAValidate)
    ok(lib.hipMemcpyAtoA(dst, 3, src, 7, 6))           # element 1 to element 0
    assert read_row(dst, 16)[0] == 1
    # an empty region, or one past the row, is hipErrorInvalidValue
    check(lib.hipMemcpyAtoA(dst, 0, src, 0, 3), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoA(dst, 0, src, 4, 64), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoA(dst, 64, src, 0, 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoA(ffi.NULL, 0, src, 0, 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoA(dst, 0, unknown_array(), 0, 4), "hipErrorInvalidValue")
    ok(lib.hipArrayDestroy(src))
    ok(lib.hipArrayDestroy(dst))


@needs("hipMemcpyAtoD", "hipMemcpyDtoA")
def test_memcpy_array_device_round_trip():
    a = array3d(8, 2, 0)
    d = malloc(64)
    host = np.arange(8, dtype=np.float32) + 1
    ok(lib.hipMemcpy(d, ffi.from_buffer(host), 32, lib.hipMemcpyHostToDevice))
    ok(lib.hipMemcpyDtoA(a, 0, d, 32))
    assert read_row(a, 8).tolist() == host.tolist()
    ok(lib.hipMemset(d, 0, 64))
    ok(lib.hipMemcpyAtoD(d, a, 8, 24))                 # elements 2..7
    out = np.zeros(8, dtype=np.float32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 32, lib.hipMemcpyDeviceToHost))
    assert out.tolist() == [3, 4, 5, 6, 7, 8, 0, 0]
    # a pointer the runtime did not allocate (getMemoryObject) or past its allocation
    h = np.zeros(8, dtype=np.float32)
    check(lib.hipMemcpyAtoD(ffi.from_buffer(h), a, 0, 32), "hipErrorInvalidValue")
    check(lib.hipMemcpyDtoA(a, 0, ffi.from_buffer(h), 32), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoD(ffi.cast("char *", d) + 48, a, 0, 32), "hipErrorInvalidValue")
    # a copy past the first row (hipamd validates {count / elem, 1, 1})
    check(lib.hipMemcpyDtoA(a, 0, d, 64), "hipErrorInvalidValue")
    check(lib.hipMemcpyAtoD(d, ffi.NULL, 0, 4), "hipErrorInvalidValue")
    check(lib.hipMemcpyDtoA(ffi.NULL, 0, d, 4), "hipErrorInvalidValue")
    ok(lib.hipFree(d))
    ok(lib.hipArrayDestroy(a))


@needs("hipMemcpyAtoHAsync", "hipMemcpyHtoAAsync")
def test_memcpy_async_host_array():
    a = array3d(8, 0, 0)
    s = stream()
    src = np.arange(8, dtype=np.float32) * 2
    ok(lib.hipMemcpyHtoAAsync(a, 0, ffi.from_buffer(src), 32, s))
    out = np.zeros(8, dtype=np.float32)
    ok(lib.hipMemcpyAtoHAsync(ffi.from_buffer(out), a, 4, 28, s))
    ok(lib.hipStreamSynchronize(s))
    assert out.tolist() == (src[1:].tolist() + [0])
    check(lib.hipMemcpyAtoHAsync(ffi.NULL, a, 0, 4, s), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoAAsync(a, 0, ffi.NULL, 4, s), "hipErrorInvalidValue")
    check(lib.hipMemcpyHtoAAsync(a, 0, ffi.from_buffer(src), 64, s), "hipErrorInvalidValue")
    ok(lib.hipStreamDestroy(s))
    # a destroyed stream (hip::getStream fails)
    check(lib.hipMemcpyAtoHAsync(ffi.from_buffer(out), a, 0, 4, s), "hipErrorInvalidValue")
    ok(lib.hipArrayDestroy(a))


@needs("hipMemcpy2DArrayToArray")
def test_memcpy_2d_array_to_array():
    src, dst = array3d(4, 4, 0), array3d(4, 4, 0)
    grid = np.arange(16, dtype=np.float32).reshape(4, 4)
    ok(lib.hipMemcpy2DToArray(src, 0, 0, ffi.from_buffer(grid), 16, 16, 4,
                              lib.hipMemcpyHostToDevice))
    zero = np.zeros((4, 4), dtype=np.float32)
    ok(lib.hipMemcpy2DToArray(dst, 0, 0, ffi.from_buffer(zero), 16, 16, 4,
                              lib.hipMemcpyHostToDevice))
    # a 2x2 block from (x=1, y=1) of src to (x=2, y=0) of dst; x in bytes
    ok(lib.hipMemcpy2DArrayToArray(dst, 8, 0, src, 4, 1, 8, 2, lib.hipMemcpyDeviceToDevice))
    out = np.zeros((4, 4), dtype=np.float32)
    ok(lib.hipMemcpy2DFromArray(ffi.from_buffer(out), 16, dst, 0, 0, 16, 4,
                                lib.hipMemcpyDeviceToHost))
    assert out[:2, 2:].tolist() == [[5, 6], [9, 10]] and out[2:].sum() == 0
    dd = lib.hipMemcpyDeviceToDevice
    # an empty region is hipSuccess (ihipMemcpyParam2D)
    ok(lib.hipMemcpy2DArrayToArray(dst, 0, 0, src, 0, 0, 0, 4, dd))
    # hipMemcpy2DValidateParams, then hipMemcpy2DValidateArray
    check(lib.hipMemcpy2DArrayToArray(dst, 0, 0, src, 0, 0, 4, 1, ffi.cast("hipMemcpyKind", 7)),
          "hipErrorInvalidMemcpyDirection")
    check(lib.hipMemcpy2DArrayToArray(dst, 0, 0, ffi.NULL, 0, 0, 4, 1, dd),
          "hipErrorInvalidHandle")
    check(lib.hipMemcpy2DArrayToArray(ffi.NULL, 0, 0, src, 0, 0, 4, 1, dd),
          "hipErrorInvalidHandle")
    check(lib.hipMemcpy2DArrayToArray(dst, 0, 0, src, 4, 0, 16, 1, dd), "hipErrorInvalidValue")
    check(lib.hipMemcpy2DArrayToArray(dst, 0, 3, src, 0, 0, 4, 2, dd), "hipErrorInvalidValue")
    ok(lib.hipArrayDestroy(src))
    ok(lib.hipArrayDestroy(dst))
