"""hipStreamBeginCaptureToGraph: capture into an existing graph, after the
given nodes (hipamd hip_graph.cpp; stub: hip_capture.c).  Declared by the
headers of 6.2 on: skipped where absent.  The nodes already in the graph,
and nodes added to it by hand during the capture, never make the end of the
capture hipErrorStreamCaptureUnjoined (hipamd's manual nodes)."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, lib, malloc, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipStreamBeginCaptureToGraph"),
                                         reason="hipStreamBeginCaptureToGraph: headers of 6.2 on")]

GLOBAL = lib.hipStreamCaptureModeGlobal
NODE = "hipGraphNode_t *"


def graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def empty(g, deps=()):
    n = ffi.new(NODE)
    arr = ffi.new("hipGraphNode_t[]", list(deps)) if deps else ffi.NULL
    ok(lib.hipGraphAddEmptyNode(n, g, arr, len(deps)))
    return n[0]


def begin(s, g, deps=(), mode=GLOBAL):
    arr = ffi.new("hipGraphNode_t[]", list(deps)) if deps else ffi.NULL
    return lib.hipStreamBeginCaptureToGraph(s, g, arr, ffi.NULL, len(deps), mode)


def end(s, expected="hipSuccess"):
    out = ffi.new("hipGraph_t *")
    check(lib.hipStreamEndCapture(s, out), expected)
    return out[0]


def deps_of(node):
    n = ffi.new("size_t *")
    ok(lib.hipGraphNodeGetDependencies(node, ffi.NULL, n))
    arr = ffi.new("hipGraphNode_t[]", max(n[0], 1))
    ok(lib.hipGraphNodeGetDependencies(node, arr, n))
    return [arr[i] for i in range(n[0])]


def nodes_of(g):
    n = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, ffi.NULL, n))
    arr = ffi.new("hipGraphNode_t[]", max(n[0], 1))
    ok(lib.hipGraphGetNodes(g, arr, n))
    return [arr[i] for i in range(n[0])]


def test_captures_after_the_given_nodes_and_runs():
    g = graph()
    root = empty(g)
    d = malloc(64)
    s = stream()
    ok(begin(s, g, [root]))
    info_g = ffi.new("hipGraph_t *")
    st = ffi.new("hipStreamCaptureStatus *")
    ok(lib.hipStreamGetCaptureInfo_v2(s, st, ffi.NULL, info_g, ffi.NULL, ffi.NULL))
    assert st[0] == lib.hipStreamCaptureStatusActive and info_g[0] == g
    ok(lib.hipMemsetAsync(d, 0x33, 64, s))
    out = end(s)
    assert out == g                                   # the caller's graph comes back
    nodes = nodes_of(g)
    assert len(nodes) == 2
    captured = [n for n in nodes if n != root][0]
    assert deps_of(captured) == [root]
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    got = np.zeros(64, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(got), d, 64, lib.hipMemcpyDeviceToHost))
    assert (got == 0x33).all()
    ok(lib.hipGraphExecDestroy(x[0]))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


def test_nodes_not_captured_are_never_unjoined():
    g = graph()
    lone = empty(g)                                   # before the capture, no edge to it
    d = malloc(64)
    s = stream()
    ok(begin(s, g))
    ok(lib.hipMemsetAsync(d, 1, 64, s))
    by_hand = empty(g)                                # added by hand during the capture
    assert end(s) == g
    assert set(map(int, map(lambda n: ffi.cast("uintptr_t", n), nodes_of(g)))) >= {
        int(ffi.cast("uintptr_t", lone)), int(ffi.cast("uintptr_t", by_hand))}
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


def test_by_hand_nodes_in_a_plain_capture_are_not_unjoined():
    d = malloc(64)
    s = stream()
    ok(lib.hipStreamBeginCapture(s, GLOBAL))
    ok(lib.hipMemsetAsync(d, 1, 64, s))
    cg = ffi.new("hipGraph_t *")
    st = ffi.new("hipStreamCaptureStatus *")
    ok(lib.hipStreamGetCaptureInfo_v2(s, st, ffi.NULL, cg, ffi.NULL, ffi.NULL))
    empty(cg[0])                                      # a leaf no capture depends on
    g = end(s)
    assert len(nodes_of(g)) == 2
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


def test_arguments():
    g = graph()
    root = empty(g)
    s = stream()
    arr = ffi.new("hipGraphNode_t[]", [root])
    edge = ffi.new("hipGraphEdgeData *")
    # hipamd's own checks return without HIP_RETURN: the last error stays
    check(lib.hipStreamBeginCaptureToGraph(s, g, arr, edge, 1, GLOBAL), "hipErrorNotSupported")
    check(lib.hipGetLastError(), "hipSuccess")
    check(lib.hipStreamBeginCaptureToGraph(s, ffi.NULL, arr, ffi.NULL, 1, GLOBAL),
          "hipErrorInvalidValue")
    check(lib.hipStreamBeginCaptureToGraph(s, g, ffi.NULL, ffi.NULL, 1, GLOBAL),
          "hipErrorInvalidValue")
    check(lib.hipStreamBeginCaptureToGraph(s, g, arr, ffi.NULL, 0, GLOBAL), "hipErrorInvalidValue")
    check(lib.hipGetLastError(), "hipSuccess")
    # hipStreamBeginCapture's checks
    check(begin(ffi.NULL, g), "hipErrorStreamCaptureUnsupported")
    check(begin(s, g, mode=7), "hipErrorInvalidValue")
    ok(begin(s, g))
    check(begin(s, g), "hipErrorIllegalState")
    assert end(s) == g
    ok(lib.hipGraphDestroy(g))
    check(begin(s, g), "hipErrorInvalidValue")        # no graph any more
    ok(lib.hipStreamDestroy(s))


def test_invalidated_capture_frees_the_callers_graph():
    g = graph()
    s = stream()
    ok(begin(s, g))
    p = ffi.new("void **")
    check(lib.hipMalloc(p, 64), "hipErrorStreamCaptureUnsupported")   # unsafe: invalidates
    assert end(s, "hipErrorStreamCaptureInvalidated") == ffi.NULL
    # hipamd deletes the capture graph, the caller's included
    check(lib.hipGraphDestroy(g), "hipErrorIllegalState")
    ok(lib.hipStreamDestroy(s))


def test_stream_destroyed_while_capturing_leaves_the_graph():
    g = graph()
    s = stream()
    ok(begin(s, g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipGraphDestroy(g))
