"""hip-tests catch/unit/graph (rocm-6.2.0) on graphs after their nodes were
added: edges, removing them, event and host node parameters (see hiptests.py).
The stub's hip_graph_params.c implements these (they were weak defaults)."""
from __future__ import annotations

import pytest
from rocm_versions import version_sensitive

from .helpers import ffi, hipamd, lib, ok
from .hiptests import Env, Fact, ids

pytestmark = [hipamd, version_sensitive]

N = ffi.NULL
NODE = "hipGraphNode_t *"


def _node(e, g, kind="empty", event=None, deps=()):
    out = ffi.new(NODE)
    d = ffi.new("hipGraphNode_t[]", list(deps)) if deps else N
    if kind == "empty":
        ok(lib.hipGraphAddEmptyNode(out, g, d, len(deps)))
    elif kind == "record":
        ok(lib.hipGraphAddEventRecordNode(out, g, d, len(deps), event or e.event()))
    elif kind == "wait":
        ok(lib.hipGraphAddEventWaitNode(out, g, d, len(deps), event or e.event()))
    elif kind == "host":
        ok(lib.hipGraphAddHostNode(out, g, d, len(deps), _host_params(e, user=True)))
    return out[0]


def _host_params(e, user=True, fn=True):
    cb = ffi.callback("void(void *)", lambda _u: None)
    e.later(lambda: cb)                 # alive until the fact is done
    p = ffi.new("hipHostNodeParams *")
    p.fn = cb if fn else N
    p.userData = ffi.new("int *") if user else N
    e.later(lambda: p)
    return p


def _arr(*nodes):
    return ffi.new("hipGraphNode_t[]", list(nodes))


def _chain(e):
    """graph with a -> b and a -> c; returns (graph, a, b, c)"""
    g = e.graph()
    a = _node(e, g)
    b = _node(e, g, deps=(a,))
    c = _node(e, g, deps=(a,))
    return g, a, b, c


def _edges(e):
    g, a, b, c = _chain(e)
    n = ffi.new("size_t *")
    ok(lib.hipGraphGetEdges(g, N, N, n))
    if n[0] != 2:
        return f"{n[0]} edges"
    n[0] = 4
    f, t = ffi.new("hipGraphNode_t[4]"), ffi.new("hipGraphNode_t[4]")
    ok(lib.hipGraphGetEdges(g, f, t, n))
    got = sorted((int(ffi.cast("uintptr_t", f[i])), int(ffi.cast("uintptr_t", t[i]))) for i in range(2))
    want = sorted((int(ffi.cast("uintptr_t", a)), int(ffi.cast("uintptr_t", x))) for x in (b, c))
    if n[0] != 2 or got != want or f[2] != N or t[3] != N:
        return "wrong edges"
    n[0] = 1                                        # a short array gets the first edge
    ok(lib.hipGraphGetEdges(g, f, t, n))
    return "hipSuccess" if n[0] == 1 and f[0] == a else "short array"


def _removed(e):
    g, a, b, c = _chain(e)
    ok(lib.hipGraphRemoveDependencies(g, _arr(a), _arr(b), 1))
    n = ffi.new("size_t *")
    ok(lib.hipGraphNodeGetDependencies(b, N, n))
    deps_b = n[0]
    ok(lib.hipGraphNodeGetDependentNodes(a, N, n))
    return "hipSuccess" if (deps_b, n[0]) == (0, 1) else f"deps {deps_b}, dependents {n[0]}"


def _event_round_trip(e, kind):
    get = {"record": lib.hipGraphEventRecordNodeGetEvent, "wait": lib.hipGraphEventWaitNodeGetEvent}[kind]
    put = {"record": lib.hipGraphEventRecordNodeSetEvent, "wait": lib.hipGraphEventWaitNodeSetEvent}[kind]
    first, second = e.event(), e.event()
    node = _node(e, e.graph(), kind, first)
    out = ffi.new("hipEvent_t *")
    ok(get(node, out))
    if out[0] != first:
        return "not the node's event"
    ok(put(node, second))
    ok(get(node, out))
    return "hipSuccess" if out[0] == second else "event not set"


def _host_round_trip(e):
    node = _node(e, e.graph(), "host")
    p = _host_params(e)
    ok(lib.hipGraphHostNodeSetParams(node, p))
    out = ffi.new("hipHostNodeParams *")
    ok(lib.hipGraphHostNodeGetParams(node, out))
    return "hipSuccess" if out.fn == p.fn and out.userData == p.userData else "params not set"


FACTS = [
    Fact("graph/hipGraphGetEdges.cc:273", lambda e: lib.hipGraphGetEdges(N, N, N, ffi.new("size_t *")),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphGetEdges.cc:283",
         lambda e: lib.hipGraphGetEdges(e.graph(), N, ffi.new("hipGraphNode_t[2]"), ffi.new("size_t *", 2)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphGetEdges.cc:287",
         lambda e: lib.hipGraphGetEdges(e.graph(), ffi.new("hipGraphNode_t[2]"), N, ffi.new("size_t *", 2)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphGetEdges.cc:291",
         lambda e: lib.hipGraphGetEdges(e.graph(), ffi.new("hipGraphNode_t[2]"), ffi.new("hipGraphNode_t[2]"),
                                        N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphGetEdges.cc(edges)", _edges, "hipSuccess"),
    Fact("graph/hipGraphRemoveDependencies.cc:447",
         lambda e: (lambda g, a, b, c: lib.hipGraphRemoveDependencies(N, _arr(a), _arr(b), 1))(*_chain(e)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphRemoveDependencies.cc:458",
         lambda e: (lambda g, a, b, c: lib.hipGraphRemoveDependencies(g, N, _arr(b), 1))(*_chain(e)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphRemoveDependencies.cc:459",
         lambda e: (lambda g, a, b, c: lib.hipGraphRemoveDependencies(g, _arr(a), N, 1))(*_chain(e)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphRemoveDependencies.cc:464",
         lambda e: lib.hipGraphRemoveDependencies(e.graph(), N, N, 1), "hipErrorInvalidValue"),
    Fact("graph/hipGraphRemoveDependencies.cc(none)", lambda e: lib.hipGraphRemoveDependencies(e.graph(), N, N, 0),
         {(5, 2): "hipErrorInvalidValue", (5, 5): "hipSuccess"},
         note="5.2-5.4 refuse null arrays whatever the count"),
    Fact("graph/hipGraphRemoveDependencies.cc:476",
         lambda e: (lambda h: (lambda x, y: (lib.hipGraphAddDependencies(h, _arr(x), _arr(y), 1),
                                             lib.hipGraphRemoveDependencies(e.graph(), _arr(x), _arr(y), 1))[1])(
             _node(e, h), _node(e, h)))(e.graph()), "hipErrorInvalidValue",
         note="hip-tests runs it on NVIDIA only (EXSWHTEC-218); clr checks the parent graph from 5.5"),
    Fact("graph/hipGraphRemoveDependencies.cc:482",
         lambda e: (lambda g, a, b, c: lib.hipGraphRemoveDependencies(g, _arr(b), _arr(c), 1))(*_chain(e)),
         "hipErrorInvalidValue", note="an edge that does not exist"),
    Fact("graph/hipGraphRemoveDependencies.cc:488",
         lambda e: (lambda g, a, b, c: (lib.hipGraphRemoveDependencies(g, _arr(a), _arr(b), 1),
                                        lib.hipGraphRemoveDependencies(g, _arr(a), _arr(b), 1))[1])(*_chain(e)),
         "hipErrorInvalidValue", note="removed twice"),
    Fact("graph/hipGraphRemoveDependencies.cc(removed)", _removed, "hipSuccess"),
    Fact("graph/hipGraphEventRecordNodeGetEvent.cc:89",
         lambda e: lib.hipGraphEventRecordNodeGetEvent(N, ffi.new("hipEvent_t *")), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeGetEvent.cc:93",
         lambda e: lib.hipGraphEventRecordNodeGetEvent(_node(e, e.graph(), "record"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeGetEvent.cc:99",
         lambda e: lib.hipGraphEventRecordNodeGetEvent(_node(e, e.graph()), ffi.new("hipEvent_t *")),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeGetEvent.cc:122",
         lambda e: lib.hipGraphEventRecordNodeGetEvent(_node(e, e.graph(), "wait"), ffi.new("hipEvent_t *")),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeSetEvent.cc:79",
         lambda e: lib.hipGraphEventRecordNodeSetEvent(_node(e, e.graph(), "wait"), e.event()),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeSetEvent.cc:184",
         lambda e: lib.hipGraphEventRecordNodeSetEvent(N, e.event()), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeSetEvent.cc:188",
         lambda e: lib.hipGraphEventRecordNodeSetEvent(_node(e, e.graph(), "record"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeSetEvent.cc:194",
         lambda e: lib.hipGraphEventRecordNodeSetEvent(_node(e, e.graph()), e.event()), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventRecordNodeSetEvent.cc(round trip)", lambda e: _event_round_trip(e, "record"),
         "hipSuccess"),
    Fact("graph/hipGraphEventWaitNodeGetEvent.cc:90",
         lambda e: lib.hipGraphEventWaitNodeGetEvent(N, ffi.new("hipEvent_t *")), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeGetEvent.cc:94",
         lambda e: lib.hipGraphEventWaitNodeGetEvent(_node(e, e.graph(), "wait"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeGetEvent.cc:100",
         lambda e: lib.hipGraphEventWaitNodeGetEvent(_node(e, e.graph()), ffi.new("hipEvent_t *")),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeGetEvent.cc:123",
         lambda e: lib.hipGraphEventWaitNodeGetEvent(_node(e, e.graph(), "record"), ffi.new("hipEvent_t *")),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc:81",
         lambda e: lib.hipGraphEventWaitNodeSetEvent(_node(e, e.graph(), "record"), e.event()),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc:247",
         lambda e: lib.hipGraphEventWaitNodeSetEvent(N, e.event()), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc:251",
         lambda e: lib.hipGraphEventWaitNodeSetEvent(_node(e, e.graph(), "wait"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc:257",
         lambda e: lib.hipGraphEventWaitNodeSetEvent(_node(e, e.graph()), e.event()), "hipErrorInvalidValue"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc:289",
         lambda e: lib.hipGraphEventWaitNodeSetEvent(_node(e, e.graph(), "wait"), e.dead_event()),
         "hipErrorInvalidValue", note="a destroyed event (hip-tests: an uninitialised one)"),
    Fact("graph/hipGraphEventWaitNodeSetEvent.cc(round trip)", lambda e: _event_round_trip(e, "wait"),
         "hipSuccess"),
    Fact("graph/hipGraphHostNodeGetParams.cc:79",
         lambda e: lib.hipGraphHostNodeGetParams(N, ffi.new("hipHostNodeParams *")), "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeGetParams.cc:83",
         lambda e: lib.hipGraphHostNodeGetParams(_node(e, e.graph(), "host"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeGetParams.cc:90",
         lambda e: lib.hipGraphHostNodeGetParams(_node(e, e.graph()), ffi.new("hipHostNodeParams *")),
         "hipErrorInvalidValue", note="clr reads any node as a host node; the stub refuses it"),
    Fact("graph/hipGraphHostNodeSetParams.cc:78",
         lambda e: lib.hipGraphHostNodeSetParams(N, _host_params(e)), "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeSetParams.cc:82",
         lambda e: lib.hipGraphHostNodeSetParams(_node(e, e.graph(), "host"), N), "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeSetParams.cc:87",
         lambda e: lib.hipGraphHostNodeSetParams(_node(e, e.graph(), "host"), _host_params(e, fn=False)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeSetParams.cc:92",
         lambda e: lib.hipGraphHostNodeSetParams(_node(e, e.graph(), "host"), _host_params(e, False, False)),
         "hipErrorInvalidValue"),
    Fact("graph/hipGraphHostNodeSetParams.cc:99",
         lambda e: lib.hipGraphHostNodeSetParams(_node(e, e.graph()), _host_params(e)), "hipErrorInvalidValue",
         note="hip-tests: NVIDIA only, 'segfaults on AMD' (clr reinterprets the node); the stub refuses it"),
    Fact("graph/hipGraphHostNodeSetParams.cc(null userData)",
         lambda e: lib.hipGraphHostNodeSetParams(_node(e, e.graph(), "host"), _host_params(e, user=False)),
         {(5, 2): "hipErrorInvalidValue", (5, 5): "hipSuccess"}, note="5.2-5.4 require userData"),
    Fact("graph/hipGraphHostNodeSetParams.cc(round trip)", _host_round_trip, "hipSuccess"),
]


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


@pytest.mark.parametrize("fact", FACTS, ids=ids(FACTS))
def test_hiptests_graph_nodes(env, fact):
    fact.check(env)


def test_removed_edge_changes_the_launch_order():
    """After hipGraphRemoveDependencies the graph launches without the edge: an
    instantiated copy made before keeps it (parameters and edges are copied)."""
    e = Env()
    try:
        g, a, b, c = _chain(e)
        before = e.exec_of(g)
        ok(lib.hipGraphRemoveDependencies(g, _arr(a), _arr(b), 1))
        roots = ffi.new("size_t *")
        ok(lib.hipGraphGetRootNodes(g, N, roots))
        assert roots[0] == 2                      # a and b
        s = e.stream()
        ok(lib.hipGraphLaunch(before, s))
        ok(lib.hipGraphLaunch(e.exec_of(g), s))
        ok(lib.hipStreamSynchronize(s))
    finally:
        e.close()
