"""hip-tests catch/unit/graph (rocm-6.2.0) on kernel node attributes, driver
graph nodes and capture into an existing graph, and catch/unit/stream/
hipStreamBatchMemOp.cc (6.4 on: rocm-systems projects/hip-tests, the newest
in the search index) on batch memory operations (see hiptests.py).  The stub:
hip_graph_kattr.c, hip_graph_drvnode.c, hip_capture.c.  Facts of functions
the headers do not declare are skipped."""
from __future__ import annotations

import numpy as np
import pytest
from rocm_versions import version_sensitive

from .helpers import BACKEND, ffi, hipamd, lib, malloc, name, ok
from .hiptests import Env, Fact, ids

pytestmark = [hipamd, version_sensitive,
              pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")]

N = ffi.NULL
WINDOW, COOPERATIVE = 1, 2
IV = "hipErrorInvalidValue"


class KernelEnv(Env):
    """Env with a vadd kernel node (hipcc's code object) and a context."""

    kernel_path = ""

    def kernel_node(self, graph=None):
        if not hasattr(self, "_params"):
            m = ffi.new("hipModule_t *")
            ok(lib.hipModuleLoad(m, self.kernel_path.encode()))
            self.later(lambda: lib.hipModuleUnload(m[0]))
            f = ffi.new("hipFunction_t *")
            ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
            bufs = [self.buffer(256) for _ in range(3)]
            keep = [ffi.new("void **", b) for b in bufs] + [ffi.new("int *", 64)]
            args = ffi.new("void *[4]", keep)
            p = ffi.new("hipKernelNodeParams *")
            p.func = f[0]
            p.gridDim.x = p.gridDim.y = p.gridDim.z = 1
            p.blockDim.x, p.blockDim.y, p.blockDim.z = 64, 1, 1
            p.kernelParams = args
            self._params = (p, args, keep)
        n = ffi.new("hipGraphNode_t *")
        ok(lib.hipGraphAddKernelNode(n, graph or self.graph(), N, 0, self._params[0]))
        return n[0]

    def buffer(self, size):
        p = malloc(size)
        self.later(lambda: lib.hipFree(p))
        return p

    def ctx(self):
        c = ffi.new("hipCtx_t *")
        ok(lib.hipDevicePrimaryCtxRetain(c, 0))
        self.later(lambda: lib.hipDevicePrimaryCtxRelease(0))
        return c[0]


def _minus_one(enum):
    """static_cast<enum>(-1), whichever the enum's signedness in these headers"""
    return ffi.cast(enum, -1)


def _value(window=None, cooperative=None):
    v = ffi.new("hipKernelNodeAttrValue *")
    if cooperative is not None:
        v.cooperative = cooperative
    if window is not None:
        w = v.accessPolicyWindow
        w.base_ptr, w.hitProp, w.missProp = ffi.cast("void *", 0x1000), 0, 1
        w.num_bytes, w.hitRatio = window.get("num_bytes", 0), window.get("hitRatio", 0.6)
        w.missProp = window.get("missProp", 1)
    return v


def _set_window(e, **w):
    return lib.hipGraphKernelNodeSetAttribute(e.kernel_node(), WINDOW, _value(window=w))


def _cooperative_round_trip(e):
    node = e.kernel_node()
    ok(lib.hipGraphKernelNodeSetAttribute(node, COOPERATIVE, _value(cooperative=2)))
    out = _value()
    ok(lib.hipGraphKernelNodeGetAttribute(node, COOPERATIVE, out))
    return "hipSuccess" if out.cooperative == 2 else f"cooperative {out.cooperative}"


def _window_round_trip(e):
    node = e.kernel_node()
    ok(lib.hipGraphKernelNodeSetAttribute(node, WINDOW, _value(window={})))
    out = _value()
    ok(lib.hipGraphKernelNodeGetAttribute(node, WINDOW, out))
    w = out.accessPolicyWindow
    same = abs(w.hitRatio - 0.6) < 1e-6 and w.missProp == 1 and w.base_ptr == ffi.cast("void *", 0x1000)
    return "hipSuccess" if same else "window differs"


def _copy_same_graph(e):
    g = e.graph()
    a, b = e.kernel_node(g), e.kernel_node(g)
    ok(lib.hipGraphKernelNodeSetAttribute(a, COOPERATIVE, _value(cooperative=1)))
    ok(lib.hipGraphKernelNodeCopyAttributes(a, b))
    out = _value()
    ok(lib.hipGraphKernelNodeGetAttribute(b, COOPERATIVE, out))
    return "hipSuccess" if out.cooperative == 1 else f"cooperative {out.cooperative}"


ATTRIBUTES = [
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:120",
         _cooperative_round_trip, "hipSuccess"),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:87", _window_round_trip, "hipSuccess"),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:173",
         lambda e: lib.hipGraphKernelNodeSetAttribute(N, WINDOW, _value(window={})), IV),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:179",
         lambda e: lib.hipGraphKernelNodeSetAttribute(e.empty_node(e.graph()), WINDOW,
                                                      _value(window={})), IV,
         note="hipamd checks the type from 6.2 and casts before it; the stub refuses in every release"),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:187",
         lambda e: lib.hipGraphKernelNodeSetAttribute(e.kernel_node(), _minus_one("hipKernelNodeAttrID"),
                                                      _value(window={})), IV),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:194",
         lambda e: lib.hipGraphKernelNodeSetAttribute(e.kernel_node(), WINDOW, N), IV),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:201", lambda e: _set_window(e, num_bytes=1),
         {(5, 2): "hipSuccess", (6, 2): IV},
         note="the device's accessPolicyMaxWindowSize is 0 (hip_device.cpp): any window past it"),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:208", lambda e: _set_window(e, hitRatio=-0.6),
         {(5, 2): "hipSuccess", (5, 7): IV}),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:215", lambda e: _set_window(e, hitRatio=1.1),
         {(5, 2): "hipSuccess", (5, 5): IV}),
    Fact("graph/hipGraphKernelNodeSetAttribute.cc:222", lambda e: _set_window(e, missProp=2),
         {(5, 2): "hipSuccess", (5, 5): IV}),
    Fact("graph/hipGraphKernelNodeGetAttribute.cc:53",
         lambda e: lib.hipGraphKernelNodeGetAttribute(N, WINDOW, _value()), IV),
    Fact("graph/hipGraphKernelNodeGetAttribute.cc:59",
         lambda e: lib.hipGraphKernelNodeGetAttribute(e.empty_node(e.graph()), WINDOW, _value()), IV),
    Fact("graph/hipGraphKernelNodeGetAttribute.cc:67",
         lambda e: lib.hipGraphKernelNodeGetAttribute(e.kernel_node(), _minus_one("hipKernelNodeAttrID"),
                                                      _value()), IV),
    Fact("graph/hipGraphKernelNodeGetAttribute.cc:74",
         lambda e: lib.hipGraphKernelNodeGetAttribute(e.kernel_node(), WINDOW, N), IV),
]

COPY = [
    Fact("graph/hipGraphKernelNodeCopyAttributes.cc:107", _copy_same_graph, "hipSuccess"),
    Fact("graph/hipGraphKernelNodeCopyAttributes.cc:264",
         lambda e: lib.hipGraphKernelNodeCopyAttributes(N, e.kernel_node()), IV),
    Fact("graph/hipGraphKernelNodeCopyAttributes.cc:268",
         lambda e: lib.hipGraphKernelNodeCopyAttributes(e.kernel_node(), N), IV),
    Fact("graph/hipGraphKernelNodeCopyAttributes.cc:272",
         lambda e: lib.hipGraphKernelNodeCopyAttributes(ffi.new("hipGraphNode_t *")[0],
                                                        e.kernel_node()), IV),
    Fact("graph/hipGraphKernelNodeCopyAttributes.cc:277",
         lambda e: lib.hipGraphKernelNodeCopyAttributes(e.kernel_node(),
                                                        ffi.new("hipGraphNode_t *")[0]), IV),
]


def _h2h(e, src=True, dst=True, src_device=False):
    """hip-tests' host-to-host HIP_MEMCPY3D of 16 bytes (one side's pointer left out on request)"""
    a, b = np.arange(16, dtype=np.uint8), np.zeros(16, dtype=np.uint8)
    e.later(lambda: (a, b))
    c = ffi.new("HIP_MEMCPY3D *")
    c.WidthInBytes, c.Height, c.Depth = 16, 1, 1
    c.srcMemoryType = c.dstMemoryType = lib.hipMemoryTypeHost
    if src:
        c.srcHost = ffi.from_buffer(a)
    if src_device:
        c.srcDevice = ffi.from_buffer(a)
    if dst:
        c.dstHost = ffi.from_buffer(b)
    c.srcPitch = c.dstPitch = 16
    c.srcHeight = c.dstHeight = 1
    e.later(lambda: c)
    return c


def _add_drv(e, node=True, graph=True, deps=0, params=True, ctx=True, **kw):
    n = ffi.new("hipGraphNode_t *")
    return lib.hipDrvGraphAddMemcpyNode(n if node else N, e.graph() if graph else N, N, deps,
                                        _h2h(e, **kw) if params else N, e.ctx() if ctx else N)


def _drv_node(e):
    n = ffi.new("hipGraphNode_t *")
    ok(lib.hipDrvGraphAddMemcpyNode(n, e.graph(), N, 0, _h2h(e), e.ctx()))
    return n[0]


def _h2h_runs(e):
    g = e.graph()
    c = _h2h(e)
    n = ffi.new("hipGraphNode_t *")
    ok(lib.hipDrvGraphAddMemcpyNode(n, g, N, 0, c, e.ctx()))
    s = e.stream()
    x = e.exec_of(g)
    ok(lib.hipGraphLaunch(x, s))
    ok(lib.hipStreamSynchronize(s))
    got = bytes(ffi.buffer(c.dstHost, 16))
    return "hipSuccess" if got == bytes(range(16)) else f"copied {got!r}"


def _get_destroyed(e):
    n = _drv_node(e)
    ok(lib.hipGraphDestroyNode(n))
    return lib.hipDrvGraphMemcpyNodeGetParams(n, ffi.new("HIP_MEMCPY3D *"))


DRV_ADD = [
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:107", lambda e: _add_drv(e, node=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:112", lambda e: _add_drv(e), "hipSuccess"),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:118", lambda e: _add_drv(e, graph=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:123", lambda e: _add_drv(e, params=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:128", lambda e: _add_drv(e, ctx=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:133", lambda e: _add_drv(e, deps=2 ** 31 - 1), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:138", lambda e: _add_drv(e, deps=2), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:143", lambda e: _add_drv(e, src=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:166", lambda e: _add_drv(e, dst=False), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:189",
         lambda e: _add_drv(e, src=False, src_device=True), IV),
    Fact("graph/hipDrvGraphAddMemcpyNode.cc:420", _h2h_runs, "hipSuccess"),
]

DRV_PARAMS = [
    Fact("graph/hipDrvGraphMemcpyNodeGetParams.cc:73",
         lambda e: lib.hipDrvGraphMemcpyNodeGetParams(N, ffi.new("HIP_MEMCPY3D *")), IV),
    Fact("graph/hipDrvGraphMemcpyNodeGetParams.cc:77",
         lambda e: lib.hipDrvGraphMemcpyNodeGetParams(_drv_node(e), N), IV),
    Fact("graph/hipDrvGraphMemcpyNodeGetParams.cc:84", _get_destroyed, IV),
    Fact("graph/hipDrvGraphMemcpyNodeSetParams.cc:165",
         lambda e: lib.hipDrvGraphMemcpyNodeSetParams(N, _h2h(e)), IV),
    Fact("graph/hipDrvGraphMemcpyNodeSetParams.cc:169",
         lambda e: lib.hipDrvGraphMemcpyNodeSetParams(_drv_node(e), _h2h(e, dst=False)), IV),
    Fact("graph/hipDrvGraphMemcpyNodeSetParams.cc:177",
         lambda e: lib.hipDrvGraphMemcpyNodeSetParams(_drv_node(e), _h2h(e, src=False)), IV),
]


def _capture_twice(e):
    s = e.stream()
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    status = lib.hipStreamBeginCaptureToGraph(s, e.graph(), N, N, 0, lib.hipStreamCaptureModeGlobal)
    g = ffi.new("hipGraph_t *")
    ok(lib.hipStreamEndCapture(s, g))
    ok(lib.hipGraphDestroy(g[0]))
    return status


CAPTURE = [
    Fact("graph/hipStreamBeginCaptureToGraph.cc:857",
         lambda e: lib.hipStreamBeginCaptureToGraph(e.stream(), N, N, N, 0,
                                                    lib.hipStreamCaptureModeGlobal), IV),
    Fact("graph/hipStreamBeginCaptureToGraph.cc:862",
         lambda e: lib.hipStreamBeginCaptureToGraph(e.stream(), e.graph(), N, N, 1,
                                                    lib.hipStreamCaptureModeGlobal), IV),
    Fact("graph/hipStreamBeginCaptureToGraph.cc:867",
         lambda e: lib.hipStreamBeginCaptureToGraph(e.stream(), e.graph(), N, N, 0,
                                                    _minus_one("hipStreamCaptureMode")), IV),
    Fact("graph/hipStreamBeginCaptureToGraph.cc:872", _capture_twice, "hipErrorIllegalState"),
]


def _batch(e, kind="ok"):
    """hip-tests' Unit_hipStreamBatchMemOp arrays on a 4-byte device word"""
    d = e.buffer(8)
    arr = ffi.new("hipStreamBatchMemOpParams[3]")
    e.later(lambda: arr)
    arr[0].operation = lib.hipStreamMemOpWriteValue32
    arr[0].writeValue.address, arr[0].writeValue.value = d, 1000
    arr[1].operation = lib.hipStreamMemOpWaitValue32
    arr[1].waitValue.address, arr[1].waitValue.value = d, 1000
    arr[1].waitValue.flags = lib.hipStreamWaitValueEq
    return d, arr


def _batch_call(e, stream=None, count=2, array=True, flags=0):
    _d, arr = _batch(e)
    s = e.stream() if stream is None else stream
    return lib.hipStreamBatchMemOp(s, count, arr if array else N, flags)


def _sequential(e):
    d, arr = _batch(e)
    ok(lib.hipMemset(d, 0, 8))
    arr[0].writeValue.value, arr[1].waitValue.value = 1, 1
    arr[2].operation = lib.hipStreamMemOpWriteValue32
    arr[2].writeValue.address, arr[2].writeValue.value = d, 0
    s = e.stream()
    status = lib.hipStreamBatchMemOp(s, 3, arr, 0)
    ok(lib.hipStreamSynchronize(s))
    if status != 0:
        return name(status)
    out = np.ones(1, dtype=np.uint32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, 4, lib.hipMemcpyDeviceToHost))
    return "hipSuccess" if out[0] == 0 else f"word {out[0]}"


BATCH = [
    Fact("stream/hipStreamBatchMemOp.cc:60",
         lambda e: _batch_call(e, stream=ffi.cast("hipStream_t", -1)), "hipErrorContextIsDestroyed"),
    Fact("stream/hipStreamBatchMemOp.cc:65", lambda e: _batch_call(e, array=False), IV),
    Fact("stream/hipStreamBatchMemOp.cc:69", lambda e: _batch_call(e, count=1000), IV),
    Fact("stream/hipStreamBatchMemOp.cc:73", lambda e: _batch_call(e, count=-4 & 0xFFFFFFFF), IV),
    Fact("stream/hipStreamBatchMemOp.cc:76", lambda e: _batch_call(e, count=0), IV),
    Fact("stream/hipStreamBatchMemOp.cc:80", lambda e: _batch_call(e, flags=-6 & 0xFFFFFFFF), IV),
    Fact("stream/hipStreamBatchMemOp.cc(SequentialOrdering)", _sequential,
         {(5, 0): IV, (7, 3): "hipSuccess"}, hiptests="hipSuccess",
         note="clr up to 7.2 refuses every batch (ihipBatchMemOperation's operation test is "
              "always true; rocm-systems PR #3099): clr wins"),
]


def _has(*names):
    return pytest.mark.skipif(not all(hasattr(lib, n) for n in names),
                              reason=f"{', '.join(names)}: not declared by these headers")


@pytest.fixture
def env(request):
    e = KernelEnv()
    if "hip_kernel" in request.fixturenames:
        e.kernel_path = request.getfixturevalue("hip_kernel")("vadd")
    yield e
    e.close()


@pytest.mark.parametrize("fact", ATTRIBUTES, ids=ids(ATTRIBUTES))
def test_hiptests_kernel_node_attributes(hip_kernel, env, fact):
    fact.check(env)


@_has("hipGraphKernelNodeCopyAttributes")
@pytest.mark.parametrize("fact", COPY, ids=ids(COPY))
def test_hiptests_kernel_node_copy_attributes(hip_kernel, env, fact):
    fact.check(env)


@_has("hipDrvGraphAddMemcpyNode")
@pytest.mark.parametrize("fact", DRV_ADD, ids=ids(DRV_ADD))
def test_hiptests_drv_memcpy_node(env, fact):
    fact.check(env)


@_has("hipDrvGraphMemcpyNodeGetParams")
@pytest.mark.parametrize("fact", DRV_PARAMS, ids=ids(DRV_PARAMS))
def test_hiptests_drv_memcpy_node_params(env, fact):
    fact.check(env)


@_has("hipStreamBeginCaptureToGraph")
@pytest.mark.parametrize("fact", CAPTURE, ids=ids(CAPTURE))
def test_hiptests_capture_to_graph(env, fact):
    fact.check(env)


@_has("hipStreamBatchMemOp")
@pytest.mark.parametrize("fact", BATCH, ids=ids(BATCH))
def test_hiptests_batch_mem_op(env, fact):
    fact.check(env)
