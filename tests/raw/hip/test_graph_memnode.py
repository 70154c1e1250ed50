"""Graph memory nodes (clr hipamd/src/hip_graph.cpp hipGraphAddMemAllocNode,
hipGraphAddMemFreeNode, hipGraphMem*NodeGetParams, hipDrvGraphAddMemFreeNode;
hip_graph_internal.hpp GraphMemAllocNode / GraphMemFreeNode).  Stub:
hip_graph_memnode.c; the device's graph pool figures: hip_graph_mem.c."""
from __future__ import annotations

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, device_count, ffi, hipamd, lib, malloc, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipGraphAddMemAllocNode"),
                                         reason="the headers declare no hipGraphAddMemAllocNode")]

N = ffi.NULL
SIZE = 4096


def _graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def _params(size=SIZE, device=0):
    p = ffi.new("hipMemAllocNodeParams *")
    p.bytesize = size
    p.poolProps.allocType = lib.hipMemAllocationTypePinned
    p.poolProps.location.type = lib.hipMemLocationTypeDevice
    p.poolProps.location.id = device
    return p


def _deps(*nodes):
    return (ffi.new("hipGraphNode_t[]", list(nodes)), len(nodes)) if nodes else (N, 0)


def _alloc(g, *deps, size=SIZE):
    out = ffi.new("hipGraphNode_t *")
    p = _params(size)
    ok(lib.hipGraphAddMemAllocNode(out, g, *_deps(*deps), p))
    assert p.dptr != N
    return out[0], p.dptr


def _free(g, ptr, *deps):
    out = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemFreeNode(out, g, *_deps(*deps), ptr))
    return out[0]


def _exec(g, flags=0):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiateWithFlags(x, g, flags))
    return x[0]


def _figure(name, device=0):
    v = ffi.new("uint64_t *")
    ok(lib.hipDeviceGetGraphMemAttribute(device, getattr(lib, "hipGraphMemAttr" + name), v))
    return v[0]


def reset_graph_pool():
    """Trim device 0's graph pool and reset its high marks (tests of graph
    memory leave it as test_graph_mem_attr.py expects to find it)."""
    lib.hipDeviceSynchronize()
    ok(lib.hipDeviceGraphMemTrim(0))
    zero = ffi.new("uint64_t *", 0)
    for name in ("UsedMemHigh", "ReservedMemHigh"):
        ok(lib.hipDeviceSetGraphMemAttribute(0, getattr(lib, "hipGraphMemAttr" + name), zero))


@pytest.fixture(autouse=True)
def clean_graph_pool():
    """Each test starts and ends with the graph pool's figures at 0."""
    reset_graph_pool()
    yield
    lib.hipDeviceSynchronize()
    ok(lib.hipDeviceGraphMemTrim(0))
    assert _figure("UsedMemCurrent") == 0
    assert _figure("ReservedMemCurrent") == 0
    reset_graph_pool()


def test_alloc_memset_copy_free_in_one_graph():
    """The address handed back at creation is used by later nodes of the
    graph; the pool's used figure is the allocation's between the two nodes'
    runs, reserved stays until hipDeviceGraphMemTrim."""
    g = _graph()
    alloc, dptr = _alloc(g)
    ms = ffi.new("hipMemsetParams *")
    ms.dst, ms.value, ms.elementSize, ms.width, ms.height = dptr, 0x5A, 1, SIZE, 1
    memset_node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemsetNode(memset_node, g, *_deps(alloc), ms))
    host = ffi.new("unsigned char[]", SIZE)
    copy = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemcpyNode1D(copy, g, *_deps(memset_node[0]), host, dptr, SIZE,
                                   lib.hipMemcpyDeviceToHost))
    _free(g, dptr, copy[0])
    assert _figure("UsedMemCurrent") == 0       # nothing mapped before a launch
    x = _exec(g)
    s = stream()
    for _ in range(2):                          # freed in the graph: launches repeat
        ok(lib.hipGraphLaunch(x, s))
        ok(lib.hipStreamSynchronize(s))
        assert bytes(ffi.buffer(host)) == b"\x5a" * SIZE
    assert _figure("UsedMemCurrent") == 0
    assert _figure("UsedMemHigh") == SIZE
    assert _figure("ReservedMemCurrent") == SIZE
    assert _figure("ReservedMemHigh") == SIZE
    ok(lib.hipDeviceGraphMemTrim(0))
    assert _figure("ReservedMemCurrent") == 0
    assert _figure("ReservedMemHigh") == SIZE
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


def test_unfreed_allocation_blocks_a_relaunch_until_freed():
    """GraphExec::Run: a repeated launch whose allocation is still mapped is
    hipErrorInvalidValue; hipFree and hipFreeAsync give it back."""
    g = _graph()
    _, dptr = _alloc(g)
    x = _exec(g)
    s = stream()
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert _figure("UsedMemCurrent") == SIZE
    check(lib.hipGraphLaunch(x, s), "hipErrorInvalidValue")
    ok(lib.hipFree(dptr))
    assert _figure("UsedMemCurrent") == 0
    check(lib.hipFree(dptr), "hipErrorInvalidValue")     # not mapped any more
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipFreeAsync(dptr, s))
    ok(lib.hipStreamSynchronize(s))
    assert _figure("UsedMemCurrent") == 0
    check(lib.hipFreeAsync(N, s), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))


def test_auto_free_on_launch():
    """hipGraphInstantiateFlagAutoFreeOnLaunch frees what the last launch left
    allocated (Graph::FreeAllMemory) before launching again."""
    g = _graph()
    _alloc(g)
    x = _exec(g, lib.hipGraphInstantiateFlagAutoFreeOnLaunch)
    s = stream()
    for _ in range(3):
        ok(lib.hipGraphLaunch(x, s))
        ok(lib.hipStreamSynchronize(s))
        assert _figure("UsedMemCurrent") == SIZE
    assert _figure("UsedMemHigh") == SIZE
    ok(lib.hipGraphExecDestroy(x))
    assert _figure("UsedMemCurrent") == SIZE  # the graph's node still holds the address
    ok(lib.hipGraphDestroy(g))                # the last copy: the memory goes with it
    assert _figure("UsedMemCurrent") == 0
    ok(lib.hipStreamDestroy(s))


def test_exec_keeps_the_allocation_after_its_graph_is_destroyed():
    g = _graph()
    alloc, dptr = _alloc(g)
    _free(g, dptr, alloc)
    x = _exec(g)
    ok(lib.hipGraphDestroy(g))
    s = stream()
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipGraphExecDestroy(x))            # the fixture checks the memory is gone
    ok(lib.hipStreamDestroy(s))


def test_get_params_round_trip():
    g = _graph()
    desc = ffi.new("hipMemAccessDesc *")
    desc.location.type = lib.hipMemLocationTypeDevice
    desc.flags = lib.hipMemAccessFlagsProtReadWrite
    p = _params()
    p.accessDescs, p.accessDescCount = desc, 1
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemAllocNode(node, g, N, 0, p))
    got = ffi.new("hipMemAllocNodeParams *")
    ok(lib.hipGraphMemAllocNodeGetParams(node[0], got))
    assert bytes(ffi.buffer(got)) == bytes(ffi.buffer(p))
    free_node = _free(g, p.dptr, node[0])
    out = ffi.new("void **")
    ok(lib.hipGraphMemFreeNodeGetParams(free_node, out))
    assert out[0] == p.dptr
    types = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(node[0], types))
    assert types[0] == lib.hipGraphNodeTypeMemAlloc
    ok(lib.hipGraphNodeGetType(free_node, types))
    assert types[0] == lib.hipGraphNodeTypeMemFree
    # wrong node type, null arguments
    check(lib.hipGraphMemAllocNodeGetParams(free_node, got), "hipErrorInvalidValue")
    check(lib.hipGraphMemFreeNodeGetParams(node[0], out), "hipErrorInvalidValue")
    check(lib.hipGraphMemAllocNodeGetParams(N, got), "hipErrorInvalidValue")
    check(lib.hipGraphMemAllocNodeGetParams(node[0], N), "hipErrorInvalidValue")
    check(lib.hipGraphMemFreeNodeGetParams(N, out), "hipErrorInvalidValue")
    check(lib.hipGraphMemFreeNodeGetParams(free_node, N), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))


def test_alloc_node_bad_input():
    g = _graph()
    out = ffi.new("hipGraphNode_t *")
    check(lib.hipGraphAddMemAllocNode(N, g, N, 0, _params()), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemAllocNode(out, N, N, 0, _params()), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemAllocNode(out, g, N, 2, _params()), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemAllocNode(out, g, N, 0, N), "hipErrorInvalidValue")
    # a refused property clears dptr (hipamd)
    for field, value in (("bytesize", 0),):
        p = _params()
        setattr(p, field, value)
        p.dptr = ffi.cast("void *", 1)
        check(lib.hipGraphAddMemAllocNode(out, g, N, 0, p), "hipErrorInvalidValue")
        assert p.dptr == N
    p = _params()
    p.poolProps.allocType = lib.hipMemAllocationTypeInvalid
    p.dptr = ffi.cast("void *", 1)
    check(lib.hipGraphAddMemAllocNode(out, g, N, 0, p), "hipErrorInvalidValue")
    assert p.dptr == N
    p = _params()
    p.poolProps.location.type = lib.hipMemLocationTypeInvalid
    check(lib.hipGraphAddMemAllocNode(out, g, N, 0, p), "hipErrorInvalidValue")
    for dev in (-1, device_count()):
        check(lib.hipGraphAddMemAllocNode(out, g, N, 0, _params(device=dev)), "hipErrorInvalidValue")
    # a dependency of another graph
    other = _graph()
    foreign = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(foreign, other, N, 0))
    check(lib.hipGraphAddMemAllocNode(out, g, *_deps(foreign[0]), _params()), "hipErrorInvalidValue")
    count = ffi.new("size_t *")
    ok(lib.hipGraphGetNodes(g, N, count))
    assert count[0] == 0                      # nothing was added, nothing allocated
    ok(lib.hipGraphDestroy(other))
    ok(lib.hipGraphDestroy(g))


def test_free_node_bad_input():
    g = _graph()
    alloc, dptr = _alloc(g)
    out = ffi.new("hipGraphNode_t *")
    deps, n = _deps(alloc)
    check(lib.hipGraphAddMemFreeNode(N, g, deps, n, dptr), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemFreeNode(out, N, deps, n, dptr), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemFreeNode(out, g, N, 1, dptr), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemFreeNode(out, g, deps, 0, dptr), "hipErrorInvalidValue")
    check(lib.hipGraphAddMemFreeNode(out, g, deps, n, N), "hipErrorInvalidValue")
    stack = ffi.new("int *")                  # memory the runtime does not know
    check(lib.hipGraphAddMemFreeNode(out, g, deps, n, stack), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))


@version_sensitive
def test_free_node_wants_an_alloc_nodes_address_from_6_3():
    """clr cf0320a0b (6.3): hipGraphAddMemFreeNode takes an address only from
    an alloc node that no free node names yet (memAllocNodePtrs_); before,
    any memory the runtime knows."""
    g = _graph()
    alloc, dptr = _alloc(g)
    plain = malloc(64)
    out = ffi.new("hipGraphNode_t *")
    deps, n = _deps(alloc)
    check(lib.hipGraphAddMemFreeNode(out, g, deps, n, plain),
          expect({(5, 7): "hipSuccess", (6, 3): "hipErrorInvalidValue"}))
    ok(lib.hipGraphAddMemFreeNode(out, g, deps, n, dptr))
    check(lib.hipGraphAddMemFreeNode(out, g, deps, n, dptr),
          expect({(5, 7): "hipSuccess", (6, 3): "hipErrorInvalidValue"}))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(plain))


def test_second_instantiation_is_not_supported():
    """ihipGraphInstantiate: a graph instantiated before, holding memory nodes"""
    g = _graph()
    _alloc(g)
    x = _exec(g)
    again = ffi.new("hipGraphExec_t *")
    check(lib.hipGraphInstantiate(again, g, N, N, 0), "hipErrorNotSupported")
    ok(lib.hipGraphExecDestroy(x))
    check(lib.hipGraphInstantiateWithFlags(again, g, 0), "hipErrorNotSupported")
    plain = _graph()                          # without memory nodes: any number
    ok(lib.hipGraphAddEmptyNode(ffi.new("hipGraphNode_t *"), plain, N, 0))
    xs = [_exec(plain) for _ in range(2)]
    for x in xs:
        ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(plain))
    ok(lib.hipGraphDestroy(g))


@version_sensitive
def test_clone_and_destroy_node_refuse_memory_nodes_from_6_3():
    """clr ca3c2ac18 (6.3): hipGraphClone of a graph with memory nodes and
    hipGraphDestroyNode of one are hipErrorNotSupported."""
    g = _graph()
    alloc, dptr = _alloc(g)
    free_node = _free(g, dptr, alloc)
    clone = ffi.new("hipGraph_t *")
    want = expect({(5, 7): "hipSuccess", (6, 3): "hipErrorNotSupported"})
    check(lib.hipGraphClone(clone, g), want)
    if want == "hipSuccess":
        ok(lib.hipGraphDestroy(clone[0]))
    check(lib.hipGraphDestroyNode(free_node), want)
    check(lib.hipGraphDestroyNode(alloc), want)
    ok(lib.hipGraphDestroy(g))


@pytest.mark.skipif(not hasattr(lib, "hipDrvGraphAddMemFreeNode"),
                    reason="the headers declare no hipDrvGraphAddMemFreeNode")
def test_drv_free_node():
    """hipDrvGraphAddMemFreeNode checks only that the runtime knows the memory
    (it does not ask memAllocNodePtrs_)."""
    g = _graph()
    alloc, dptr = _alloc(g)
    out = ffi.new("hipGraphNode_t *")
    deps, n = _deps(alloc)
    d = ffi.cast("hipDeviceptr_t", dptr)
    check(lib.hipDrvGraphAddMemFreeNode(N, g, deps, n, d), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemFreeNode(out, N, deps, n, d), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemFreeNode(out, g, N, 1, d), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemFreeNode(out, g, deps, 0, d), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemFreeNode(out, g, deps, n, ffi.cast("hipDeviceptr_t", 0)),
          "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemFreeNode(out, g, deps, n, ffi.cast("hipDeviceptr_t", ffi.new("int *"))),
          "hipErrorInvalidValue")
    ok(lib.hipDrvGraphAddMemFreeNode(out, g, deps, n, d))
    ok(lib.hipDrvGraphAddMemFreeNode(out, g, deps, n, d))     # no bookkeeping of frees
    got = ffi.new("void **")
    ok(lib.hipGraphMemFreeNodeGetParams(out[0], got))
    assert got[0] == dptr
    x = _exec(g)
    s = stream()
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert _figure("UsedMemCurrent") == 0
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipStreamDestroy(s))
