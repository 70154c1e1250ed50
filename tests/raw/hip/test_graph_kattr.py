"""Kernel node attributes: hipGraphKernelNodeSetAttribute, GetAttribute and
CopyAttributes (hipamd hip_graph.cpp; stub: hip_graph_kattr.c).

The rules that changed by release are written once with their values
(STUB_RULE_KERNEL_ATTR_IN_USE 5.5, _WINDOW_LIMITS 5.7, _PRIORITY 6.2)."""
from __future__ import annotations

import numpy as np
import pytest
from rocm_versions import expect, version_sensitive

from .helpers import BACKEND, check, ffi, hipamd, lib, malloc, ok, stream

pytestmark = [hipamd, version_sensitive,
              pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")]

WINDOW, COOPERATIVE, PRIORITY = 1, 2, 8          # hipKernelNodeAttrID / hipLaunchAttributeID
PERSISTING = 2                                   # hipAccessPropertyPersisting
N = 64


@pytest.fixture
def kernel(hip_kernel):
    """(graph, kernel node running vadd on N ints, buffers); all freed after."""
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("vadd").encode()))
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    bufs = [malloc(4 * N) for _ in range(3)]
    keep = [ffi.new("void **", b) for b in bufs] + [ffi.new("int *", N)]
    args = ffi.new("void *[4]", keep)
    p = ffi.new("hipKernelNodeParams *")
    p.func = f[0]
    p.gridDim.x = p.gridDim.y = p.gridDim.z = 1
    p.blockDim.x, p.blockDim.y, p.blockDim.z = N, 1, 1
    p.kernelParams = args
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))

    def add(graph=None):
        node = ffi.new("hipGraphNode_t *")
        ok(lib.hipGraphAddKernelNode(node, graph or g[0], ffi.NULL, 0, p))
        return node[0]
    yield g[0], add, bufs
    lib.hipGraphDestroy(g[0])
    for b in bufs:
        ok(lib.hipFree(b))
    ok(lib.hipModuleUnload(m[0]))
    del keep, args


def value(**fields):
    v = ffi.new("hipKernelNodeAttrValue *")
    for k, x in fields.items():
        if k == "window":
            for wk, wx in x.items():
                setattr(v.accessPolicyWindow, wk, wx)
        else:
            setattr(v, k, x)
    return v


def window(**kw):
    w = {"base_ptr": ffi.cast("void *", 0x1000), "num_bytes": 0, "hitRatio": 0.5,
         "hitProp": 0, "missProp": 0}
    w.update(kw)
    return value(window=w)


def set_attr(node, attr, v):
    return lib.hipGraphKernelNodeSetAttribute(node, attr, v)


def get_attr(node, attr, v):
    return lib.hipGraphKernelNodeGetAttribute(node, attr, v)


def test_cooperative_round_trip_and_the_node_still_runs(kernel):
    g, add, (a, b, c) = kernel
    node = add()
    ok(set_attr(node, COOPERATIVE, value(cooperative=2)))
    out = value()
    ok(get_attr(node, COOPERATIVE, out))
    assert out.cooperative == 2
    # nothing at execution reads the attribute (hipamd): the node runs as before
    x = np.arange(N, dtype=np.int32)
    ok(lib.hipMemcpy(a, ffi.from_buffer(x), 4 * N, 1))
    ok(lib.hipMemcpy(b, ffi.from_buffer(x), 4 * N, 1))
    s = stream()
    e = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(e, g, ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(e[0], s))
    ok(lib.hipStreamSynchronize(s))
    got = np.zeros(N, dtype=np.int32)
    ok(lib.hipMemcpy(ffi.from_buffer(got), c, 4 * N, 2))
    assert (got == 2 * x).all()
    ok(lib.hipGraphExecDestroy(e[0]))
    ok(lib.hipStreamDestroy(s))


def test_window_round_trip(kernel):
    _g, add, _ = kernel
    node = add()
    ok(set_attr(node, WINDOW, window(hitRatio=0.6, hitProp=1, missProp=1)))
    out = value()
    ok(get_attr(node, WINDOW, out))
    w = out.accessPolicyWindow
    assert int(ffi.cast("uintptr_t", w.base_ptr)) == 0x1000
    assert abs(w.hitRatio - 0.6) < 1e-6 and w.hitProp == 1 and w.missProp == 1


def test_null_arguments_and_unknown_attributes(kernel):
    g, add, _ = kernel
    node = add()
    v = value()
    for call in (set_attr, get_attr):
        check(call(ffi.NULL, COOPERATIVE, v), "hipErrorInvalidValue")
        check(call(node, COOPERATIVE, ffi.NULL), "hipErrorInvalidValue")
        check(call(node, 0, v), "hipErrorInvalidValue")
        check(call(node, 5, v), "hipErrorInvalidValue")
        check(lib.hipGetLastError(), "hipErrorInvalidValue")
    empty = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(empty, g, ffi.NULL, 0))
    # not a kernel node (hipamd checks from 6.2, casts before; the stub refuses)
    check(set_attr(empty[0], COOPERATIVE, v), "hipErrorInvalidValue")
    check(get_attr(empty[0], COOPERATIVE, v), "hipErrorInvalidValue")
    ok(lib.hipGraphDestroyNode(node))
    check(set_attr(node, COOPERATIVE, v), "hipErrorInvalidValue")


def test_priority_is_known_from_6_2_and_every_value_refused(kernel):
    _g, add, _ = kernel
    node = add()
    v = value()
    # clr f40c380cd: `priority < Low (1) || priority > High (-1)` is always true
    prio = ffi.cast("int *", v)                   # the union's priority (6.0+ headers)
    for p in (-1, 0, 1):
        prio[0] = p
        check(set_attr(node, PRIORITY, v), "hipErrorInvalidValue")
    check(get_attr(node, PRIORITY, v), expect({(5, 2): "hipErrorInvalidValue", (6, 2): "hipSuccess"}))


def test_window_checks_by_release(kernel):
    _g, add, _ = kernel
    node = add()
    check(set_attr(node, WINDOW, window(hitRatio=1.5)),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    check(set_attr(node, WINDOW, window(hitRatio=-0.5)),
          expect({(5, 2): "hipSuccess", (5, 7): "hipErrorInvalidValue"}))
    check(set_attr(node, WINDOW, window(missProp=PERSISTING)),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    check(set_attr(node, WINDOW, window(num_bytes=16, hitRatio=0.0)),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    # the maximum window: 1024 bytes in 5.7-6.1, the device's (0) from 6.2
    check(set_attr(node, WINDOW, window(num_bytes=1024)),
          expect({(5, 2): "hipSuccess", (5, 7): "hipErrorInvalidValue"}))
    check(set_attr(node, WINDOW, window(num_bytes=16)),
          expect({(5, 2): "hipSuccess", (6, 2): "hipErrorInvalidValue"}))
    # 5.3-5.4 refused a NULL base pointer, Set and Get (hipErrorInvalidResourceHandle, 400)
    check(set_attr(node, WINDOW, window(base_ptr=ffi.NULL)),
          expect({(5, 2): "hipErrorInvalidHandle", (5, 5): "hipSuccess"}))


def test_one_attribute_in_use(kernel):
    _g, add, _ = kernel
    node = add()
    out = value()
    ok(set_attr(node, COOPERATIVE, value(cooperative=1)))
    # from 5.5 the node answers only for the attribute it was given; before,
    # the window is read from the union, whose base_ptr the cooperative int
    # overlays (so it is not NULL)
    check(get_attr(node, WINDOW, out),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidValue"}))
    ok(get_attr(node, COOPERATIVE, out))
    assert out.cooperative == 1


def test_attributes_follow_clones_and_instantiation(kernel):
    g, add, _ = kernel
    node = add()
    ok(set_attr(node, COOPERATIVE, value(cooperative=3)))
    clone = ffi.new("hipGraph_t *")
    ok(lib.hipGraphClone(clone, g))
    twin = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphNodeFindInClone(twin, node, clone[0]))
    out = value()
    ok(get_attr(twin[0], COOPERATIVE, out))
    assert out.cooperative == 3
    ok(lib.hipGraphDestroy(clone[0]))


@pytest.mark.skipif(not hasattr(lib, "hipGraphKernelNodeCopyAttributes"),
                    reason="hipGraphKernelNodeCopyAttributes: headers of 5.7 on")
def test_copy_attributes(kernel):
    g, add, _ = kernel
    src, dst, other = add(), add(), add()
    ok(lib.hipGraphKernelNodeCopyAttributes(src, dst))          # neither has one
    ok(set_attr(src, COOPERATIVE, value(cooperative=4)))
    ok(lib.hipGraphKernelNodeCopyAttributes(src, dst))
    out = value()
    ok(get_attr(dst, COOPERATIVE, out))
    assert out.cooperative == 4
    # into another graph
    g2 = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g2, 0))
    far = add(g2[0])
    ok(lib.hipGraphKernelNodeCopyAttributes(src, far))
    ok(get_attr(far, COOPERATIVE, out))
    assert out.cooperative == 4
    ok(lib.hipGraphDestroy(g2[0]))
    # a destination holding another attribute: hipErrorInvalidContext
    ok(set_attr(other, WINDOW, window()))
    check(lib.hipGraphKernelNodeCopyAttributes(src, other), "hipErrorInvalidContext")
    check(lib.hipGraphKernelNodeCopyAttributes(ffi.NULL, dst), "hipErrorInvalidValue")
    check(lib.hipGraphKernelNodeCopyAttributes(src, ffi.NULL), "hipErrorInvalidValue")
    empty = ffi.new("hipGraphNode_t *")
    ok(lib.hipGraphAddEmptyNode(empty, g, ffi.NULL, 0))
    check(lib.hipGraphKernelNodeCopyAttributes(src, empty[0]), "hipErrorInvalidValue")
