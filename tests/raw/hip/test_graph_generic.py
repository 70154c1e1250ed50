"""The generic node API over hipGraphNodeParams (clr hipamd/src/hip_graph.cpp
hipGraphAddNode, hipGraphNodeSetParams, hipGraphExecNodeSetParams,
ihipGraphNodeSetParams), hipGraphInstantiateWithParams and
hipGraphDebugDotPrint.  Stub: hip_graph_generic.c, hip_graph_exec_state.c,
hip_graph_dot.c."""
from __future__ import annotations

import re

import pytest

from .helpers import check, event, ffi, hipamd, lib, malloc, ok, stream
from .test_graph_memnode import reset_graph_pool

pytestmark = hipamd
N = ffi.NULL
add_node = pytest.mark.skipif(not hasattr(lib, "hipGraphAddNode"),
                              reason="the headers declare no hipGraphAddNode")
set_params = pytest.mark.skipif(not hasattr(lib, "hipGraphNodeSetParams"),
                                reason="the headers declare no hipGraphNodeSetParams")


def _graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def _params(kind):
    p = ffi.new("hipGraphNodeParams *")
    p.type = getattr(lib, "hipGraphNodeType" + kind)
    return p


def _add(g, p, *deps):
    out = ffi.new("hipGraphNodeType *"), ffi.new("hipGraphNode_t *")
    d = ffi.new("hipGraphNode_t[]", list(deps)) if deps else N
    status = lib.hipGraphAddNode(out[1], g, d, len(deps), p)
    return status, out[1][0]


def _memset(p, dst, value, width):
    p.memset.dst, p.memset.value, p.memset.elementSize = dst, value, 1
    p.memset.width, p.memset.height = width, 1


def _copy1d(p, dst, src, count, kind):
    c = p.memcpy.copyParams
    c.srcPtr.ptr, c.srcPtr.pitch, c.srcPtr.xsize, c.srcPtr.ysize = src, count, count, 1
    c.dstPtr.ptr, c.dstPtr.pitch, c.dstPtr.xsize, c.dstPtr.ysize = dst, count, count, 1
    c.extent.width, c.extent.height, c.extent.depth = count, 1, 1
    c.kind = kind


def _run(g):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, N, N, 0))
    s = stream()
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipStreamDestroy(s))
    return x[0]


@add_node
def test_add_node_dispatches_by_type():
    """memset, memcpy, host, event record and wait, child graph, alloc and free
    nodes made through hipGraphAddNode run as their own kind's would."""
    g = _graph()
    d = malloc(64)
    host = ffi.new("unsigned char[64]")
    p = _params("Memset")
    _memset(p, d, 7, 64)
    st, ms = _add(g, p)
    ok(st)
    p = _params("Memcpy")
    _copy1d(p, host, d, 64, lib.hipMemcpyDeviceToHost)
    st, cp = _add(g, p, ms)
    ok(st)
    calls = []
    cb = ffi.callback("void(void *)", lambda _u: calls.append(1))
    p = _params("Host")
    p.host.fn = cb
    st, hn = _add(g, p, cp)
    ok(st)
    ev = event()
    p = _params("EventRecord")
    p.eventRecord.event = ev
    st, rec = _add(g, p, hn)
    ok(st)
    p = _params("WaitEvent")
    p.eventWait.event = ev
    ok(_add(g, p, rec)[0])
    child = _graph()
    ok(lib.hipGraphAddHostNode(ffi.new("hipGraphNode_t *"), child, N, 0,
                               ffi.new("hipHostNodeParams *", {"fn": cb})))
    p = _params("Graph")
    p.graph.graph = child
    st, cn = _add(g, p)
    ok(st)
    types = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(cn, types))
    assert types[0] == lib.hipGraphNodeTypeGraph
    x = _run(g)
    assert bytes(ffi.buffer(host)) == b"\x07" * 64
    assert len(calls) == 2
    ok(lib.hipEventQuery(ev))
    ok(lib.hipGraphExecDestroy(x))
    for h in (g, child):
        ok(lib.hipGraphDestroy(h))
    ok(lib.hipEventDestroy(ev))
    ok(lib.hipFree(d))


@add_node
def test_add_node_memory_nodes():
    g = _graph()
    p = _params("MemAlloc")
    p.alloc.bytesize = 256
    p.alloc.poolProps.allocType = lib.hipMemAllocationTypePinned
    p.alloc.poolProps.location.type = lib.hipMemLocationTypeDevice
    st, alloc = _add(g, p)
    ok(st)
    dptr = p.alloc.dptr
    assert dptr != N
    got = ffi.new("hipMemAllocNodeParams *")
    ok(lib.hipGraphMemAllocNodeGetParams(alloc, got))
    assert got.dptr == dptr and got.bytesize == 256
    f = _params("MemFree")
    f.free.dptr = dptr
    st, fn = _add(g, f, alloc)
    ok(st)
    out = ffi.new("void **")
    ok(lib.hipGraphMemFreeNodeGetParams(fn, out))
    assert out[0] == dptr
    # a refused alloc leaves the caller's dptr alone (checked on a copy)
    bad = _params("MemAlloc")
    bad.alloc.bytesize = 0
    bad.alloc.dptr = ffi.cast("void *", 8)
    check(_add(g, bad)[0], "hipErrorInvalidValue")
    assert bad.alloc.dptr == ffi.cast("void *", 8)
    f.free.dptr = N
    check(_add(g, f)[0], "hipErrorInvalidValue")
    f.free.dptr = ffi.new("int *")
    check(_add(g, f)[0], "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(_run(g)))
    ok(lib.hipGraphDestroy(g))
    reset_graph_pool()


@add_node
def test_add_node_bad_input():
    g = _graph()
    p = _params("Empty")
    out = ffi.new("hipGraphNode_t *")
    check(lib.hipGraphAddNode(N, g, N, 0, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddNode(out, N, N, 0, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddNode(out, g, N, 1, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddNode(out, g, N, 0, N), "hipErrorInvalidValue")
    # hipamd's switch has no case for empty nodes, nor for unknown types
    check(_add(g, p)[0], "hipErrorInvalidValue")
    p.type = 99
    check(_add(g, p)[0], "hipErrorInvalidValue")
    for kind in ("ExtSemaphoreSignal", "ExtSemaphoreWait"):
        check(_add(g, _params(kind))[0], "hipErrorNotSupported")
    for kind in ("Host", "Graph", "WaitEvent", "EventRecord"):   # their null member
        check(_add(g, _params(kind))[0], "hipErrorInvalidValue")
    check(_add(g, _params("Kernel"))[0], "hipErrorInvalidValue")  # func NULL
    check(_add(g, _params("Memset"))[0], "hipErrorInvalidValue")  # height 0
    count = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, N, count))
    assert count[0] == 0
    ok(lib.hipGraphDestroy(g))


@set_params
def test_node_set_params_and_exec_node_set_params():
    """hipGraphNodeSetParams changes the graph's node, hipGraphExecNodeSetParams
    the executable graph's copy only."""
    g = _graph()
    d = malloc(32)
    host = ffi.new("unsigned char[32]")
    ms = ffi.new("hipMemsetParams *", {"dst": d, "value": 1, "elementSize": 1, "width": 32,
                                       "height": 1})
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemsetNode(node, g, N, 0, ms))
    cp = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(cp, g, node, 1, host, d, 32, lib.hipMemcpyDeviceToHost))
    p = _params("Memset")
    _memset(p, d, 2, 32)
    ok(lib.hipGraphNodeSetParams(node[0], p))
    got = ffi.new("hipMemsetParams *")
    ok(lib.hipGraphMemsetNodeGetParams(node[0], got))
    assert got.value == 2
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, N, N, 0))
    _memset(p, d, 3, 32)
    ok(lib.hipGraphExecNodeSetParams(x[0], node[0], p))
    ok(lib.hipGraphMemsetNodeGetParams(node[0], got))
    assert got.value == 2                     # the graph's own node is unchanged
    s = stream()
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    assert bytes(ffi.buffer(host)) == b"\x03" * 32
    # types hipamd refuses; a node of another type than params names
    for kind in ("MemAlloc", "MemFree", "ExtSemaphoreSignal", "ExtSemaphoreWait"):
        check(lib.hipGraphNodeSetParams(node[0], _params(kind)), "hipErrorNotSupported")
        check(lib.hipGraphExecNodeSetParams(x[0], node[0], _params(kind)), "hipErrorNotSupported")
    check(lib.hipGraphNodeSetParams(node[0], _params("Empty")), "hipErrorInvalidValue")
    host_p = _params("Host")
    host_p.host.fn = ffi.callback("void(void *)", lambda _u: None)
    check(lib.hipGraphNodeSetParams(node[0], host_p), "hipErrorInvalidValue")
    # null and stale arguments
    check(lib.hipGraphNodeSetParams(N, p), "hipErrorInvalidValue")
    check(lib.hipGraphNodeSetParams(node[0], N), "hipErrorInvalidValue")
    check(lib.hipGraphExecNodeSetParams(N, node[0], p), "hipErrorInvalidValue")
    check(lib.hipGraphExecNodeSetParams(x[0], N, p), "hipErrorInvalidValue")
    check(lib.hipGraphExecNodeSetParams(x[0], node[0], N), "hipErrorInvalidValue")
    late = ffi.new("hipGraphNode_t *")          # added after the instantiation
    ok(lib.hipGraphAddMemsetNode(late, g, N, 0, ms))
    check(lib.hipGraphExecNodeSetParams(x[0], late[0], p), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x[0]))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


@set_params
def test_child_graph_set_params():
    """ChildGraphNode::SetParams: the new graph's node parameters, position by
    position, onto the node's own copy of its child."""
    d = malloc(16)
    host = ffi.new("unsigned char[16]")

    def child(value):
        c = _graph()
        ms = ffi.new("hipMemsetParams *", {"dst": d, "value": value, "elementSize": 1,
                                           "width": 16, "height": 1})
        ok(lib.hipGraphAddMemsetNode(ffi.new("hipGraphNode_t *"), c, N, 0, ms))
        return c
    g = _graph()
    first, second = child(4), child(5)
    cn = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddChildGraphNode(cn, g, N, 0, first))
    ok(lib.hipGraphAddMemcpyNode1D(ffi.new("hipGraphNode_t *"), g, cn, 1, host, d, 16,
                                   lib.hipMemcpyDeviceToHost))
    p = _params("Graph")
    p.graph.graph = second
    ok(lib.hipGraphNodeSetParams(cn[0], p))
    ok(lib.hipGraphExecDestroy(_run(g)))
    assert bytes(ffi.buffer(host)) == b"\x05" * 16
    other = _graph()                          # another shape
    ok(lib.hipGraphAddEmptyNode(ffi.new("hipGraphNode_t *"), other, N, 0))
    p.graph.graph = other
    check(lib.hipGraphNodeSetParams(cn[0], p), "hipErrorInvalidValue")
    for h in (g, first, second, other):
        ok(lib.hipGraphDestroy(h))
    ok(lib.hipFree(d))


@pytest.mark.skipif(not hasattr(lib, "hipGraphInstantiateWithParams"),
                    reason="the headers declare no hipGraphInstantiateWithParams")
def test_instantiate_with_params():
    g = _graph()
    ok(lib.hipGraphAddEmptyNode(ffi.new("hipGraphNode_t *"), g, N, 0))
    x = ffi.new("hipGraphExec_t *")
    ip = ffi.new("hipGraphInstantiateParams *")
    ip.errNode_out = ffi.cast("hipGraphNode_t", 1)
    s = stream()
    for flags in (0, lib.hipGraphInstantiateFlagAutoFreeOnLaunch, lib.hipGraphInstantiateFlagUpload,
                  lib.hipGraphInstantiateFlagDeviceLaunch, lib.hipGraphInstantiateFlagUseNodePriority):
        ip.flags, ip.uploadStream, ip.result_out = flags, s, lib.hipGraphInstantiateError
        ok(lib.hipGraphInstantiateWithParams(x, g, ip))
        assert ip.result_out == lib.hipGraphInstantiateSuccess and ip.errNode_out == N
        got = ffi.new("unsigned long long *")
        if hasattr(lib, "hipGraphExecGetFlags"):          # 6.2's headers lack it
            ok(lib.hipGraphExecGetFlags(x[0], got))
            assert got[0] == flags
        ok(lib.hipGraphLaunch(x[0], s))
        ok(lib.hipStreamSynchronize(s))
        ok(lib.hipGraphExecDestroy(x[0]))
    # two flags at once, an unknown flag: refused, result_out says so
    ip.flags = lib.hipGraphInstantiateFlagAutoFreeOnLaunch | lib.hipGraphInstantiateFlagUpload
    ip.result_out = lib.hipGraphInstantiateSuccess
    check(lib.hipGraphInstantiateWithParams(x, g, ip), "hipErrorInvalidValue")
    assert ip.result_out == lib.hipGraphInstantiateError
    check(lib.hipGraphInstantiateWithParams(N, g, ip), "hipErrorInvalidValue")
    check(lib.hipGraphInstantiateWithParams(x, N, ip), "hipErrorInvalidValue")
    check(lib.hipGraphInstantiateWithParams(x, g, N), "hipErrorInvalidValue")
    # upload to a destroyed stream: the executable graph is made, the upload fails
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    ip.flags, ip.uploadStream = lib.hipGraphInstantiateFlagUpload, dead
    check(lib.hipGraphInstantiateWithParams(x, g, ip), "hipErrorContextIsDestroyed")
    assert ip.result_out == lib.hipGraphInstantiateSuccess
    ok(lib.hipGraphExecDestroy(x[0]))
    # a failed instantiation (a second one of a graph with memory nodes)
    if hasattr(lib, "hipGraphAddMemAllocNode"):
        m = _graph()
        ap = ffi.new("hipMemAllocNodeParams *")
        ap.bytesize = 64
        ap.poolProps.allocType = lib.hipMemAllocationTypePinned
        ap.poolProps.location.type = lib.hipMemLocationTypeDevice
        ok(lib.hipGraphAddMemAllocNode(ffi.new("hipGraphNode_t *"), m, N, 0, ap))
        ip.flags = 0
        ok(lib.hipGraphInstantiateWithParams(x, m, ip))
        first = x[0]
        check(lib.hipGraphInstantiateWithParams(x, m, ip), "hipErrorNotSupported")
        assert ip.result_out == lib.hipGraphInstantiateError
        ok(lib.hipGraphExecDestroy(first))
        ok(lib.hipGraphDestroy(m))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


_NODE = re.compile(r'^"graph_(\d+)_node_(\d+)"\[style="(\w+)"shape="(\w+)"label="([^"]*)"\];$', re.M)
_EDGE = re.compile(r'^"graph_(\d+)_node_(\d+)" -> "graph_(\d+)_node_(\d+)"$', re.M)


@pytest.mark.skipif(not hasattr(lib, "hipGraphDebugDotPrint"),
                    reason="the headers declare no hipGraphDebugDotPrint")
def test_debug_dot_print(tmp_path):
    """The DOT file hipamd writes: a cluster per graph (children after their
    parent), a node per entry with its style, shape and label, an edge per
    dependency; memset and memcpy labels carry their parameters."""
    g = _graph()
    d = malloc(32)
    host = ffi.new("unsigned char[32]")
    ms = ffi.new("hipMemsetParams *", {"dst": d, "value": 9, "elementSize": 1, "width": 32,
                                       "height": 1})
    a = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemsetNode(a, g, N, 0, ms))
    b = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(b, g, a, 1, host, d, 32, lib.hipMemcpyDeviceToHost))
    child = _graph()
    ok(lib.hipGraphAddEmptyNode(ffi.new("hipGraphNode_t *"), child, N, 0))
    ok(lib.hipGraphAddChildGraphNode(ffi.new("hipGraphNode_t *"), g, b, 1, child))
    path = tmp_path / "g.dot"
    ok(lib.hipGraphDebugDotPrint(g, str(path).encode(), 0))
    text = path.read_text()
    assert text.startswith("digraph dot {\nsubgraph cluster_0 {\nlabel=\"graph_0\"graph[style=\"dashed\"];\n")
    assert text.endswith("}\n}\n")
    assert 'subgraph cluster_1 {\nlabel="graph_1"' in text
    nodes = {(int(m[1]), int(m[2])): m.groups()[2:] for m in _NODE.finditer(text)}
    assert nodes == {
        (0, 0): ("solid", "invtrapezium", "0\nMEMSET\n(9,32)"),
        (0, 1): ("solid", "trapezium", "1\nMEMCPY\n(DtoH)"),
        (0, 2): ("solid", "rectangle", "2\ngraph_1"),
        (1, 0): ("solid", "rectangle", "0\nEMPTY"),
    }
    edges = {tuple(int(x) for x in m.groups()) for m in _EDGE.finditer(text)}
    assert edges == {(0, 0, 0, 1), (0, 1, 0, 2)}
    # the parameter flags: hipamd's record labels
    ok(lib.hipGraphDebugDotPrint(g, str(path).encode(), lib.hipGraphDebugDotFlagsMemsetNodeParams))
    text = path.read_text()
    assert 'shape="record"label="{\nMEMSET\n| {{ID | node handle | dptr | pitch | value' in text
    assert "| 9 | 1 | 32 | 1 | 1}}}" in text
    ok(lib.hipGraphDebugDotPrint(g, str(path).encode(), lib.hipGraphDebugDotFlagsVerbose))
    assert "{kind | DtoH}" in path.read_text()
    # bad input
    check(lib.hipGraphDebugDotPrint(N, str(path).encode(), 0), "hipErrorInvalidValue")
    check(lib.hipGraphDebugDotPrint(g, N, 0), "hipErrorInvalidValue")
    check(lib.hipGraphDebugDotPrint(g, str(tmp_path / "no" / "such.dot").encode(), 0),
          "hipErrorOperatingSystem")
    for h in (g, child):
        ok(lib.hipGraphDestroy(h))
    ok(lib.hipFree(d))
