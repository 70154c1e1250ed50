"""An executable graph's state (clr hipamd/src/hip_graph.cpp, rocm-6.2.0 and
amd-staging): hipGraphUpload, hipGraphExecGetFlags, hipGraphNodeSet/
GetEnabled.  Stub: hip_graph_exec_state.c."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, lib, malloc, ok, stream

pytestmark = hipamd


def needs(*names: str):
    missing = [n for n in names if not hasattr(lib, n)]
    return pytest.mark.skipif(bool(missing), reason=f"the headers declare no {', '.join(missing)}")


def memset_graph(d, value):
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    p = ffi.new("hipMemsetParams *")
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = d, value, 1, 64, 1, 64
    node = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddMemsetNode(node, g[0], ffi.NULL, 0, p))
    return g[0], node[0]


def instantiate(g, flags=0):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiateWithFlags(x, g, flags))
    return x[0]


@needs("hipGraphUpload")
def test_upload_checks_and_succeeds():
    d = malloc(64)
    g, _ = memset_graph(d, 1)
    x = instantiate(g)
    s = stream()
    ok(lib.hipGraphUpload(x, s))
    ok(lib.hipGraphUpload(x, ffi.NULL))
    check(lib.hipGraphUpload(ffi.NULL, s), "hipErrorInvalidValue")
    ok(lib.hipStreamDestroy(s))
    check(lib.hipGraphUpload(x, s), "hipErrorContextIsDestroyed")
    ok(lib.hipGraphExecDestroy(x))
    check(lib.hipGraphUpload(x, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(d))


@needs("hipGraphExecGetFlags")
def test_exec_flags_are_the_instantiation_flags():
    d = malloc(64)
    g, _ = memset_graph(d, 1)
    flags = ffi.new("unsigned long long *", 99)
    for f in (0, lib.hipGraphInstantiateFlagAutoFreeOnLaunch):
        x = instantiate(g, f)
        ok(lib.hipGraphExecGetFlags(x, flags))
        assert flags[0] == f
        check(lib.hipGraphExecGetFlags(x, ffi.NULL), "hipErrorInvalidValue")
        ok(lib.hipGraphExecDestroy(x))
    check(lib.hipGraphExecGetFlags(ffi.NULL, flags), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(d))


@needs("hipGraphNodeSetEnabled", "hipGraphNodeGetEnabled")
def test_a_disabled_node_does_not_run():
    d = malloc(64)
    g, node = memset_graph(d, 7)
    x = instantiate(g)
    on = ffi.new("unsigned int *", 5)
    ok(lib.hipGraphNodeGetEnabled(x, node, on))
    assert on[0] == 1
    ok(lib.hipGraphNodeSetEnabled(x, node, 0))
    ok(lib.hipGraphNodeGetEnabled(x, node, on))
    assert on[0] == 0
    ok(lib.hipMemset(d, 0, 64))
    ok(lib.hipGraphLaunch(x, ffi.NULL))
    ok(lib.hipStreamSynchronize(ffi.NULL))
    out = np.ones(64, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 64, lib.hipMemcpyDeviceToHost))
    assert (out == 0).all()
    ok(lib.hipGraphNodeSetEnabled(x, node, 1))
    ok(lib.hipGraphLaunch(x, ffi.NULL))
    ok(lib.hipStreamSynchronize(ffi.NULL))
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 64, lib.hipMemcpyDeviceToHost))
    assert (out == 7).all()
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(d))


@needs("hipGraphNodeSetEnabled", "hipGraphNodeGetEnabled")
def test_enabled_bad_input():
    d = malloc(64)
    g, node = memset_graph(d, 7)
    empty = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(empty, g, ffi.NULL, 0))
    x = instantiate(g)
    on = ffi.new("unsigned int *")
    check(lib.hipGraphNodeSetEnabled(ffi.NULL, node, 1), "hipErrorInvalidValue")
    check(lib.hipGraphNodeSetEnabled(x, ffi.NULL, 1), "hipErrorInvalidValue")
    check(lib.hipGraphNodeGetEnabled(x, node, ffi.NULL), "hipErrorInvalidValue")
    # only kernel, memcpy and memset nodes
    check(lib.hipGraphNodeSetEnabled(x, empty[0], 0), "hipErrorInvalidValue")
    check(lib.hipGraphNodeGetEnabled(x, empty[0], on), "hipErrorInvalidValue")
    # a node added after instantiation has no copy (GetClonedNode)
    late = ffi.new("hipGraphNode_t *")
    p = ffi.new("hipMemsetParams *")
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = d, 1, 1, 8, 1, 8
    ok(lib.hipGraphAddMemsetNode(late, g, ffi.NULL, 0, p))
    check(lib.hipGraphNodeSetEnabled(x, late[0], 0), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
    check(lib.hipGraphNodeGetEnabled(x, node, on), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroy(g))
    ok(lib.hipFree(d))
