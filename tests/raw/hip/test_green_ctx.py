"""Device resources, execution (green) contexts and stream detach (clr
hipamd/src/hip_executionctx.cpp, ROCm 7.2; hip_internal.hpp's
CHECK_STREAM_DETACHED).  Stub: hip_dev_resource.c, hip_exec_ctx.c, the
detach check of hip_stream.c.  Skips where the headers declare no
hipGreenCtxCreate (every released tree up to 7.2)."""
from __future__ import annotations

import struct

import pytest

from .helpers import (check, device_count, event, ffi, hipamd, host_malloc, lib, malloc, ok, run_python,
                      stream, stub_only)

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipGreenCtxCreate"),
                                         reason="the headers declare no hipGreenCtxCreate")]

N = ffi.NULL


def device_resource(device: int = 0):
    r = ffi.new("hipDevResource *")
    ok(lib.hipDeviceGetDevResource(device, r, lib.hipDevResourceTypeSm))
    return r


def cus() -> int:
    p = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(p, 0))
    return p.multiProcessorCount


def desc_of(res, n: int = 1):
    d = ffi.new("hipDevResourceDesc_t *")
    ok(lib.hipDevResourceGenerateDesc(d, res, n))
    return d[0]


def green(res=None, n: int = 1):
    c = ffi.new("hipExecutionCtx_t *")
    ok(lib.hipGreenCtxCreate(c, desc_of(device_resource() if res is None else res, n), 0, 0))
    return c[0]


def ctx_stream(ctx, flags: int = lib.hipStreamNonBlocking, priority: int = 0):
    s = ffi.new("hipStream_t *")
    ok(lib.hipExecutionCtxStreamCreate(s, ctx, flags, priority))
    return s[0]


def tag(res) -> tuple[int, int]:
    """The runtime's tag in _internal_padding: (resource id, device)."""
    return struct.unpack("<Ii", bytes(ffi.buffer(res._internal_padding, 8)))


def split(input_res, counts, flags=None, remainder=True):
    params = ffi.new("hipDevSmResourceGroupParams[]", len(counts))
    for i, c in enumerate(counts):
        params[i].smCount = c
        if flags:
            params[i].flags = flags[i]
    out = ffi.new("hipDevResource[]", len(counts))
    rem = ffi.new("hipDevResource *") if remainder else N
    ok(lib.hipDevSmResourceSplit(out, len(counts), input_res, rem, 0, params))
    return out, rem, params


# ---- resources -------------------------------------------------------------

def test_device_resource_counts_the_devices_cus():
    r = device_resource()
    assert r.type == lib.hipDevResourceTypeSm
    assert r.sm.smCount == cus()
    assert r.sm.smCoscheduledAlignment == r.sm.minSmPartitionSize == 1   # gfx90a: no WGP mode
    assert r.nextResource == N
    assert tag(r) == (0, 0)


def test_device_resource_bad_input():
    r = ffi.new("hipDevResource *")
    check(lib.hipDeviceGetDevResource(0, N, lib.hipDevResourceTypeSm), "hipErrorInvalidValue")
    check(lib.hipDeviceGetDevResource(0, r, lib.hipDevResourceTypeWorkqueue),
          "hipErrorInvalidResourceType")
    for dev in (-1, device_count()):
        check(lib.hipDeviceGetDevResource(dev, r, lib.hipDevResourceTypeSm), "hipErrorInvalidDevice")
    # the order: the resource, then its type, then the device
    check(lib.hipDeviceGetDevResource(-1, N, lib.hipDevResourceTypeSm), "hipErrorInvalidValue")
    check(lib.hipDeviceGetDevResource(-1, r, lib.hipDevResourceTypeInvalid),
          "hipErrorInvalidResourceType")


@stub_only
def test_wgp_devices_split_in_pairs_of_cus():
    """gfx10+ runs in WGP mode: the granule is two CUs, so counts round up to
    even (ExecutionCtx::getSmAlignment, devSmResourceSplitByCount)."""
    code = """
from rocpy import hip
ffi, lib = hip.ffi, hip.lib
r = ffi.new("hipDevResource *")
assert lib.hipDeviceGetDevResource(0, r, lib.hipDevResourceTypeSm) == 0
n = ffi.new("unsigned int *")
assert lib.hipDevSmResourceSplitByCount(ffi.NULL, n, r, ffi.NULL, 0, 5) == 0
out = ffi.new("hipDevResource[2]")
rem = ffi.new("hipDevResource *")
n[0] = 2
assert lib.hipDevSmResourceSplitByCount(out, n, r, rem, 0, 5) == 0
print(r.sm.smCount, r.sm.smCoscheduledAlignment, n[0], out[0].sm.smCount, rem.sm.smCount)
"""
    got = run_python(code, ROCPY_STUB_ARCH="gfx1100")
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["96", "2", "2", "6", "84"]


def test_split_by_count_rounds_and_counts():
    r = device_resource()
    total = r.sm.smCount
    n = ffi.new("unsigned int *")
    ok(lib.hipDevSmResourceSplitByCount(N, n, r, N, 0, 10))
    assert n[0] == total // 10
    ok(lib.hipDevSmResourceSplitByCount(N, n, r, N, 0, 0))     # 0: one granule
    assert n[0] == total
    out = ffi.new("hipDevResource[3]")
    rem = ffi.new("hipDevResource *")
    n[0] = 3
    ok(lib.hipDevSmResourceSplitByCount(out, n, r, rem, 0, 10))
    assert n[0] == 3
    assert [out[i].sm.smCount for i in range(3)] == [10, 10, 10]
    assert rem.type == lib.hipDevResourceTypeSm and rem.sm.smCount == total - 30
    ids = [tag(out[i])[0] for i in range(3)] + [tag(rem[0])[0]]
    assert 0 not in ids and len(set(ids)) == 4
    # more groups asked than fit: as many as fit; nothing left: an invalid remainder
    n[0] = 1000
    big = ffi.new("hipDevResource[]", total)
    ok(lib.hipDevSmResourceSplitByCount(big, n, r, rem, 0, 1))
    assert n[0] == total and rem.type == lib.hipDevResourceTypeInvalid


def test_split_by_count_bad_input():
    r = device_resource()
    n = ffi.new("unsigned int *", 2)
    check(lib.hipDevSmResourceSplitByCount(N, N, r, N, 0, 2), "hipErrorInvalidValue")
    check(lib.hipDevSmResourceSplitByCount(N, n, N, N, 0, 2), "hipErrorInvalidValue")
    bad = ffi.new("hipDevResource *", r[0])
    bad.type = lib.hipDevResourceTypeInvalid
    check(lib.hipDevSmResourceSplitByCount(N, n, bad, N, 0, 2), "hipErrorInvalidResourceType")
    check(lib.hipDevSmResourceSplitByCount(N, n, r, N, lib.hipDevSmResourceSplitIgnoreSmCoscheduling, 2),
          "hipErrorNotSupported")
    # a resource the runtime did not make: alignment 0 (clr would divide by it)
    made = ffi.new("hipDevResource *")
    made.type = lib.hipDevResourceTypeSm
    made.sm.smCount = 8
    check(lib.hipDevSmResourceSplitByCount(N, n, made, N, 0, 2), "hipErrorInvalidResourceConfiguration")
    # a negative device in the tag
    neg = ffi.new("hipDevResource *", r[0])
    ffi.buffer(neg._internal_padding, 8)[4:8] = struct.pack("<i", -1)
    out = ffi.new("hipDevResource[2]")
    check(lib.hipDevSmResourceSplitByCount(out, n, neg, N, 0, 2), "hipErrorInvalidDevice")


def test_split_groups_discovery_and_backfill():
    r = device_resource()
    total = r.sm.smCount
    out, rem, _ = split(r, [8, 16])
    assert [out[0].sm.smCount, out[1].sm.smCount] == [8, 16]
    assert rem.sm.smCount == total - 24
    # discovery: 0 takes what is left; the count is written back
    out, rem, params = split(r, [8, 0])
    assert params[1].smCount == total - 8 and out[1].sm.smCount == total - 8
    assert rem.type == lib.hipDevResourceTypeInvalid
    out, rem, params = split(r, [10, 0], flags=[0, lib.hipDevSmResourceGroupBackfill])
    assert out[1].sm.smCount == total - 10
    assert out[1].sm.flags == lib.hipDevSmResourceGroupBackfill


def test_split_bad_input():
    r = device_resource()
    out = ffi.new("hipDevResource[2]")
    params = ffi.new("hipDevSmResourceGroupParams[2]")
    params[0].smCount = params[1].smCount = 2
    check(lib.hipDevSmResourceSplit(out, 2, N, N, 0, params), "hipErrorInvalidValue")
    check(lib.hipDevSmResourceSplit(out, 2, r, N, 0, N), "hipErrorInvalidValue")
    check(lib.hipDevSmResourceSplit(out, 2, r, N, 1, params), "hipErrorInvalidValue")
    bad = ffi.new("hipDevResource *", r[0])
    bad.type = lib.hipDevResourceTypeInvalid
    check(lib.hipDevSmResourceSplit(out, 2, bad, N, 0, params), "hipErrorInvalidResourceType")
    params[0].smCount = r.sm.smCount + 1
    check(lib.hipDevSmResourceSplit(out, 2, r, N, 0, params), "hipErrorInvalidResourceConfiguration")
    params[0].smCount = r.sm.smCount
    check(lib.hipDevSmResourceSplit(out, 2, r, N, 0, params), "hipErrorInvalidResourceConfiguration")


def test_generate_desc_rules():
    r = device_resource()
    d = ffi.new("hipDevResourceDesc_t *")
    check(lib.hipDevResourceGenerateDesc(N, r, 1), "hipErrorInvalidValue")
    check(lib.hipDevResourceGenerateDesc(d, N, 1), "hipErrorInvalidValue")
    check(lib.hipDevResourceGenerateDesc(d, r, 0), "hipErrorInvalidValue")
    bad = ffi.new("hipDevResource *", r[0])
    bad.type = lib.hipDevResourceTypeWorkqueueConfig
    check(lib.hipDevResourceGenerateDesc(d, bad, 1), "hipErrorInvalidResourceType")
    empty = ffi.new("hipDevResource *", r[0])
    empty.sm.smCount = 0
    check(lib.hipDevResourceGenerateDesc(d, empty, 1), "hipErrorInvalidResourceConfiguration")
    # pieces of two different splits are refused, pieces of one accepted
    a, _, _ = split(r, [4, 4])
    b, _, _ = split(r, [4])
    both = ffi.new("hipDevResource[2]", [a[0], b[0]])
    check(lib.hipDevResourceGenerateDesc(d, both, 2), "hipErrorInvalidResourceConfiguration")
    ok(lib.hipDevResourceGenerateDesc(d, a, 2))


# ---- contexts ---------------------------------------------------------------

def test_green_context_lifecycle_and_queries():
    out, _, _ = split(device_resource(), [6, 10])
    ctx = green(out, 2)
    dev = ffi.new("int *", -1)
    ok(lib.hipExecutionCtxGetDevice(dev, ctx))
    assert dev[0] == 0
    ids = ffi.new("unsigned long long[2]")
    ok(lib.hipExecutionCtxGetId(ctx, ids))
    other = green()
    ok(lib.hipExecutionCtxGetId(other, ids + 1))
    assert ids[1] > ids[0]
    res = ffi.new("hipDevResource[2]")
    ok(lib.hipExecutionCtxGetDevResource(ctx, res, lib.hipDevResourceTypeSm))
    assert [res[0].sm.smCount, res[1].sm.smCount] == [6, 10]
    assert res[0].nextResource == res + 1 and res[1].nextResource == N
    check(lib.hipExecutionCtxGetDevResource(ctx, res, lib.hipDevResourceTypeWorkqueue),
          "hipErrorInvalidResourceType")
    ok(lib.hipExecutionCtxDestroy(other))
    ok(lib.hipExecutionCtxDestroy(ctx))


def test_context_streams_get_the_contexts_cus():
    """The stream's CU mask covers the resources' CUs (ExecutionCtx::Create's
    buildCuMask): a split's second piece starts after the first."""
    out, _, _ = split(device_resource(), [6, 10])
    ctx = green(out + 1, 1)
    s = ctx_stream(ctx)
    words = (cus() + 31) // 32
    mask = ffi.new("uint32_t[]", words)
    ok(lib.hipExtStreamGetCUMask(s, words, mask))
    assert mask[0] == ((1 << 10) - 1) << 6
    r = ffi.new("hipDevResource *")
    ok(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeSm))
    assert r.sm.smCount == 10
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipExecutionCtxDestroy(ctx))


def test_stream_dev_resource_of_plain_streams():
    r = ffi.new("hipDevResource *")
    ok(lib.hipStreamGetDevResource(N, r, lib.hipDevResourceTypeSm))
    assert r.sm.smCount == cus()
    s = stream()
    ok(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeSm))
    assert r.sm.smCount == cus()
    check(lib.hipStreamGetDevResource(s, N, lib.hipDevResourceTypeSm), "hipErrorInvalidValue")
    check(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeWorkqueueConfig),
          "hipErrorInvalidResourceType")
    check(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeInvalid),
          "hipErrorInvalidResourceType")
    ok(lib.hipStreamDestroy(s))
    check(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeSm), "hipErrorInvalidHandle")


def test_context_bad_input():
    desc = desc_of(device_resource())
    c = ffi.new("hipExecutionCtx_t *")
    check(lib.hipGreenCtxCreate(N, desc, 0, 0), "hipErrorInvalidValue")
    check(lib.hipGreenCtxCreate(c, N, 0, 0), "hipErrorInvalidValue")
    check(lib.hipGreenCtxCreate(c, desc, 0, 1), "hipErrorInvalidValue")
    check(lib.hipGreenCtxCreate(c, desc, -1, 0), "hipErrorInvalidDevice")
    check(lib.hipGreenCtxCreate(c, ffi.cast("hipDevResourceDesc_t", 0x1234), 0, 0), "hipErrorInvalidValue")
    if device_count() > 1:
        check(lib.hipGreenCtxCreate(c, desc, 1, 0), "hipErrorInvalidDevice")   # desc of device 0
    ok(lib.hipGreenCtxCreate(c, desc, 0, 0))
    ctx = c[0]
    s = ffi.new("hipStream_t *")
    check(lib.hipExecutionCtxStreamCreate(N, ctx, 0, 0), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxStreamCreate(s, N, 0, 0), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxStreamCreate(s, ctx, 0xFFFFFFFF, 0), "hipErrorInvalidValue")
    i = ffi.new("int *")
    u = ffi.new("unsigned long long *")
    r = ffi.new("hipDevResource *")
    check(lib.hipExecutionCtxGetDevice(N, ctx), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxGetDevice(i, N), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxGetId(ctx, N), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxGetDevResource(ctx, N, lib.hipDevResourceTypeSm), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxSynchronize(N), "hipErrorInvalidValue")
    e = event()
    check(lib.hipExecutionCtxRecordEvent(N, e), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxRecordEvent(ctx, N), "hipErrorInvalidHandle")
    check(lib.hipExecutionCtxWaitEvent(ctx, N), "hipErrorInvalidHandle")
    check(lib.hipExecutionCtxDestroy(N), "hipErrorInvalidValue")
    ok(lib.hipExecutionCtxDestroy(ctx))
    # a destroyed context is refused (clr would use the freed object)
    check(lib.hipExecutionCtxDestroy(ctx), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxStreamCreate(s, ctx, 0, 0), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxGetId(ctx, u), "hipErrorInvalidValue")
    check(lib.hipExecutionCtxGetDevResource(ctx, r, lib.hipDevResourceTypeSm), "hipErrorInvalidValue")
    # its descriptor went with it
    check(lib.hipGreenCtxCreate(c, desc, 0, 0), "hipErrorInvalidValue")
    ok(lib.hipEventDestroy(e))


def test_primary_context():
    p = ffi.new("hipExecutionCtx_t[2]")
    ok(lib.hipDeviceGetExecutionCtx(p, 0))
    ok(lib.hipDeviceGetExecutionCtx(p + 1, 0))
    assert p[0] == p[1]
    r = ffi.new("hipDevResource *")
    ok(lib.hipExecutionCtxGetDevResource(p[0], r, lib.hipDevResourceTypeSm))
    assert r.sm.smCount == cus()
    check(lib.hipExecutionCtxDestroy(p[0]), "hipErrorInvalidValue")     # the device's
    check(lib.hipDeviceGetExecutionCtx(N, 0), "hipErrorInvalidValue")
    check(lib.hipDeviceGetExecutionCtx(p, -1), "hipErrorInvalidDevice")
    ok(lib.hipExecutionCtxSynchronize(p[0]))


def test_context_work_sync_record_and_wait():
    """Work on a context's streams runs; hipExecutionCtxSynchronize waits for
    it; an event recorded on the context follows every one of its streams."""
    ctx = green()
    a, b = ctx_stream(ctx), ctx_stream(ctx)
    n = 1 << 16
    src = host_malloc(n)
    ffi.memmove(src, bytes(range(256)) * (n // 256), n)
    dev = malloc(n)
    dst = host_malloc(n)
    ok(lib.hipMemcpyAsync(dev, src, n, lib.hipMemcpyHostToDevice, a))
    ok(lib.hipMemsetAsync(dst, 7, n, b))
    e = event()
    ok(lib.hipExecutionCtxRecordEvent(ctx, e))
    ok(lib.hipEventSynchronize(e))
    assert bytes(ffi.buffer(dst, 4)) == b"\x07" * 4
    ok(lib.hipExecutionCtxWaitEvent(ctx, e))
    ok(lib.hipMemcpyAsync(dst, dev, n, lib.hipMemcpyDeviceToHost, a))
    ok(lib.hipExecutionCtxSynchronize(ctx))
    assert bytes(ffi.buffer(dst, n)) == bytes(range(256)) * (n // 256)
    empty = green()
    ok(lib.hipExecutionCtxRecordEvent(empty, e))      # no streams: nothing recorded
    ok(lib.hipExecutionCtxDestroy(empty))
    for s in (a, b):
        ok(lib.hipStreamDestroy(s))
    ok(lib.hipExecutionCtxDestroy(ctx))
    ok(lib.hipEventDestroy(e))
    for p in (src, dst):
        ok(lib.hipHostFree(p))
    ok(lib.hipFree(dev))


# ---- detach -----------------------------------------------------------------

def detached_stream():
    ctx = green()
    s = ctx_stream(ctx)
    ok(lib.hipExecutionCtxDestroy(ctx))
    return s


def test_detached_stream_refuses_work_and_sync():
    """Fails without the detach check: the stream would still run work."""
    s = detached_stream()
    d = malloc(64)
    h = host_malloc(64)
    e = event()
    refused = {
        "hipStreamSynchronize": lambda: lib.hipStreamSynchronize(s),
        "hipStreamQuery": lambda: lib.hipStreamQuery(s),
        "hipStreamWaitEvent": lambda: lib.hipStreamWaitEvent(s, e, 0),
        "hipEventRecord": lambda: lib.hipEventRecord(e, s),
        "hipMemcpyAsync": lambda: lib.hipMemcpyAsync(d, h, 64, lib.hipMemcpyHostToDevice, s),
        "hipMemcpyHtoDAsync": lambda: lib.hipMemcpyHtoDAsync(d, h, 64, s),
        "hipMemcpyDtoHAsync": lambda: lib.hipMemcpyDtoHAsync(h, d, 64, s),
        "hipMemcpyDtoDAsync": lambda: lib.hipMemcpyDtoDAsync(d, d, 64, s),
        "hipMemcpy2DAsync": lambda: lib.hipMemcpy2DAsync(d, 8, h, 8, 8, 8, lib.hipMemcpyHostToDevice, s),
        "hipMemcpy3DAsync": lambda: lib.hipMemcpy3DAsync(ffi.new("hipMemcpy3DParms *"), s),
        "hipDrvMemcpy3DAsync": lambda: lib.hipDrvMemcpy3DAsync(ffi.new("HIP_MEMCPY3D *"), s),
        "hipMemsetAsync": lambda: lib.hipMemsetAsync(d, 0, 64, s),
        "hipMemsetD8Async": lambda: lib.hipMemsetD8Async(d, 0, 64, s),
        "hipMemsetD16Async": lambda: lib.hipMemsetD16Async(d, 0, 32, s),
        "hipMemsetD32Async": lambda: lib.hipMemsetD32Async(d, 0, 16, s),
        "hipMemset2DAsync": lambda: lib.hipMemset2DAsync(d, 8, 0, 8, 8, s),
        "hipMallocAsync": lambda: lib.hipMallocAsync(ffi.new("void **"), 64, s),
        "hipFreeAsync": lambda: lib.hipFreeAsync(d, s),
        "hipStreamBeginCapture": lambda: lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeRelaxed),
        "hipStreamEndCapture": lambda: lib.hipStreamEndCapture(s, ffi.new("hipGraph_t *")),
        "hipModuleLaunchKernel": lambda: lib.hipModuleLaunchKernel(N, 1, 1, 1, 1, 1, 1, 0, s, N, N),
    }
    for name_, call in refused.items():
        got = call()
        check(got, "hipErrorStreamDetached")
        assert lib.hipGetLastError() == lib.hipErrorStreamDetached, name_
    fn = ffi.callback("void(void *)", lambda _u: None)
    check(lib.hipLaunchHostFunc(s, fn, N), "hipErrorStreamDetached")
    g = ffi.new("hipGraph_t *")
    ok(lib.hipGraphCreate(g, 0))
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g[0], N, N, 0))
    check(lib.hipGraphLaunch(x[0], s), "hipErrorStreamDetached")
    ok(lib.hipGraphExecDestroy(x[0]))
    ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))          # still destroyable
    ok(lib.hipEventDestroy(e))
    ok(lib.hipFree(d))
    ok(lib.hipHostFree(h))


def test_detached_stream_keeps_its_metadata():
    ctx = green()
    s = ctx_stream(ctx, lib.hipStreamNonBlocking, -1)
    before = ffi.new("unsigned int *"), ffi.new("int *")
    ok(lib.hipStreamGetFlags(s, before[0]))
    ok(lib.hipStreamGetPriority(s, before[1]))
    ok(lib.hipExecutionCtxDestroy(ctx))
    after = ffi.new("unsigned int *"), ffi.new("int *")
    ok(lib.hipStreamGetFlags(s, after[0]))
    ok(lib.hipStreamGetPriority(s, after[1]))
    assert (after[0][0], after[1][0]) == (before[0][0], before[1][0]) == (lib.hipStreamNonBlocking, -1)
    r = ffi.new("hipDevResource *")
    ok(lib.hipStreamGetDevResource(s, r, lib.hipDevResourceTypeSm))
    ok(lib.hipStreamDestroy(s))


def test_destroy_invalidates_an_active_capture_and_its_forks():
    ctx = green()
    origin, fork = ctx_stream(ctx), ctx_stream(ctx)
    regular = stream()
    e = event()
    ok(lib.hipStreamBeginCapture(origin, lib.hipStreamCaptureModeRelaxed))
    ok(lib.hipEventRecord(e, origin))
    ok(lib.hipStreamWaitEvent(fork, e, 0))
    ok(lib.hipStreamBeginCapture(regular, lib.hipStreamCaptureModeRelaxed))
    status = ffi.new("hipStreamCaptureStatus *")
    ok(lib.hipExecutionCtxDestroy(ctx))
    for s in (origin, fork):
        ok(lib.hipStreamIsCapturing(s, status))          # not guarded
        assert status[0] == lib.hipStreamCaptureStatusInvalidated
    g = ffi.new("hipGraph_t *")
    check(lib.hipStreamEndCapture(origin, g), "hipErrorStreamDetached")
    ok(lib.hipStreamIsCapturing(regular, status))
    assert status[0] == lib.hipStreamCaptureStatusActive
    ok(lib.hipStreamEndCapture(regular, g))
    ok(lib.hipGraphDestroy(g[0]))
    for s in (origin, fork, regular):
        ok(lib.hipStreamDestroy(s))
    ok(lib.hipEventDestroy(e))


def test_only_the_destroyed_contexts_streams_detach():
    out, _, _ = split(device_resource(), [8, 8])
    c1, c2 = green(out, 1), green(out + 1, 1)
    s1, s2 = ctx_stream(c1), ctx_stream(c2)
    regular = stream()
    ok(lib.hipExecutionCtxDestroy(c1))
    check(lib.hipStreamSynchronize(s1), "hipErrorStreamDetached")
    ok(lib.hipStreamSynchronize(s2))
    ok(lib.hipStreamSynchronize(regular))
    for default in (N, ffi.cast("hipStream_t", 2)):        # null, per-thread: never detach
        ok(lib.hipStreamSynchronize(default))
    ok(lib.hipExecutionCtxDestroy(c2))
    check(lib.hipStreamQuery(s2), "hipErrorStreamDetached")
    for s in (s1, s2, regular):
        ok(lib.hipStreamDestroy(s))


def test_stream_destroyed_before_its_context():
    ctx = green()
    s = ctx_stream(ctx)
    ok(lib.hipStreamDestroy(s))
    check(lib.hipStreamSynchronize(s), "hipErrorContextIsDestroyed")   # gone, not detached
    ok(lib.hipExecutionCtxSynchronize(ctx))
    ok(lib.hipExecutionCtxDestroy(ctx))
