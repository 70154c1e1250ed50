"""hip-tests catch/unit/graph (rocm-6.2.0; hipGraphMemFreeNodeGetParams.cc
from hip-tests of Oct 2024, which 6.2.0 does not have) on graph memory
nodes, hipGraphInstantiateWithParams, hipGraphAddNode and
hipGraphDebugDotPrint (see hiptests.py).  Stub: hip_graph_memnode.c,
hip_graph_generic.c, hip_graph_exec_state.c, hip_graph_dot.c."""
from __future__ import annotations

import pytest
from rocm_versions import version_sensitive

from .helpers import ffi, hipamd, lib, malloc, ok
from .hiptests import Env, Fact, ids

pytestmark = [hipamd, version_sensitive,
              pytest.mark.skipif(not hasattr(lib, "hipGraphAddMemAllocNode"),
                                 reason="the headers declare no hipGraphAddMemAllocNode")]

N = ffi.NULL
AM = "graph/hipGraphAddMemAllocNode.cc"
FM = "graph/hipGraphAddMemFreeNode.cc"
GP = "graph/hipGraphMemAllocNodeGetParams.cc"


def _params(e, **change):
    p = ffi.new("hipMemAllocNodeParams *")
    p.bytesize = 1024
    p.poolProps.allocType = lib.hipMemAllocationTypePinned
    p.poolProps.location.type = lib.hipMemLocationTypeDevice
    for k, v in change.items():
        if k == "alloc_type":
            p.poolProps.allocType = v
        elif k == "loc_type":
            p.poolProps.location.type = v
        elif k == "loc_id":
            p.poolProps.location.id = v
        else:
            setattr(p, k, v)
    e.later(lambda: p)
    return p


def _alloc(e, g=None, **change):
    g = g or e.graph()
    n = ffi.new("hipGraphNode_t *")
    p = _params(e, **change)
    ok(lib.hipGraphAddMemAllocNode(n, g, N, 0, p))
    return g, n[0], p.dptr


def _add_alloc(e, out=True, graph=True, ndeps=0, params=True, **change):
    g = e.graph()
    n = ffi.new("hipGraphNode_t *")
    return lib.hipGraphAddMemAllocNode(n if out else N, g if graph else N, N, ndeps,
                                       _params(e, **change) if params else N)


def _add_free(e, out=True, graph=True, deps=True, ndeps=1, ptr="alloc"):
    g, a, dptr = _alloc(e)
    n = ffi.new("hipGraphNode_t *")
    target = {"alloc": dptr, "null": N, "stack": ffi.new("int *")}[ptr]
    d = ffi.new("hipGraphNode_t[]", [a]) if deps else N
    return lib.hipGraphAddMemFreeNode(n if out else N, g if graph else N, d, ndeps, target)


def _free_twice(e):
    g, a, dptr = _alloc(e)
    n = ffi.new("hipGraphNode_t *")
    d = ffi.new("hipGraphNode_t[]", [a])
    ok(lib.hipGraphAddMemFreeNode(n, g, d, 1, dptr))
    return lib.hipGraphAddMemFreeNode(n, g, d, 1, dptr)


def _free_plain(e):
    g, a, _ = _alloc(e)
    plain = malloc(64)
    e.later(lambda: lib.hipFree(plain))
    n = ffi.new("hipGraphNode_t *")
    return lib.hipGraphAddMemFreeNode(n, g, ffi.new("hipGraphNode_t[]", [a]), 1, plain)


def _instantiate_twice(e, free=False):
    g, a, dptr = _alloc(e)
    if free:
        ok(lib.hipGraphAddMemFreeNode(ffi.new("hipGraphNode_t *"), g,
                                      ffi.new("hipGraphNode_t[]", [a]), 1, dptr))
    e.exec_of(g)
    x = ffi.new("hipGraphExec_t *")
    return lib.hipGraphInstantiate(x, g, N, N, 0)


def _clone(e):
    g, _, _ = _alloc(e)
    c = ffi.new("hipGraph_t *")
    status = lib.hipGraphClone(c, g)
    if status == 0:
        e.later(lambda: lib.hipGraphDestroy(c[0]))
    return status


def _get_params(e, node="alloc", out=True, free_api=False):
    g, a, dptr = _alloc(e)
    f = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemFreeNode(f, g, ffi.new("hipGraphNode_t[]", [a]), 1, dptr))
    target = {"alloc": a, "free": f[0], "null": N, "empty": e.empty_node(g)}[node]
    if free_api:
        return lib.hipGraphMemFreeNodeGetParams(target, ffi.new("void **") if out else N)
    return lib.hipGraphMemAllocNodeGetParams(target, ffi.new("hipMemAllocNodeParams *") if out else N)


def _get_round_trip(e):
    g = e.graph()
    n = ffi.new("hipGraphNode_t *")
    p = _params(e)
    ok(lib.hipGraphAddMemAllocNode(n, g, N, 0, p))
    got = ffi.new("hipMemAllocNodeParams *")
    ok(lib.hipGraphMemAllocNodeGetParams(n[0], got))
    same = bytes(ffi.buffer(got)) == bytes(ffi.buffer(p))
    return "hipSuccess" if same else "the parameters differ"


def _distinct_addresses(e):
    g = e.graph()
    ptrs = {_alloc(e, g)[2] for _ in range(3)}
    return "hipSuccess" if len(ptrs) == 3 and N not in ptrs else f"{ptrs}"


def _instantiate_with_params(e, pexec=True, graph=True, params=True, flags=0):
    g = e.graph()
    x = ffi.new("hipGraphExec_t *")
    p = ffi.new("hipGraphInstantiateParams *")
    p.flags = flags
    status = lib.hipGraphInstantiateWithParams(x if pexec else N, g if graph else N, p if params else N)
    if status == 0:
        e.later(lambda: lib.hipGraphExecDestroy(x[0]))
    if flags == 10:
        return status if p.result_out == lib.hipGraphInstantiateError else "result_out not Error"
    return status


def _dot(e, graph=True, path=b"/tmp/rocpy-hiptests-neg.dot", flags=0):
    g = e.graph()
    status = lib.hipGraphDebugDotPrint(g if graph else N, path if path is not None else N, flags)
    import os
    if path and os.path.exists(path):
        os.unlink(path)
    return status


def _add_node(e, params=True, kind=None):
    g = e.graph()
    p = ffi.new("hipGraphNodeParams *")
    p.type = lib.hipGraphNodeTypeEventRecord if kind is None else kind
    p.eventRecord.event = e.event()
    return lib.hipGraphAddNode(ffi.new("hipGraphNode_t *"), g, N, 0, p if params else N)


FACTS = [
    Fact(f"{AM}:96", lambda e: _add_alloc(e, out=False), "hipErrorInvalidValue"),
    Fact(f"{AM}:101", lambda e: _add_alloc(e, graph=False), "hipErrorInvalidValue"),
    Fact(f"{AM}:106", lambda e: _add_alloc(e, ndeps=11), "hipErrorInvalidValue"),
    Fact(f"{AM}:119", lambda e: _add_alloc(e, params=False), "hipErrorInvalidValue"),
    Fact(f"{AM}:125", lambda e: _add_alloc(e, alloc_type=lib.hipMemAllocationTypeInvalid),
         "hipErrorInvalidValue"),
    Fact(f"{AM}:132", lambda e: _add_alloc(e, loc_type=lib.hipMemLocationTypeInvalid),
         "hipErrorInvalidValue"),
    Fact(f"{AM}:139", lambda e: _add_alloc(e, loc_id=e.device_count()), "hipErrorInvalidValue"),
    Fact(f"{AM}:197", _instantiate_twice, "hipErrorNotSupported"),
    Fact(f"{AM}:205", _clone, {(5, 7): "hipSuccess", (6, 3): "hipErrorNotSupported"},
         note="hip-tests: NVIDIA only (EXSWHTEC-353); clr refuses it from ca3c2ac18 (6.3)",
         hiptests="hipErrorNotSupported"),
    Fact(f"{FM}:73", lambda e: _add_free(e, out=False), "hipErrorInvalidValue"),
    Fact(f"{FM}:78", lambda e: _add_free(e, graph=False), "hipErrorInvalidValue"),
    Fact(f"{FM}:83", lambda e: _add_free(e, deps=False, ndeps=5), "hipErrorInvalidValue"),
    Fact(f"{FM}:95", lambda e: _add_free(e, ptr="null"), "hipErrorInvalidValue"),
    Fact(f"{FM}:101", lambda e: _add_free(e, ptr="stack"), "hipErrorInvalidValue"),
    Fact(f"{FM}:109", _free_plain, {(5, 7): "hipSuccess", (6, 3): "hipErrorInvalidValue"},
         note="hip-tests: NVIDIA only (EXSWHTEC-352); clr checks memAllocNodePtrs_ from cf0320a0b (6.3)",
         hiptests="hipErrorInvalidValue"),
    Fact(f"{FM}:115", _free_twice, {(5, 7): "hipSuccess", (6, 3): "hipErrorInvalidValue"},
         note="hip-tests: NVIDIA only (EXSWHTEC-352); clr from cf0320a0b (6.3)",
         hiptests="hipErrorInvalidValue"),
    Fact(f"{FM}:162", lambda e: _instantiate_twice(e, free=True), "hipErrorNotSupported"),
    Fact(f"{GP}:92", _get_round_trip, "hipSuccess"),
    Fact(f"{GP}:195", _distinct_addresses, "hipSuccess"),
    Fact(f"{GP}:387", lambda e: _get_params(e, node="null"), "hipErrorInvalidValue"),
    Fact(f"{GP}:392", lambda e: _get_params(e, node="empty"), "hipErrorInvalidValue"),
    Fact(f"{GP}:396", lambda e: _get_params(e, out=False), "hipErrorInvalidValue"),
    Fact(f"{GP}:400", lambda e: _get_params(e, node="free"), "hipErrorInvalidValue"),
    Fact(f"{GP}:406", lambda e: _get_params(e, node="null", free_api=True), "hipErrorInvalidValue"),
    Fact(f"{GP}:411", lambda e: _get_params(e, node="empty", free_api=True), "hipErrorInvalidValue"),
    Fact(f"{GP}:415", lambda e: _get_params(e, node="free", out=False, free_api=True),
         "hipErrorInvalidValue"),
    Fact(f"{GP}:419", lambda e: _get_params(e, node="alloc", free_api=True), "hipErrorInvalidValue"),
    Fact("graph/hipGraphMemFreeNodeGetParams.cc:110 (Oct 2024)",
         lambda e: _get_params(e, node="null", free_api=True), "hipErrorInvalidValue"),
    Fact("graph/hipDeviceGraphMemTrim.cc:71", lambda e: lib.hipDeviceGraphMemTrim(e.device_count()),
         "hipErrorInvalidDevice"),
]

PARAMS_FACTS = [
    Fact("graph/hipGraphInstantiateWithParams.cc:60", lambda e: _instantiate_with_params(e, pexec=False),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphInstantiateWithParams.cc:67", lambda e: _instantiate_with_params(e, graph=False),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphInstantiateWithParams.cc:75", lambda e: _instantiate_with_params(e, params=False),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphInstantiateWithParams.cc:85", lambda e: _instantiate_with_params(e, flags=10),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphAddNode.cc:542", lambda e: _add_node(e, params=False), "hipErrorInvalidValue"),
    Fact("graph/hipGraphAddNode.cc:547", lambda e: _add_node(e, kind=0x20), "hipErrorInvalidValue"),
]

DOT_FACTS = [
    Fact("graph/hipGraphDebugDotPrint.cc:367", lambda e: _dot(e, graph=False), "hipErrorInvalidValue"),
    Fact("graph/hipGraphDebugDotPrint.cc:376", lambda e: _dot(e, path=None), "hipErrorInvalidValue"),
    Fact("graph/hipGraphDebugDotPrint.cc:380", lambda e: _dot(e, path=b""), "hipErrorOperatingSystem"),
    Fact("graph/hipGraphDebugDotPrint.cc:385", lambda e: _dot(e, flags=0), "hipSuccess",
         note="hipGraphDebugDotFlagsVerbose - 1"),
    Fact("graph/hipGraphDebugDotPrint.cc:390", lambda e: _dot(e, flags=lib.hipGraphDebugDotFlagsHandles + 1), "hipSuccess",
         note="hipGraphDebugDotFlagsHandles + 1"),
    Fact("graph/hipGraphDebugDotPrint.cc:394", lambda e: _dot(e, flags=0x7FFFFFFF), "hipSuccess"),
]


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


@pytest.mark.parametrize("fact", FACTS, ids=ids(FACTS))
def test_hiptests_graph_mem(env, fact):
    fact.check(env)


@pytest.mark.skipif(not hasattr(lib, "hipGraphAddNode"), reason="the headers declare no hipGraphAddNode")
@pytest.mark.parametrize("fact", PARAMS_FACTS, ids=ids(PARAMS_FACTS))
def test_hiptests_graph_generic(env, fact):
    fact.check(env)


@pytest.mark.skipif(not hasattr(lib, "hipGraphDebugDotPrint"),
                    reason="the headers declare no hipGraphDebugDotPrint")
@pytest.mark.parametrize("fact", DOT_FACTS, ids=ids(DOT_FACTS))
def test_hiptests_graph_dot(env, fact):
    fact.check(env)
