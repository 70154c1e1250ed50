"""Graphs built explicitly (hipamd hip_graph.cpp): nodes with dependencies,
instantiation and launch in a topological order."""
from __future__ import annotations

import numpy as np

from .helpers import (requires, HostLog, check, event, ffi, hipamd, lib, malloc, ok, stream, stub_only)

pytestmark = requires("hipGraphCreate")


def graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def deps(*nodes):
    return ffi.new("hipGraphNode_t[]", list(nodes)) if nodes else ffi.NULL


def host_node(g, fn, *after):
    n = ffi.new("hipGraphNode_t *")
    p = ffi.new("hipHostNodeParams *")
    p.fn = fn
    ok(lib.hipGraphAddHostNode(n, g, deps(*after), len(after), p))
    return n[0]


def memset_node(g, dst, value, width, *after, elem=4):
    n = ffi.new("hipGraphNode_t *")
    p = ffi.new("hipMemsetParams *")
    p.dst, p.value, p.elementSize, p.width, p.height = dst, value, elem, width, 1
    status = lib.hipGraphAddMemsetNode(n, g, deps(*after), len(after), p)
    return status, n[0]


def instantiate_and_launch(g, s):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(x[0], s))
    return x[0]


# platform-independent
def test_create_and_destroy():
    g = graph()
    ok(lib.hipGraphDestroy(g))
    check(lib.hipGraphCreate(ffi.NULL, 0), "hipErrorInvalidValue")
    gp = ffi.new("hipGraph_t *")
    check(lib.hipGraphCreate(gp, 1), "hipErrorInvalidValue")
    check(lib.hipGraphDestroy(ffi.NULL), "hipErrorInvalidValue")


# hipamd-specific: a destroyed graph
@hipamd
def test_destroyed_graph():
    g = graph()
    ok(lib.hipGraphDestroy(g))
    check(lib.hipGraphDestroy(g), "hipErrorIllegalState")
    n = ffi.new("hipGraphNode_t *")
    check(lib.hipGraphAddEmptyNode(n, g, ffi.NULL, 0), "hipErrorInvalidValue")


# platform-independent: a diamond runs its branches after its root and
# before its sink, on every launch
def test_diamond_of_host_nodes():
    g = graph()
    log = HostLog()
    a = host_node(g, log.host_fn("A"))
    b = host_node(g, log.host_fn("B", delay=0.02), a)
    c = host_node(g, log.host_fn("C"), a)
    d = host_node(g, log.host_fn("D"), b, c)
    count = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, ffi.NULL, count))
    assert count[0] == 4
    ok(lib.hipGraphGetRootNodes(g, ffi.NULL, count))
    assert count[0] == 1
    roots = ffi.new("hipGraphNode_t[3]")
    count[0] = 3
    ok(lib.hipGraphGetRootNodes(g, roots, count))
    assert count[0] == 1 and roots[0] == a and roots[1] == ffi.NULL
    ok(lib.hipGraphNodeGetDependencies(d, ffi.NULL, count))
    assert count[0] == 2
    ok(lib.hipGraphNodeGetDependentNodes(a, ffi.NULL, count))
    assert count[0] == 2
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(d, t))
    assert t[0] == lib.hipGraphNodeTypeHost
    s = stream()
    x = instantiate_and_launch(g, s)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert len(log.entries) == 8
    for run in (log.entries[:4], log.entries[4:]):
        assert run[0] == "A" and run[3] == "D" and sorted(run[1:3]) == ["B", "C"]
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


# platform-independent: memset, 1D and 3D copies, in dependency order
def test_memory_nodes():
    n = 256
    a, b = malloc(n * 4), malloc(n * 4)
    out = np.zeros(n, dtype=np.uint32)
    g = graph()
    status, set_a = memset_node(g, a, 7, n)
    ok(status)
    cpy = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(cpy, g, deps(set_a), 1, b, a, n * 4,
                                   lib.hipMemcpyDeviceToDevice))
    p = ffi.new("hipMemcpy3DParms *")
    p.srcPtr.ptr, p.srcPtr.pitch, p.srcPtr.xsize, p.srcPtr.ysize = b, n * 4, n * 4, 1
    p.dstPtr.ptr, p.dstPtr.pitch = ffi.from_buffer(out), n * 4
    p.dstPtr.xsize, p.dstPtr.ysize = n * 4, 1
    p.extent.width, p.extent.height, p.extent.depth = n * 4, 1, 1
    p.kind = lib.hipMemcpyDeviceToHost
    back = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode(back, g, deps(cpy[0]), 1, p))
    empty = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(empty, g, deps(back[0]), 1))
    s = stream()
    x = instantiate_and_launch(g, s)
    ok(lib.hipStreamSynchronize(s))
    assert (out == 7).all()
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(a))
    ok(lib.hipFree(b))


# hipamd-specific: a 1D copy node is hipGraphNodeTypeMemcpy1D where the headers have
# that type (hipamd 5.2's hipGraphMemcpyNode1D), hipGraphNodeTypeMemcpy since 5.6
# removed it; a 3D one is hipGraphNodeTypeMemcpy (test_memory_nodes runs both kinds)
@hipamd
def test_copy_node_types():
    a, b = malloc(64), malloc(64)
    g = graph()
    one = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(one, g, ffi.NULL, 0, b, a, 64, lib.hipMemcpyDeviceToDevice))
    p = ffi.new("hipMemcpy3DParms *")
    p.srcPtr.ptr, p.srcPtr.pitch, p.srcPtr.xsize, p.srcPtr.ysize = a, 64, 64, 1
    p.dstPtr.ptr, p.dstPtr.pitch, p.dstPtr.xsize, p.dstPtr.ysize = b, 64, 64, 1
    p.extent.width, p.extent.height, p.extent.depth = 64, 1, 1
    p.kind = lib.hipMemcpyDeviceToDevice
    three = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode(three, g, ffi.NULL, 0, p))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(one[0], t))
    assert t[0] == getattr(lib, "hipGraphNodeTypeMemcpy1D", lib.hipGraphNodeTypeMemcpy)
    ok(lib.hipGraphNodeGetType(three[0], t))
    assert t[0] == lib.hipGraphNodeTypeMemcpy
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(a))
    ok(lib.hipFree(b))


# platform-independent: event record and wait nodes connect graphs and streams
def test_event_nodes():
    g = graph()
    e_in, e_out = event(), event()
    log = HostLog()
    wait = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEventWaitNode(wait, g, ffi.NULL, 0, e_in))
    work = host_node(g, log.host_fn("graph"), wait[0])
    rec = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEventRecordNode(rec, g, deps(work), 1, e_out))
    other, s = stream(lib.hipStreamNonBlocking), stream(lib.hipStreamNonBlocking)
    log.enqueue(other, "before", delay=0.1)
    ok(lib.hipEventRecord(e_in, other))
    x = instantiate_and_launch(g, s)
    ok(lib.hipEventSynchronize(e_out))
    assert log.entries == ["before", "graph"]
    ev = ffi.new("hipEvent_t *")
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(rec[0], t))
    assert t[0] == lib.hipGraphNodeTypeEventRecord
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    for e in (e_in, e_out):
        ok(lib.hipEventDestroy(e))
    for st in (other, s):
        ok(lib.hipStreamDestroy(st))
    del ev


# hipamd-specific statuses of bad nodes and edges
@hipamd
def test_bad_nodes():
    g, h = graph(), graph()
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(node, g, ffi.NULL, 0))
    first = node[0]
    check(lib.hipGraphAddEmptyNode(ffi.NULL, g, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipGraphAddEmptyNode(node, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipGraphAddEmptyNode(node, g, ffi.NULL, 1), "hipErrorInvalidValue")
    check(lib.hipGraphAddEmptyNode(node, h, deps(first), 1), "hipErrorInvalidValue")  # other graph
    check(lib.hipGraphAddEmptyNode(node, g, deps(first, first), 2), "hipErrorInvalidValue")
    d = malloc(64)
    check(memset_node(g, d, 0, 16, elem=3)[0], "hipErrorInvalidValue")
    check(memset_node(g, d, 0, 17)[0], "hipErrorInvalidValue")                      # past the end
    p = ffi.new("hipMemsetParams *")
    p.dst, p.elementSize, p.width, p.height = d, 4, 4, 0
    check(lib.hipGraphAddMemsetNode(node, g, ffi.NULL, 0, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemsetNode(node, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemcpyNode1D(node, g, ffi.NULL, 0, d, d, 128, lib.hipMemcpyDefault),
          "hipErrorInvalidValue")
    check(lib.hipGraphAddMemcpyNode(node, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")
    hp = ffi.new("hipHostNodeParams *")
    check(lib.hipGraphAddHostNode(node, g, ffi.NULL, 0, hp), "hipErrorInvalidValue")
    kp = ffi.new("hipKernelNodeParams *")
    check(lib.hipGraphAddKernelNode(node, g, ffi.NULL, 0, kp), "hipErrorInvalidValue")
    check(lib.hipGraphAddEventRecordNode(node, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGraphAddEventWaitNode(node, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipGraphAddEmptyNode(node, g, ffi.NULL, 0))
    second = node[0]
    ok(lib.hipGraphAddDependencies(g, deps(first), deps(second), 1))
    check(lib.hipGraphAddDependencies(g, deps(first), deps(second), 1), "hipErrorInvalidValue")
    check(lib.hipGraphAddDependencies(g, deps(first), deps(first), 1), "hipErrorInvalidValue")
    check(lib.hipGraphAddDependencies(g, ffi.NULL, ffi.NULL, 1), "hipErrorInvalidValue")
    ok(lib.hipGraphAddDependencies(g, ffi.NULL, ffi.NULL, 0))
    count = ffi.new("size_t *")
    check(lib.hipGraphGetNodes(ffi.NULL, ffi.NULL, count), "hipErrorInvalidValue")
    check(lib.hipGraphGetNodes(g, ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroyNode(second))
    ok(lib.hipGraphNodeGetDependentNodes(first, ffi.NULL, count))
    assert count[0] == 0
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipGraphDestroy(h))
    ok(lib.hipFree(d))


# hipamd-specific statuses of instantiation and launch
@hipamd
def test_bad_instantiate_and_launch():
    g = graph()
    x = ffi.new("hipGraphExec_t *")
    check(lib.hipGraphInstantiate(ffi.NULL, g, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipGraphInstantiate(x, ffi.NULL, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipGraphInstantiateWithFlags(x, g, 5), "hipErrorInvalidValue")
    ok(lib.hipGraphInstantiateWithFlags(x, g, lib.hipGraphInstantiateFlagAutoFreeOnLaunch))
    s = stream()
    ok(lib.hipStreamDestroy(s))
    check(lib.hipGraphLaunch(x[0], s), "hipErrorInvalidValue")
    check(lib.hipGraphLaunch(ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipGraphLaunch(x[0], ffi.NULL))                  # an empty graph
    ok(lib.hipGraphExecDestroy(x[0]))
    check(lib.hipGraphExecDestroy(ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))


# stub: a cycle cannot be instantiated
@stub_only
def test_cycle_is_refused():
    g = graph()
    a, b = ffi.new("hipGraphNode_t *"), ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(a, g, ffi.NULL, 0))
    ok(lib.hipGraphAddEmptyNode(b, g, deps(a[0]), 1))
    ok(lib.hipGraphAddDependencies(g, deps(b[0]), deps(a[0]), 1))
    x = ffi.new("hipGraphExec_t *")
    check(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))


# platform-independent: an executable graph keeps its own copy of the nodes
def test_exec_survives_its_graph():
    g = graph()
    log = HostLog()
    host_node(g, log.host_fn("x"))
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipGraphLaunch(x[0], ffi.NULL))
    ok(lib.hipStreamSynchronize(ffi.NULL))
    assert log.entries == ["x"]
    ok(lib.hipGraphExecDestroy(x[0]))
