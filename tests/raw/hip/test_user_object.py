"""User objects (clr hipamd/src/hip_graph.cpp hipUserObject*,
hipGraphRetain/ReleaseUserObject; hip::UserObject, ~Graph, Graph::clone in
hip_graph_internal.hpp/.cpp).  Stub: hip_user_object.c.

The destructor runs on the call that drops the last reference; a graph
releases what it owns when destroyed -- one reference per object through
6.2, the count it retained from 6.3 (STUB_RULE_GRAPH_USER_OBJECT_COUNTS:
clr e74ac6f58) -- and an executable graph keeps its clone's reference
until it is destroyed and its last launch has completed."""
from __future__ import annotations

import time

import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, lib, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipUserObjectCreate"),
                                         reason="the headers declare no hipUserObjectCreate")]

INT_MAX = 2**31 - 1


class Destructors:
    """User objects whose destructor counts its calls, by tag."""

    def __init__(self) -> None:
        self.calls: list[int] = []

        @ffi.callback("void(void *)")
        def fn(data):
            self.calls.append(int(ffi.cast("uintptr_t", data)))
        self.fn = fn

    def create(self, tag: int, refs: int = 1):
        out = ffi.new("hipUserObject_t *")
        ok(lib.hipUserObjectCreate(out, ffi.cast("void *", tag), self.fn, refs,
                                   lib.hipUserObjectNoDestructorSync))
        return out[0]


def graph():
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    return g[0]


def test_create_bad_input():
    d = Destructors()
    out = ffi.new("hipUserObject_t *")
    sync = lib.hipUserObjectNoDestructorSync
    check(lib.hipUserObjectCreate(ffi.NULL, ffi.NULL, d.fn, 1, sync), "hipErrorInvalidValue")
    check(lib.hipUserObjectCreate(out, ffi.NULL, ffi.NULL, 1, sync), "hipErrorInvalidValue")
    check(lib.hipUserObjectCreate(out, ffi.NULL, d.fn, 0, sync), "hipErrorInvalidValue")
    check(lib.hipUserObjectCreate(out, ffi.NULL, d.fn, INT_MAX + 1, sync), "hipErrorInvalidValue")
    # the one flag there is must be given
    check(lib.hipUserObjectCreate(out, ffi.NULL, d.fn, 1, 0), "hipErrorInvalidValue")
    assert lib.hipGetLastError() == lib.hipErrorInvalidValue
    assert d.calls == []


def test_destructor_runs_on_the_last_release():
    d = Destructors()
    o = d.create(5, refs=2)
    ok(lib.hipUserObjectRetain(o, 3))
    ok(lib.hipUserObjectRelease(o, 4))
    assert d.calls == []
    ok(lib.hipUserObjectRelease(o, 1))
    assert d.calls == [5]                   # synchronously, in that call
    # a released object: hipamd finds it unlisted and does nothing
    ok(lib.hipUserObjectRelease(o, 1))
    ok(lib.hipUserObjectRetain(o, 1))
    assert d.calls == [5]


def test_release_of_more_than_held_does_nothing():
    d = Destructors()
    o = d.create(1, refs=2)
    ok(lib.hipUserObjectRelease(o, 3))      # referenceCount() < count: hipSuccess
    assert d.calls == []
    ok(lib.hipUserObjectRelease(o, 2))
    assert d.calls == [1]


def test_retain_release_bad_input():
    d = Destructors()
    o = d.create(2)
    for fn in (lib.hipUserObjectRetain, lib.hipUserObjectRelease):
        check(fn(ffi.NULL, 1), "hipErrorInvalidValue")
        check(fn(o, 0), "hipErrorInvalidValue")
        check(fn(o, INT_MAX + 1), "hipErrorInvalidValue")
    ok(lib.hipUserObjectRelease(o, 1))
    assert d.calls == [2]


def test_graph_retain_release_bad_input():
    d = Destructors()
    o = d.create(3)
    g = graph()
    check(lib.hipGraphRetainUserObject(ffi.NULL, o, 1, 0), "hipErrorInvalidValue")
    check(lib.hipGraphRetainUserObject(g, ffi.NULL, 1, 0), "hipErrorInvalidValue")
    check(lib.hipGraphRetainUserObject(g, o, 0, 0), "hipErrorInvalidValue")
    check(lib.hipGraphRetainUserObject(g, o, 1, 2), "hipErrorInvalidValue")
    check(lib.hipGraphReleaseUserObject(ffi.NULL, o, 1), "hipErrorInvalidValue")
    check(lib.hipGraphReleaseUserObject(g, ffi.NULL, 1), "hipErrorInvalidValue")
    check(lib.hipGraphReleaseUserObject(g, o, 0), "hipErrorInvalidValue")
    # an object the graph does not own: hipSuccess, nothing released
    ok(lib.hipGraphReleaseUserObject(g, o, 1))
    assert d.calls == []
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipUserObjectRelease(o, 1))
    assert d.calls == [3]


def test_graph_release_of_what_it_retained():
    d = Destructors()
    o = d.create(4)
    g = graph()
    ok(lib.hipGraphRetainUserObject(g, o, 2, 0))
    ok(lib.hipUserObjectRelease(o, 1))      # the graph's two are left
    assert d.calls == []
    ok(lib.hipGraphReleaseUserObject(g, o, 2))
    assert d.calls == [4]
    ok(lib.hipGraphDestroy(g))
    assert d.calls == [4]


@version_sensitive
def test_graph_destroy_releases_its_references():
    d = Destructors()
    o = d.create(6)
    g = graph()
    ok(lib.hipGraphRetainUserObject(g, o, 3, 0))   # 4 references
    ok(lib.hipUserObjectRelease(o, 1))             # the graph's 3 left
    ok(lib.hipGraphDestroy(g))
    # 6.2: ~Graph releases once per object; 6.3 on: the count it retained
    assert d.calls == expect({(5, 2): [], (6, 3): [6]})
    if not d.calls:
        ok(lib.hipUserObjectRelease(o, 2))
        assert d.calls == [6]


@version_sensitive
def test_move_hands_the_reference_to_the_graph():
    d = Destructors()
    o = d.create(7)
    g = graph()
    ok(lib.hipGraphRetainUserObject(g, o, 1, lib.hipGraphUserObjectMove))
    # 6.2 unlists a moved object: the caller's release does nothing
    ok(lib.hipUserObjectRetain(o, 1))
    ok(lib.hipGraphDestroy(g))
    assert d.calls == expect({(5, 2): [7], (6, 3): []})
    if not d.calls:
        ok(lib.hipUserObjectRelease(o, 1))
        assert d.calls == [7]


def test_clone_and_exec_own_a_reference_each():
    d = Destructors()
    o = d.create(8)
    g = graph()
    ok(lib.hipGraphRetainUserObject(g, o, 1, lib.hipGraphUserObjectMove))
    clone = ffi.new("hipGraph_t *")
    ok(lib.hipGraphClone(clone, g))
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipGraphDestroy(clone[0]))
    assert d.calls == []                    # the executable graph's clone holds one
    ok(lib.hipGraphExecDestroy(x[0]))
    assert d.calls == [8]


def test_exec_destroy_releases_after_its_launch_completed():
    d = Destructors()
    o = d.create(9)
    g = graph()
    ran = []

    @ffi.callback("void(void *)")
    def slow(_):
        time.sleep(0.2)
        ran.append(list(d.calls))           # what had been destroyed when it ran
    params = ffi.new("hipHostNodeParams *")
    params.fn, params.userData = slow, ffi.NULL
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddHostNode(node, g, ffi.NULL, 0, params))
    ok(lib.hipGraphRetainUserObject(g, o, 1, lib.hipGraphUserObjectMove))
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphDestroy(g))
    s = stream()
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipGraphExecDestroy(x[0]))
    # the destructor ran after the launched host node, not before
    assert ran == [[]] and d.calls == [9]
    ok(lib.hipStreamDestroy(s))
