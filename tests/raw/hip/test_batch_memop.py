"""Batch memory operations: hipStreamBatchMemOp, hipGraphAddBatchMemOpNode,
hipGraphBatchMemOpNodeGet/SetParams, hipGraphExecBatchMemOpNodeSetParams
(hipamd hip_stream_ops.cpp ihipBatchMemOperation, hip_graph.cpp; stub:
hip_batch_memop.c over hip_stream_value.c's waits and writes).  Declared by
the headers of 6.4 on: skipped where absent.

hipStreamBatchMemOp refuses every batch up to 7.2 (its operation check is
always true) and only barriers and flushes from the fix (rocm-systems PR
#3099, taken as 7.3: STUB_RULE_BATCH_MEM_OP_CHECKS_EACH_OP)."""
from __future__ import annotations

import time

import numpy as np
import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, ffi, hipamd, host_malloc, lib, malloc, ok, stream

pytestmark = [hipamd, version_sensitive,
              pytest.mark.skipif(not hasattr(lib, "hipStreamBatchMemOp"),
                                 reason="batch memory operations: headers of 6.4 on")]

NODE = "hipGraphNode_t *"
FIXED = {(5, 0): "hipErrorInvalidValue", (7, 3): "hipSuccess"}


def ops(*specs):
    """specs: (kind, address, value[, flags]) with kind in wait32/wait64/write32/write64/barrier/flush"""
    arr = ffi.new("hipStreamBatchMemOpParams[]", len(specs))
    kinds = {"wait32": lib.hipStreamMemOpWaitValue32, "wait64": lib.hipStreamMemOpWaitValue64,
             "write32": lib.hipStreamMemOpWriteValue32, "write64": lib.hipStreamMemOpWriteValue64,
             "barrier": lib.hipStreamMemOpBarrier, "flush": lib.hipStreamMemOpFlushRemoteWrites}
    for i, (kind, addr, value, *flags) in enumerate(specs):
        p = arr[i]
        p.operation = kinds[kind]
        side = p.waitValue if kind.startswith("wait") else p.writeValue
        if addr is not None:
            side.operation = kinds[kind]
            side.address = addr
            if kind.endswith("64"):
                side.value64 = value
            else:
                side.value = value
            side.flags = flags[0] if flags else 0
    return arr


def words(ptr, n=2):
    out = np.zeros(n, dtype=np.uint64)
    ok(lib.hipMemcpy(ffi.from_buffer(out), ptr, 8 * n, lib.hipMemcpyDeviceToHost))
    return out


def test_stream_batch_by_release():
    d = malloc(16)
    ok(lib.hipMemset(d, 0, 16))
    s = stream()
    a, b = d, ffi.cast("char *", d) + 8
    status = lib.hipStreamBatchMemOp(s, 2, ops(("write32", a, 5), ("write64", b, 1 << 40)), 0)
    check(status, expect(FIXED))
    ok(lib.hipStreamSynchronize(s))
    want = [5, 1 << 40] if status == 0 else [0, 0]
    assert list(words(d)) == want
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


def test_stream_batch_negative():
    d = malloc(8)
    s = stream()
    good = ops(("write32", d, 1))
    check(lib.hipStreamBatchMemOp(s, 1, ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipStreamBatchMemOp(s, 1, good, 1), "hipErrorInvalidValue")
    check(lib.hipStreamBatchMemOp(s, 0, good, 0), "hipErrorInvalidValue")
    check(lib.hipStreamBatchMemOp(s, 257, ffi.new("hipStreamBatchMemOpParams[257]"), 0),
          "hipErrorInvalidValue")
    # barriers and flushes are refused in every release
    check(lib.hipStreamBatchMemOp(s, 1, ops(("barrier", None, 0)), 0), "hipErrorInvalidValue")
    check(lib.hipStreamBatchMemOp(s, 1, ops(("flush", None, 0)), 0), "hipErrorInvalidValue")
    # an address the stub does not track: refused before anything runs
    check(lib.hipStreamBatchMemOp(s, 1, ops(("write32", ffi.cast("void *", 0x10), 1)), 0),
          "hipErrorInvalidValue")
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    assert lib.hipStreamBatchMemOp(dead, 1, good, 0) != 0
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


def node_params(ctx, arr, count=None, flags=0):
    p = ffi.new("hipBatchMemOpNodeParams *")
    p.ctx, p.count, p.paramArray, p.flags = ctx, len(arr) if count is None else count, arr, flags
    return p


@pytest.fixture
def graph_env():
    # the node type is the stub's gate too (hip_graph.h ROCPY_STUB_BATCH_NODES): HIP's
    # October 2024 amd-staging declares the node's functions without it, and its hipamd
    # implements none of them
    if not hasattr(lib, "hipGraphNodeTypeBatchMemOp"):
        pytest.skip("batch memory operation nodes: these headers have no node type for them")
    ctx = ffi.new("hipCtx_t *")
    ok(lib.hipDevicePrimaryCtxRetain(ctx, 0))
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    s = stream()
    yield ctx[0], g[0], s
    ok(lib.hipStreamDestroy(s))
    lib.hipGraphDestroy(g[0])
    ok(lib.hipDevicePrimaryCtxRelease(0))


def instantiate(g):
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g, ffi.NULL, ffi.NULL, 0))
    return x[0]


def test_graph_node_runs_its_operations_in_order(graph_env):
    ctx, g, s = graph_env
    d = malloc(16)
    ok(lib.hipMemset(d, 0, 16))
    b = ffi.cast("char *", d) + 8
    # the wait is satisfied by the write before it
    arr = ops(("write32", d, 1), ("wait32", d, 1, lib.hipStreamWaitValueEq), ("write64", b, 9))
    n = ffi.new(NODE)
    ok(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, node_params(ctx, arr)))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(n[0], t))
    assert t[0] == lib.hipGraphNodeTypeBatchMemOp
    x = instantiate(g)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    assert list(words(d)) == [1, 9]
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipFree(d))


def test_graph_node_wait_holds_the_stream(graph_env):
    ctx, g, s = graph_env
    flag = host_malloc(8)
    word = ffi.cast("uint64_t *", flag)
    word[0] = 0
    arr = ops(("wait64", flag, 2, lib.hipStreamWaitValueGte))
    n = ffi.new(NODE)
    ok(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, node_params(ctx, arr)))
    x = instantiate(g)
    ok(lib.hipGraphLaunch(x, s))
    time.sleep(0.05)
    check(lib.hipStreamQuery(s), "hipErrorNotReady")
    word[0] = 3
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipHostFree(flag))


def test_graph_node_params_and_errors(graph_env):
    ctx, g, s = graph_env
    d = malloc(8)
    arr = ops(("write32", d, 4))
    p = node_params(ctx, arr)
    n = ffi.new(NODE)
    check(lib.hipGraphAddBatchMemOpNode(ffi.NULL, g, ffi.NULL, 0, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddBatchMemOpNode(n, ffi.NULL, ffi.NULL, 0, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 1, p), "hipErrorInvalidValue")
    check(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGetLastError(), "hipErrorInvalidValue")
    # the field checks return without setting the thread's last error (hipamd's `return`)
    for bad in (node_params(ctx, arr, count=0), node_params(ctx, arr, count=257),
                node_params(ctx, arr, flags=1), node_params(ffi.NULL, arr)):
        check(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, bad), "hipErrorInvalidValue")
        check(lib.hipGetLastError(), "hipSuccess")
    nul = node_params(ctx, arr)
    nul.paramArray = ffi.NULL
    check(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, nul), "hipErrorInvalidValue")
    ok(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, p))
    got = ffi.new("hipBatchMemOpNodeParams *")
    ok(lib.hipGraphBatchMemOpNodeGetParams(n[0], got))
    assert got.count == 1 and got.paramArray == arr and got.ctx == ctx
    arr2 = ops(("write32", d, 6))
    ok(lib.hipGraphBatchMemOpNodeSetParams(n[0], node_params(ctx, arr2)))
    ok(lib.hipGraphBatchMemOpNodeGetParams(n[0], got))
    assert got.paramArray == arr2
    check(lib.hipGraphBatchMemOpNodeSetParams(n[0], node_params(ctx, arr2, count=0)),
          "hipErrorInvalidValue")
    empty = ffi.new(NODE)
    ok(lib.hipGraphAddEmptyNode(empty, g, ffi.NULL, 0))
    for node in (ffi.NULL, empty[0]):
        check(lib.hipGraphBatchMemOpNodeGetParams(node, got), "hipErrorInvalidValue")
        check(lib.hipGraphBatchMemOpNodeSetParams(node, node_params(ctx, arr2)), "hipErrorInvalidValue")
    check(lib.hipGraphBatchMemOpNodeGetParams(n[0], ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGraphBatchMemOpNodeSetParams(n[0], ffi.NULL), "hipErrorInvalidValue")
    # the executable graph's copy
    x = instantiate(g)
    arr3 = ops(("write32", d, 8))
    ok(lib.hipGraphExecBatchMemOpNodeSetParams(x, n[0], node_params(ctx, arr3)))
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    out = np.zeros(1, dtype=np.uint32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 4, lib.hipMemcpyDeviceToHost))
    assert out[0] == 8
    ok(lib.hipGraphBatchMemOpNodeGetParams(n[0], got))
    assert got.paramArray == arr2                 # the graph's node is unchanged
    check(lib.hipGraphExecBatchMemOpNodeSetParams(ffi.NULL, n[0], node_params(ctx, arr3)),
          "hipErrorInvalidValue")
    check(lib.hipGraphExecBatchMemOpNodeSetParams(x, ffi.NULL, node_params(ctx, arr3)),
          "hipErrorInvalidValue")
    check(lib.hipGraphExecBatchMemOpNodeSetParams(x, n[0], ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipGraphExecBatchMemOpNodeSetParams(x, empty[0], node_params(ctx, arr3)),
          "hipErrorInvalidValue")
    check(lib.hipGraphExecBatchMemOpNodeSetParams(x, n[0], node_params(ctx, arr3, flags=2)),
          "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
    ok(lib.hipFree(d))


def test_graph_node_untracked_address_fails_the_launch(graph_env):
    ctx, g, s = graph_env
    arr = ops(("write32", ffi.cast("void *", 0x10), 1))
    n = ffi.new(NODE)
    ok(lib.hipGraphAddBatchMemOpNode(n, g, ffi.NULL, 0, node_params(ctx, arr)))   # not checked here
    x = instantiate(g)
    check(lib.hipGraphLaunch(x, s), "hipErrorInvalidValue")
    ok(lib.hipGraphExecDestroy(x))
