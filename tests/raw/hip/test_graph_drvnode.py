"""Driver-style graph nodes: hipDrvGraphAddMemcpyNode (HIP_MEMCPY3D),
hipDrvGraphAddMemsetNode, hipDrvGraphMemcpyNodeGet/SetParams,
hipDrvGraphExecMemcpyNodeSetParams, hipDrvGraphExecMemsetNodeSetParams
(hipamd hip_graph.cpp; stub: hip_graph_drvnode.c).  Declared by the headers
of 6.2 (add) and 6.4 (the rest): skipped where absent."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import check, ffi, hipamd, lib, malloc, ok, stream

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipDrvGraphAddMemcpyNode"),
                                         reason="hipDrvGraph*: headers of 6.2 on")]
needs_6_4 = pytest.mark.skipif(not hasattr(lib, "hipDrvGraphMemcpyNodeGetParams"),
                               reason="hipDrvGraphMemcpyNodeGet/SetParams: headers of 6.4 on")

W, H = 16, 4                       # a 16-byte wide, 4-row region
PITCH = 32
NODE = "hipGraphNode_t *"


@pytest.fixture
def env():
    ctx = ffi.new("hipCtx_t *")
    ok(lib.hipDevicePrimaryCtxRetain(ctx, 0))
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    dev = malloc(PITCH * H)
    ok(lib.hipMemset(dev, 0, PITCH * H))
    s = stream()
    yield ctx[0], g[0], dev, s
    ok(lib.hipStreamDestroy(s))
    lib.hipGraphDestroy(g[0])
    ok(lib.hipFree(dev))
    ok(lib.hipDevicePrimaryCtxRelease(0))


def h2d(host, dev, *, width=W, height=H, x=0):
    """host (packed W-byte rows) -> dev (PITCH-byte rows) from column x"""
    c = ffi.new("HIP_MEMCPY3D *")
    c.srcMemoryType, c.srcHost, c.srcPitch, c.srcHeight = lib.hipMemoryTypeHost, host, W, H
    c.dstMemoryType, c.dstDevice, c.dstPitch, c.dstHeight = lib.hipMemoryTypeDevice, dev, PITCH, H
    c.dstXInBytes = x
    c.WidthInBytes, c.Height, c.Depth = width, height, 1
    return c


def read(dev):
    out = np.zeros(PITCH * H, dtype=np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), dev, PITCH * H, lib.hipMemcpyDeviceToHost))
    return out.reshape(H, PITCH)


def run(g, s):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    return x[0]


def add_copy(ctx, g, c):
    n = ffi.new(NODE)
    ok(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 0, c, ctx))
    return n[0]


def test_memcpy_node_copies_the_region(env):
    ctx, g, dev, s = env
    src = np.arange(W * H, dtype=np.uint8)
    node = add_copy(ctx, g, h2d(ffi.from_buffer(src), dev, x=8))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(node, t))
    assert t[0] == lib.hipGraphNodeTypeMemcpy
    x = run(g, s)
    got = read(dev)
    assert (got[:, 8:8 + W] == src.reshape(H, W)).all() and not got[:, :8].any()
    ok(lib.hipGraphExecDestroy(x))


def test_memcpy_node_add_errors(env):
    ctx, g, dev, _s = env
    host = np.zeros(W * H, dtype=np.uint8)
    c = h2d(ffi.from_buffer(host), dev)
    n = ffi.new(NODE)
    check(lib.hipDrvGraphAddMemcpyNode(ffi.NULL, g, ffi.NULL, 0, c, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemcpyNode(n, ffi.NULL, ffi.NULL, 0, c, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 1, c, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 0, c, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 0, ffi.NULL, ctx), "hipErrorInvalidValue")
    # the region past the device allocation's end
    check(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 0, h2d(ffi.from_buffer(host), dev, x=PITCH),
                                       ctx), "hipErrorInvalidValue")
    check(lib.hipGetLastError(), "hipErrorInvalidValue")
    none = ffi.new("hipGraphNode_t[1]")
    cnt = ffi.new("size_t *", 1)
    ok(lib.hipGraphGetNodes(g, none, cnt))
    assert cnt[0] == 0                              # nothing was added
    # an empty extent is a copy of nothing (ihipDrvMemcpy3D_validate), NULL sides and all
    empty = ffi.new("HIP_MEMCPY3D *")
    ok(lib.hipDrvGraphAddMemcpyNode(n, g, ffi.NULL, 0, empty, ctx))


@needs_6_4
def test_memcpy_node_get_set_params(env):
    ctx, g, dev, s = env
    a = np.full(W * H, 7, dtype=np.uint8)
    b = np.full(W * H, 9, dtype=np.uint8)
    node = add_copy(ctx, g, h2d(ffi.from_buffer(a), dev))
    got = ffi.new("HIP_MEMCPY3D *")
    ok(lib.hipDrvGraphMemcpyNodeGetParams(node, got))
    assert got.WidthInBytes == W and got.dstPitch == PITCH and got.srcHost == ffi.from_buffer(a)
    ok(lib.hipDrvGraphMemcpyNodeSetParams(node, h2d(ffi.from_buffer(b), dev, x=16)))
    ok(lib.hipDrvGraphMemcpyNodeGetParams(node, got))
    assert got.dstXInBytes == 16
    x = run(g, s)
    r = read(dev)
    assert (r[:, 16:32] == 9).all() and not r[:, :16].any()
    # a 3-D memcpy node's parameters are not a driver node's, nor the reverse
    check(lib.hipGraphMemcpyNodeGetParams(node, ffi.new("hipMemcpy3DParms *")), "hipErrorInvalidValue")
    empty = ffi.new(NODE)
    ok(lib.hipGraphAddEmptyNode(empty, g, ffi.NULL, 0))
    for bad in (ffi.NULL, empty[0]):
        check(lib.hipDrvGraphMemcpyNodeGetParams(bad, got), "hipErrorInvalidValue")
        check(lib.hipDrvGraphMemcpyNodeSetParams(bad, got), "hipErrorInvalidValue")
    check(lib.hipDrvGraphMemcpyNodeGetParams(node, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipDrvGraphMemcpyNodeSetParams(node, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipDrvGraphMemcpyNodeSetParams(node, h2d(ffi.from_buffer(b), dev, x=PITCH)),
          "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))


@needs_6_4
def test_exec_memcpy_node_set_params(env):
    ctx, g, dev, s = env
    a = np.full(W * H, 1, dtype=np.uint8)
    b = np.full(W * H, 2, dtype=np.uint8)
    node = add_copy(ctx, g, h2d(ffi.from_buffer(a), dev))
    x = run(g, s)
    ok(lib.hipDrvGraphExecMemcpyNodeSetParams(x, node, h2d(ffi.from_buffer(b), dev), ctx))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert (read(dev)[:, :W] == 2).all()
    # the graph's own node is unchanged
    got = ffi.new("HIP_MEMCPY3D *")
    ok(lib.hipDrvGraphMemcpyNodeGetParams(node, got))
    assert got.srcHost == ffi.from_buffer(a)
    c = h2d(ffi.from_buffer(b), dev)
    check(lib.hipDrvGraphExecMemcpyNodeSetParams(ffi.NULL, node, c, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphExecMemcpyNodeSetParams(x, ffi.NULL, c, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphExecMemcpyNodeSetParams(x, node, ffi.NULL, ctx), "hipErrorInvalidValue")
    hollow = h2d(ffi.from_buffer(b), dev)
    hollow.srcHost = ffi.NULL                       # no source at all
    check(lib.hipDrvGraphExecMemcpyNodeSetParams(x, node, hollow, ctx), "hipErrorInvalidValue")
    later = add_copy(ctx, g, h2d(ffi.from_buffer(a), dev))    # not in the executable graph
    check(lib.hipDrvGraphExecMemcpyNodeSetParams(x, later, c, ctx), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))


def memset_params(dst, value, width, elem=1, height=1, pitch=0):
    t = ffi.typeof(lib.hipDrvGraphAddMemsetNode).args[4]   # 6.x HIP_MEMSET_NODE_PARAMS, 7.x hipMemsetParams
    p = ffi.new(t)
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = dst, value, elem, width, height, pitch
    return p


def test_memset_node_is_a_memset_node(env):
    ctx, g, dev, s = env
    n = ffi.new(NODE)
    ok(lib.hipDrvGraphAddMemsetNode(n, g, ffi.NULL, 0, memset_params(dev, 0x5A, W), ctx))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(n[0], t))
    assert t[0] == lib.hipGraphNodeTypeMemset
    back = ffi.new("hipMemsetParams *")
    ok(lib.hipGraphMemsetNodeGetParams(n[0], back))
    assert back.value == 0x5A and back.width == W and back.dst == dev
    x = run(g, s)
    r = read(dev)
    assert (r[0, :W] == 0x5A).all() and not r[0, W:].any()
    ok(lib.hipGraphExecDestroy(x))
    bad = ffi.new(NODE)
    check(lib.hipDrvGraphAddMemsetNode(bad, g, ffi.NULL, 0, ffi.NULL, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemsetNode(ffi.NULL, g, ffi.NULL, 0, memset_params(dev, 1, W), ctx),
          "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemsetNode(bad, ffi.NULL, ffi.NULL, 0, memset_params(dev, 1, W), ctx),
          "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemsetNode(bad, g, ffi.NULL, 2, memset_params(dev, 1, W), ctx),
          "hipErrorInvalidValue")
    check(lib.hipDrvGraphAddMemsetNode(bad, g, ffi.NULL, 0, memset_params(dev, 1, W, elem=3), ctx),
          "hipErrorInvalidValue")


@pytest.mark.skipif(not hasattr(lib, "hipDrvGraphExecMemsetNodeSetParams"),
                    reason="hipDrvGraphExecMemsetNodeSetParams: headers of 6.4 on")
def test_exec_memset_node_set_params(env):
    ctx, g, dev, s = env
    n = ffi.new(NODE)
    ok(lib.hipDrvGraphAddMemsetNode(n, g, ffi.NULL, 0, memset_params(dev, 1, W), ctx))
    x = run(g, s)
    t = ffi.typeof(lib.hipDrvGraphExecMemsetNodeSetParams).args[2]
    p = ffi.new(t)
    p.dst, p.value, p.elementSize, p.width, p.height, p.pitch = dev, 3, 1, W, 1, 0
    ok(lib.hipDrvGraphExecMemsetNodeSetParams(x, n[0], p, ctx))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert (read(dev)[0, :W] == 3).all()
    check(lib.hipDrvGraphExecMemsetNodeSetParams(ffi.NULL, n[0], p, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphExecMemsetNodeSetParams(x, ffi.NULL, p, ctx), "hipErrorInvalidValue")
    check(lib.hipDrvGraphExecMemsetNodeSetParams(x, n[0], ffi.NULL, ctx), "hipErrorInvalidValue")
    p.elementSize = 3
    check(lib.hipDrvGraphExecMemsetNodeSetParams(x, n[0], p, ctx), "hipErrorInvalidValue")
    p.elementSize, p.dst = 1, ffi.NULL
    check(lib.hipDrvGraphExecMemsetNodeSetParams(x, n[0], p, ctx), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
