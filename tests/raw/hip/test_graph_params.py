"""Node parameters after creation, edges and clones (hipamd hip_graph.cpp;
stub: hip_graph_params.c).

Expectations from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/graph/``),
each cited by file and line."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import BACKEND, HostLog, check, ffi, hipamd, lib, malloc, ok, stream, stub_only

pytestmark = hipamd


def graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def empty(g, deps=()):
    n = ffi.new("hipGraphNode_t *")
    arr = ffi.new("hipGraphNode_t[]", list(deps)) if deps else ffi.NULL
    ok(lib.hipGraphAddEmptyNode(n, g, arr, len(deps)))
    return n[0]


def memset_params(dst, value, width):
    p = ffi.new("hipMemsetParams *")
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = dst, value, 1, width, 1, width
    return p


def memset_node(g, dst, value, width):
    n = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemsetNode(n, g, ffi.NULL, 0, memset_params(dst, value, width)))
    return n[0]


def event():
    e = ffi.new("hipEvent_t *")
    ok(lib.hipEventCreate(e))
    return e[0]


def launch(g, s):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    return x[0]


# hipGraphGetEdges.cc: the edges in pairs, the counting convention; :228-:246
def test_get_edges_and_negative():
    g = graph()
    a = empty(g)
    b = empty(g, [a])
    c = empty(g, [a, b])
    n = ffi.new("size_t *")
    ok(lib.hipGraphGetEdges(g, ffi.NULL, ffi.NULL, n))
    assert n[0] == 3
    fr, to = ffi.new("hipGraphNode_t[4]"), ffi.new("hipGraphNode_t[4]")
    n[0] = 4
    ok(lib.hipGraphGetEdges(g, fr, to, n))
    assert n[0] == 3 and fr[3] == ffi.NULL and to[3] == ffi.NULL
    assert sorted((int(ffi.cast("uintptr_t", fr[i])), int(ffi.cast("uintptr_t", to[i])))
                  for i in range(3)) == sorted(
        (int(ffi.cast("uintptr_t", x)), int(ffi.cast("uintptr_t", y)))
        for x, y in ((a, b), (a, c), (b, c)))
    check(lib.hipGraphGetEdges(ffi.NULL, fr, to, n), "hipErrorInvalidValue")       # :228
    check(lib.hipGraphGetEdges(g, ffi.NULL, to, n), "hipErrorInvalidValue")        # :232
    check(lib.hipGraphGetEdges(g, fr, ffi.NULL, n), "hipErrorInvalidValue")        # :237
    check(lib.hipGraphGetEdges(g, fr, to, ffi.NULL), "hipErrorInvalidValue")       # :241
    ok(lib.hipGraphDestroy(g))
    check(lib.hipGraphGetEdges(g, fr, to, n), "hipErrorInvalidValue")              # :246


# hipGraphRemoveDependencies.cc:417-:453
def test_remove_dependencies():
    g = graph()
    start, mid, end = empty(g), empty(g), empty(g)
    lone = empty(g)
    s, m, e, lo = (ffi.new("hipGraphNode_t *", x) for x in (start, mid, end, lone))
    ok(lib.hipGraphAddDependencies(g, s, m, 1))
    ok(lib.hipGraphAddDependencies(g, m, e, 1))
    check(lib.hipGraphRemoveDependencies(ffi.NULL, s, m, 1), "hipErrorInvalidValue")   # :417
    check(lib.hipGraphRemoveDependencies(g, ffi.NULL, m, 1), "hipErrorInvalidValue")   # :422
    check(lib.hipGraphRemoveDependencies(g, s, ffi.NULL, 1), "hipErrorInvalidValue")   # :427
    check(lib.hipGraphRemoveDependencies(ffi.NULL, s, ffi.NULL, 1), "hipErrorInvalidValue")  # :433
    check(lib.hipGraphRemoveDependencies(g, s, lo, 1), "hipErrorInvalidValue")         # :439
    check(lib.hipGraphRemoveDependencies(g, s, e, 1), "hipErrorInvalidValue")          # :445
    ok(lib.hipGraphRemoveDependencies(g, s, m, 1))
    check(lib.hipGraphRemoveDependencies(g, s, m, 1), "hipErrorInvalidValue")          # :453
    n = ffi.new("size_t *")
    ok(lib.hipGraphNodeGetDependencies(mid, ffi.NULL, n))
    assert n[0] == 0
    ok(lib.hipGraphDestroy(g))


# hipGraphClone.cc:50/:56 and hipGraphNodeFindInClone.cc:74-:109; a clone
# runs as its original and does not change with it
def test_clone_and_find_in_clone():
    d = malloc(64)
    g = graph()
    node = memset_node(g, d, 7, 64)
    c = ffi.new("hipGraph_t *")
    check(lib.hipGraphClone(ffi.NULL, g), "hipErrorInvalidValue")                # Clone.cc:50
    check(lib.hipGraphClone(c, ffi.NULL), "hipErrorInvalidValue")                # Clone.cc:56
    ok(lib.hipGraphClone(c, g))
    later = empty(g)
    found = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphNodeFindInClone(found, node, c[0]))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(found[0], t))
    assert t[0] == lib.hipGraphNodeTypeMemset and found[0] != node
    check(lib.hipGraphNodeFindInClone(found, node, ffi.NULL), "hipErrorInvalidValue")     # :74
    check(lib.hipGraphNodeFindInClone(ffi.NULL, node, c[0]), "hipErrorInvalidValue")      # :79
    check(lib.hipGraphNodeFindInClone(found, ffi.NULL, c[0]), "hipErrorInvalidValue")     # :84
    check(lib.hipGraphNodeFindInClone(found, node, g), "hipErrorInvalidValue")            # :89
    check(lib.hipGraphNodeFindInClone(found, later, c[0]), "hipErrorInvalidValue")        # :109
    s = stream()
    x = launch(c[0], s)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(64, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 64, lib.hipMemcpyDeviceToHost))
    assert (out == 7).all()
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroyNode(node))
    # :96 (NVIDIA-only there): a destroyed original node is no node
    check(lib.hipGraphNodeFindInClone(found, node, c[0]), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(c[0]))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipGraphMemsetNodeGetParams.cc:64-:80; a set reaches later instantiations,
# an exec set only that executable graph
def test_memset_node_params_graph_and_exec():
    d = malloc(16)
    g = graph()
    node = memset_node(g, d, 1, 16)
    p = ffi.new("hipMemsetParams *")
    ok(lib.hipGraphMemsetNodeGetParams(node, p))
    assert (p.value, p.width, p.dst) == (1, 16, d)
    check(lib.hipGraphMemsetNodeGetParams(ffi.NULL, p), "hipErrorInvalidValue")     # :64
    check(lib.hipGraphMemsetNodeGetParams(node, ffi.NULL), "hipErrorInvalidValue")  # :70
    check(lib.hipGraphMemsetNodeGetParams(empty(g), p), "hipErrorInvalidValue")     # :80
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphMemsetNodeSetParams(node, memset_params(d, 2, 16)))
    ok(lib.hipGraphExecMemsetNodeSetParams(x, node, memset_params(d, 3, 16)))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(16, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 16, lib.hipMemcpyDeviceToHost))
    assert (out == 3).all()
    y = launch(g, s)
    ok(lib.hipGraphLaunch(y, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 16, lib.hipMemcpyDeviceToHost))
    assert (out == 2).all()
    check(lib.hipGraphMemsetNodeSetParams(node, memset_params(d, 2, 17)), "hipErrorInvalidValue")
    check(lib.hipGraphExecMemsetNodeSetParams(x, empty(g), memset_params(d, 2, 16)),
          "hipErrorInvalidValue")
    for e in (x, y):
        ok(lib.hipGraphExecDestroy(e))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipGraphHostNodeGetParams.cc:79-:90, hipGraphExecHostNodeSetParams.cc:107-:142
def test_host_node_params():
    log = HostLog()
    g = graph()
    p = ffi.new("hipHostNodeParams *")
    p.fn = log.host_fn("first")
    n = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddHostNode(n, g, ffi.NULL, 0, p))
    got = ffi.new("hipHostNodeParams *")
    ok(lib.hipGraphHostNodeGetParams(n[0], got))
    assert got.fn == p.fn
    check(lib.hipGraphHostNodeGetParams(ffi.NULL, got), "hipErrorInvalidValue")     # :79
    check(lib.hipGraphHostNodeGetParams(n[0], ffi.NULL), "hipErrorInvalidValue")    # :83
    check(lib.hipGraphHostNodeGetParams(empty(g), got), "hipErrorInvalidValue")     # :90
    s = stream()
    x = launch(g, s)
    q = ffi.new("hipHostNodeParams *")
    q.fn = log.host_fn("second")
    q.userData = ffi.cast("void *", 1)      # null: refused before 5.5 (a release rule of its own)
    check(lib.hipGraphExecHostNodeSetParams(ffi.NULL, n[0], q), "hipErrorInvalidValue")   # :107
    check(lib.hipGraphExecHostNodeSetParams(x, ffi.NULL, q), "hipErrorInvalidValue")      # :112
    check(lib.hipGraphExecHostNodeSetParams(x, n[0], ffi.NULL), "hipErrorInvalidValue")   # :117
    nofn = ffi.new("hipHostNodeParams *")
    check(lib.hipGraphExecHostNodeSetParams(x, n[0], nofn), "hipErrorInvalidValue")       # :123
    ok(lib.hipGraphExecHostNodeSetParams(x, n[0], q))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipGraphHostNodeSetParams(n[0], q))
    check(lib.hipGraphHostNodeSetParams(n[0], nofn), "hipErrorInvalidValue")
    assert log.entries == ["second"]
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


# hipGraphEventRecordNodeGetEvent.cc:86-:124, hipGraphEventRecordNodeSetEvent.cc:191-:239
def test_event_node_get_set():
    g = graph()
    e1, e2 = event(), event()
    rec, wait = ffi.new("hipGraphNode_t *"), ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEventRecordNode(rec, g, ffi.NULL, 0, e1))
    ok(lib.hipGraphAddEventWaitNode(wait, g, rec, 1, e1))
    out = ffi.new("hipEvent_t *")
    ok(lib.hipGraphEventRecordNodeGetEvent(rec[0], out))
    assert out[0] == e1
    check(lib.hipGraphEventRecordNodeGetEvent(ffi.NULL, out), "hipErrorInvalidValue")    # :86
    check(lib.hipGraphEventRecordNodeGetEvent(rec[0], ffi.NULL), "hipErrorInvalidValue") # :91
    check(lib.hipGraphEventRecordNodeGetEvent(wait[0], out), "hipErrorInvalidValue")     # :98
    ok(lib.hipGraphEventRecordNodeSetEvent(rec[0], e2))
    ok(lib.hipGraphEventRecordNodeGetEvent(rec[0], out))
    assert out[0] == e2
    check(lib.hipGraphEventRecordNodeSetEvent(ffi.NULL, e1), "hipErrorInvalidValue")     # :191
    check(lib.hipGraphEventRecordNodeSetEvent(rec[0], ffi.NULL), "hipErrorInvalidValue") # :196
    check(lib.hipGraphEventRecordNodeSetEvent(wait[0], e1), "hipErrorInvalidValue")      # :203
    ok(lib.hipGraphEventWaitNodeSetEvent(wait[0], e2))
    ok(lib.hipGraphEventWaitNodeGetEvent(wait[0], out))
    assert out[0] == e2
    check(lib.hipGraphEventWaitNodeGetEvent(rec[0], out), "hipErrorInvalidValue")
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphExecEventRecordNodeSetEvent(x, rec[0], e1))
    ok(lib.hipGraphExecEventWaitNodeSetEvent(x, wait[0], e1))
    check(lib.hipGraphExecEventRecordNodeSetEvent(x, wait[0], e1), "hipErrorInvalidValue")
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipEventQuery(e1))
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    for e in (e1, e2):
        ok(lib.hipEventDestroy(e))
    ok(lib.hipStreamDestroy(s))


# hipGraphMemcpyNodeSetParams1D.cc, hipGraphExecMemcpyNodeSetParams1D.cc
def test_memcpy1d_node_set_params():
    src = np.arange(32, dtype=np.uint8)
    other = np.full(32, 9, dtype=np.uint8)
    d = malloc(32)
    g = graph()
    n = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(n, g, ffi.NULL, 0, d, ffi.from_buffer(src), 32,
                                   lib.hipMemcpyHostToDevice))
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphExecMemcpyNodeSetParams1D(x, n[0], d, ffi.from_buffer(other), 32,
                                             lib.hipMemcpyHostToDevice))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(32, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 32, lib.hipMemcpyDeviceToHost))
    assert (out == 9).all()
    ok(lib.hipGraphMemcpyNodeSetParams1D(n[0], d, ffi.from_buffer(src), 16,
                                         lib.hipMemcpyHostToDevice))
    check(lib.hipGraphMemcpyNodeSetParams1D(n[0], ffi.NULL, ffi.from_buffer(src), 16,
                                            lib.hipMemcpyHostToDevice), "hipErrorInvalidValue")
    check(lib.hipGraphMemcpyNodeSetParams1D(empty(g), d, ffi.from_buffer(src), 16,
                                            lib.hipMemcpyHostToDevice), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipGraphKernelNodeGetParams.cc:62-:73: what was given comes back
@pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")
def test_kernel_node_get_set_params(hip_kernel):
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("vadd").encode()))
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    a, b, c = malloc(256), malloc(256), malloc(256)
    n = ffi.new("int *", 64)
    pa, pb, pc = (ffi.new("void **", x) for x in (a, b, c))
    args = ffi.new("void *[4]", [pa, pb, pc, n])
    p = ffi.new("hipKernelNodeParams *")
    p.func = f[0]
    p.gridDim.x = p.gridDim.y = p.gridDim.z = 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = 64, 1, 1
    p.kernelParams = args
    g = graph()
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddKernelNode(node, g, ffi.NULL, 0, p))
    got = ffi.new("hipKernelNodeParams *")
    ok(lib.hipGraphKernelNodeGetParams(node[0], got))
    assert got.func == p.func and got.blockDim.x == 64 and got.kernelParams == args
    check(lib.hipGraphKernelNodeGetParams(ffi.NULL, got), "hipErrorInvalidValue")      # :62
    check(lib.hipGraphKernelNodeGetParams(node[0], ffi.NULL), "hipErrorInvalidValue")  # :66
    check(lib.hipGraphKernelNodeGetParams(empty(g), got), "hipErrorInvalidValue")      # :73
    p.blockDim.x = 32
    ok(lib.hipGraphKernelNodeSetParams(node[0], p))
    ok(lib.hipGraphKernelNodeGetParams(node[0], got))
    assert got.blockDim.x == 32
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphExecKernelNodeSetParams(x, node[0], p))
    bad = ffi.new("hipKernelNodeParams *", p[0])
    bad.func = ffi.NULL
    check(lib.hipGraphKernelNodeSetParams(node[0], bad), "hipErrorInvalidValue")
    bad.func = ffi.cast("void *", 0x10)
    check(lib.hipGraphExecKernelNodeSetParams(x, node[0], bad), "hipErrorInvalidDeviceFunction")
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    for ptr in (a, b, c):
        ok(lib.hipFree(ptr))
    ok(lib.hipModuleUnload(m[0]))


# memcpy nodes from and to a registered symbol (the stub's registration table)
@stub_only
def test_symbol_memcpy_nodes():
    d = malloc(16)
    key = ffi.new("int *")
    assert lib.rocpy_stub_register_symbol(key, d, 16) == 0
    src = np.arange(16, dtype=np.uint8)
    out = np.zeros(16, dtype=np.uint8)
    g = graph()
    to, back = ffi.new("hipGraphNode_t *"), ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNodeToSymbol(to, g, ffi.NULL, 0, key, ffi.from_buffer(src), 16, 0,
                                         lib.hipMemcpyHostToDevice))
    ok(lib.hipGraphAddMemcpyNodeFromSymbol(back, g, to, 1, ffi.from_buffer(out), key, 8, 8,
                                           lib.hipMemcpyDeviceToHost))
    check(lib.hipGraphAddMemcpyNodeToSymbol(to, g, ffi.NULL, 0, ffi.new("int *"),
                                            ffi.from_buffer(src), 16, 0,
                                            lib.hipMemcpyHostToDevice), "hipErrorInvalidSymbol")
    check(lib.hipGraphMemcpyNodeSetParamsFromSymbol(back[0], ffi.from_buffer(out), key, 8, 12,
                                                    lib.hipMemcpyDeviceToHost),
          "hipErrorInvalidValue")
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert list(out[:8]) == list(range(8, 16))
    ok(lib.hipGraphExecMemcpyNodeSetParamsToSymbol(x, to[0], key, ffi.from_buffer(out), 8, 0,
                                                   lib.hipMemcpyHostToDevice))
    ok(lib.hipGraphExecMemcpyNodeSetParamsFromSymbol(x, back[0], ffi.from_buffer(out), key, 8, 0,
                                                     lib.hipMemcpyDeviceToHost))
    ok(lib.hipGraphMemcpyNodeSetParamsToSymbol(to[0], key, ffi.from_buffer(src), 8, 0,
                                               lib.hipMemcpyHostToDevice))
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    lib.rocpy_stub_unregister_symbol(key)
    ok(lib.hipFree(d))


# hipGraphAddChildGraphNode.cc:65-:83, hipGraphChildGraphNodeGetGraph.cc:142-:158:
# a child graph node runs its graph (a clone taken when added) between its
# dependencies and dependents
def test_child_graph_nodes():
    d = malloc(32)
    child = graph()
    memset_node(child, d, 5, 32)
    g = graph()
    first = memset_node(g, d, 1, 32)
    node = ffi.new("hipGraphNode_t *")
    deps = ffi.new("hipGraphNode_t[1]", [first])
    check(lib.hipGraphAddChildGraphNode(ffi.NULL, g, ffi.NULL, 0, child), "hipErrorInvalidValue")  # :65
    check(lib.hipGraphAddChildGraphNode(node, ffi.NULL, ffi.NULL, 0, child),
          "hipErrorInvalidValue")                                                                  # :71
    check(lib.hipGraphAddChildGraphNode(node, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")   # :77
    check(lib.hipGraphAddChildGraphNode(node, g, ffi.NULL, 10, child), "hipErrorInvalidValue")     # :83
    ok(lib.hipGraphAddChildGraphNode(node, g, deps, 1, child))
    ok(lib.hipGraphDestroy(child))             # the node keeps its own clone
    inner = ffi.new("hipGraph_t *")
    ok(lib.hipGraphChildGraphNodeGetGraph(node[0], inner))
    count = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(inner[0], ffi.NULL, count))
    assert count[0] == 1
    check(lib.hipGraphChildGraphNodeGetGraph(ffi.NULL, inner), "hipErrorInvalidValue")    # :142
    check(lib.hipGraphChildGraphNodeGetGraph(node[0], ffi.NULL), "hipErrorInvalidValue")  # :147
    check(lib.hipGraphChildGraphNodeGetGraph(first, inner), "hipErrorInvalidValue")       # :152
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(node[0], t))
    assert t[0] == lib.hipGraphNodeTypeGraph
    s = stream()
    x = launch(g, s)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(32, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 32, lib.hipMemcpyDeviceToHost))
    assert (out == 5).all()                    # after the parent's first node
    clone = ffi.new("hipGraph_t *")
    ok(lib.hipGraphClone(clone, g))            # nested clones
    y = launch(clone[0], s)
    ok(lib.hipGraphLaunch(y, s))
    ok(lib.hipStreamSynchronize(s))
    for e in (x, y):
        ok(lib.hipGraphExecDestroy(e))
    ok(lib.hipGraphDestroy(clone[0]))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# hipGraphExecUpdate.cc:119-:120 (a node type changed), :194/:199 (a node
# more or fewer), :219 (dependencies differ), :326 (success applies the
# parameters); hipGraphExecChildGraphNodeSetParams builds on it in hipamd
def test_exec_update():
    d = malloc(16)
    g1 = graph()
    a = memset_node(g1, d, 1, 16)
    b = empty(g1, [a])
    s = stream()
    x = launch(g1, s)
    err, res = ffi.new("hipGraphNode_t *"), ffi.new("hipGraphExecUpdateResult *")
    check(lib.hipGraphExecUpdate(ffi.NULL, g1, err, res), "hipErrorInvalidValue")
    check(lib.hipGraphExecUpdate(x, ffi.NULL, err, res), "hipErrorInvalidValue")
    check(lib.hipGraphExecUpdate(x, g1, ffi.NULL, res), "hipErrorInvalidValue")
    check(lib.hipGraphExecUpdate(x, g1, err, ffi.NULL), "hipErrorInvalidValue")
    bigger = ffi.new("hipGraph_t *")
    ok(lib.hipGraphClone(bigger, g1))
    empty(bigger[0])
    check(lib.hipGraphExecUpdate(x, bigger[0], err, res), "hipErrorGraphExecUpdateFailure")    # :199
    assert res[0] == lib.hipGraphExecUpdateErrorTopologyChanged
    swapped = graph()
    e0 = empty(swapped)
    memset_node(swapped, d, 1, 16)
    check(lib.hipGraphExecUpdate(x, swapped, err, res), "hipErrorGraphExecUpdateFailure")      # :120
    assert res[0] == lib.hipGraphExecUpdateErrorNodeTypeChanged and err[0] == e0            # :119
    same = graph()
    c = memset_node(same, d, 4, 16)
    empty(same, [c])
    ok(lib.hipGraphExecUpdate(x, same, err, res))
    assert res[0] == lib.hipGraphExecUpdateSuccess                                          # :326
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(16, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 16, lib.hipMemcpyDeviceToHost))
    assert (out == 4).all()
    check(lib.hipGraphExecChildGraphNodeSetParams(x, b, g1), "hipErrorUnknown")  # its own graph
    check(lib.hipGraphExecChildGraphNodeSetParams(x, ffi.NULL, same), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
    for gr in (g1, bigger[0], swapped, same):
        ok(lib.hipGraphDestroy(gr))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))
