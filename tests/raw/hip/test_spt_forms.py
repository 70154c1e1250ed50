"""The _spt forms the headers of 5.7 on add (clr: the plain form after
PER_THREAD_DEFAULT_STREAM, a null stream meaning the thread's default
stream; stub hip_spt.c).  Each test skips, naming the function, where the
headers do not declare it (5.2's)."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, lib, malloc, ok


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


@needs("hipMemsetAsync_spt", "hipEventRecord_spt", "hipStreamAddCallback_spt")
def test_memset_event_and_callback_on_the_per_thread_stream():
    d = malloc(256)
    ok(lib.hipMemsetAsync_spt(d, 7, 256, ffi.NULL))
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(e))
    ok(lib.hipEventRecord_spt(e[0], ffi.NULL))
    seen = []

    @ffi.callback("void(hipStream_t, hipError_t, void *)")
    def cb(stream, status, data):
        seen.append((int(ffi.cast("uintptr_t", stream)), status))
    ok(lib.hipStreamAddCallback_spt(ffi.NULL, cb, ffi.NULL, 0))
    ok(lib.hipStreamSynchronize(lib.hipStreamPerThread))
    ok(lib.hipEventQuery(e[0]))
    assert seen and seen[0][1] == 0
    out = np.zeros(256, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 256, lib.hipMemcpyDeviceToHost))
    assert (out == 7).all()
    check(lib.hipStreamAddCallback_spt(ffi.NULL, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    ok(lib.hipEventDestroy(e[0]))
    ok(lib.hipFree(d))


@needs("hipStreamBeginCapture_spt", "hipStreamIsCapturing_spt", "hipStreamEndCapture_spt")
def test_capture_of_a_created_stream_through_the_spt_forms():
    s = ffi.new("hipStream_t *")
    ok(lib.hipStreamCreate(s))
    status = ffi.new("hipStreamCaptureStatus *")
    ok(lib.hipStreamBeginCapture_spt(s[0], lib.hipStreamCaptureModeGlobal))
    ok(lib.hipStreamIsCapturing_spt(s[0], status))
    assert status[0] == lib.hipStreamCaptureStatusActive
    graph = ffi.new("hipGraph_t *")
    ok(lib.hipStreamEndCapture_spt(s[0], graph))
    ok(lib.hipStreamIsCapturing_spt(s[0], status))
    assert status[0] == lib.hipStreamCaptureStatusNone
    ok(lib.hipGraphDestroy(graph[0]))
    ok(lib.hipStreamDestroy(s[0]))


@needs("hipStreamGetCaptureInfo_v2_spt")
def test_capture_info_v2_of_the_per_thread_stream():
    from .helpers import PER_THREAD
    status = ffi.new("hipStreamCaptureStatus *", 99)
    ident = ffi.new("unsigned long long *")
    graph = ffi.new("hipGraph_t *")
    deps = ffi.new("hipGraphNode_t **")
    n = ffi.new("size_t *", 5)
    ok(lib.hipStreamGetCaptureInfo_v2_spt(ffi.NULL, status, ident, graph, deps, n))
    assert status[0] == lib.hipStreamCaptureStatusNone
    # a null stream here means the thread's stream, which captures
    ok(lib.hipStreamBeginCapture(PER_THREAD, lib.hipStreamCaptureModeThreadLocal))
    ok(lib.hipStreamGetCaptureInfo_v2_spt(ffi.NULL, status, ident, graph, deps, n))
    assert status[0] == lib.hipStreamCaptureStatusActive and n[0] == 0
    out = ffi.new("hipGraph_t *")
    ok(lib.hipStreamEndCapture(PER_THREAD, out))
    ok(lib.hipGraphDestroy(out[0]))
    check(lib.hipStreamGetCaptureInfo_v2_spt(ffi.NULL, ffi.NULL, ident, graph, deps, n),
          "hipErrorInvalidValue")
