"""hipMemsetD2D8/16/32(+Async) (7.1+ headers; hipamd hip_memory.cpp
hipMemsetD2D* -> ihipMemset3D with the element size; stub:
rocpy/_native/stub/hip_memset_d2d.c).  ``width`` is the row's size in bytes,
as hipamd validates and fills it (hip-tests hipMemsetD2D32.cc passes
numW * sizeof(int)); CUDA's cuMemsetD2D* counts elements."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, lib, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipMemsetD2D8"),
                                         reason="hipMemsetD2D*: 7.1+ headers")]

FORMS = [("hipMemsetD2D8", 1, np.uint8, 0xA5), ("hipMemsetD2D16", 2, np.uint16, 0xBEEF),
         ("hipMemsetD2D32", 4, np.uint32, 0xDEADBEEF)]


def pitched(width_bytes: int, height: int):
    p, pitch = ffi.new("void **"), ffi.new("size_t *")
    ok(lib.hipMallocPitch(p, pitch, width_bytes, height))
    return p[0], pitch[0]


def read(ptr, pitch: int, height: int, dtype):
    out = np.zeros(pitch * height, np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), ptr, out.nbytes, lib.hipMemcpyDeviceToHost))
    return out.reshape(height, pitch)


def call(fname, asynchronous, *args, s=ffi.NULL):
    fn = getattr(lib, fname + ("Async" if asynchronous else ""))
    return fn(*args, s) if asynchronous else fn(*args)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("fname,elem,dtype,value", FORMS, ids=[f[0] for f in FORMS])
def test_fills_width_bytes_of_each_row_and_nothing_past_it(fname, elem, dtype, value,
                                                            asynchronous):
    cols, rows = 5, 3                      # elements per row, rows
    ptr, pitch = pitched(cols * elem + 8, rows)
    ok(lib.hipMemset(ptr, 0x11, pitch * rows))
    s = stream() if asynchronous else ffi.NULL
    ok(call(fname, asynchronous, ptr, pitch, value, cols * elem, rows, s=s))
    if asynchronous:
        ok(lib.hipStreamSynchronize(s))
        ok(lib.hipStreamDestroy(s))
    got = read(ptr, pitch, rows, dtype)
    for r in range(rows):
        assert (got[r, :cols * elem].view(dtype) == dtype(value)).all()
        assert (got[r, cols * elem:] == 0x11).all()          # past the width: untouched
    ok(lib.hipFree(ptr))


@pytest.mark.parametrize("fname,elem,dtype,value", FORMS, ids=[f[0] for f in FORMS])
def test_bad_arguments(fname, elem, dtype, value):
    ptr, pitch = pitched(64 * elem, 8)
    # null destination, host memory: ihipMemset3D_validate finds no memory object
    check(call(fname, False, ffi.NULL, pitch, value, 64 * elem, 8), "hipErrorInvalidValue")
    host = ffi.new("char[]", pitch * 8)
    check(call(fname, False, host, pitch, value, 64 * elem, 8), "hipErrorInvalidValue")
    # a pitch below the row (BufferRect::create fails); 1 as hip-tests' Invalid Pitch
    check(call(fname, False, ptr, 1, value, 64 * elem, 8), "hipErrorInvalidValue")
    # past the allocation; heights and widths of -10 (size_t) overflow the extent
    check(call(fname, False, ptr, pitch, value, 64 * elem, 9), "hipErrorInvalidValue")
    check(call(fname, False, ptr, pitch, value, 64 * elem, (1 << 64) - 10), "hipErrorInvalidValue")
    check(call(fname, False, ptr, pitch, value, (1 << 64) - 10, 8), "hipErrorInvalidValue")
    # nothing to fill: success without touching the (null) destination
    ok(call(fname, False, ffi.NULL, pitch, value, 0, 8))
    ok(call(fname, False, ffi.NULL, pitch, value, 64 * elem, 0))
    if elem > 1:                           # stub's choice: a partial element
        check(call(fname, False, ptr, pitch, value, 64 * elem - 1, 8), "hipErrorInvalidValue")
    # a bad stream (the async form)
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    check(call(fname, True, ptr, pitch, value, 64 * elem, 8, s=dead),
          "hipErrorContextIsDestroyed")                            # as hipMemset2DAsync
    ok(lib.hipFree(ptr))


def end_capture(s):
    g = ffi.new("hipGraph_t *")
    status = lib.hipStreamEndCapture(s, g)
    if g[0] != ffi.NULL:
        ok(lib.hipGraphDestroy(g[0]))
    return status


def test_sync_form_refused_while_capturing():
    ptr, pitch = pitched(16, 2)
    s = stream()
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    try:
        # hipMemset2D_common's CHECK_STREAM_CAPTURING (as hipMemset: test_capture.py)
        check(lib.hipMemsetD2D32(ptr, pitch, 7, 16, 2), "hipErrorStreamCaptureImplicit")
    finally:
        check(end_capture(s), "hipErrorStreamCaptureInvalidated")
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(ptr))


def test_async_form_is_captured_as_a_memset_node():
    ptr, pitch = pitched(16, 2)
    s = stream()
    g = ffi.new("hipGraph_t *")
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    try:
        ok(lib.hipMemsetD2D32Async(ptr, pitch, 7, 16, 2, s))
    finally:
        ok(lib.hipStreamEndCapture(s, g))
    t = ffi.new("hipGraphNodeType *")
    nodes, n = ffi.new("hipGraphNode_t[4]"), ffi.new("size_t *", 4)
    ok(lib.hipGraphGetNodes(g[0], nodes, n))
    assert n[0] == 1
    ok(lib.hipGraphNodeGetType(nodes[0], t))
    assert t[0] == lib.hipGraphNodeTypeMemset
    ex = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(ex, g[0], ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(ex[0], s))
    ok(lib.hipStreamSynchronize(s))
    got = read(ptr, pitch, 2, np.uint32)
    assert (got[:, :16].copy().view(np.uint32) == 7).all()
    ok(lib.hipGraphExecDestroy(ex[0]))
    ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(ptr))
