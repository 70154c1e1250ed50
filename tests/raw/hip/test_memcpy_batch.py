"""hipMemcpy3DPeer(+Async), hipMemcpyBatchAsync, hipMemcpy3DBatchAsync (7.x
headers; hipamd hip_memory.cpp hipMemcpyBatchAsync / ihipMemcpyBatch /
hipMemcpy3DBatchAsync; stub: rocpy/_native/stub/hip_memcpy_batch.c)."""
from __future__ import annotations

import numpy as np
import pytest
from rocm_versions import expect, version_sensitive

from .helpers import check, device_count, ffi, hipamd, lib, malloc, ok, stream

pytestmark = hipamd
SIZE_MAX = (1 << 64) - 1
needs_peer = pytest.mark.skipif(not hasattr(lib, "hipMemcpy3DPeer"), reason="7.x headers")
needs_batch = pytest.mark.skipif(not hasattr(lib, "hipMemcpyBatchAsync"), reason="7.x headers")


def pitched_ptr(ptr, pitch, xsize, ysize):
    p = ffi.new("hipPitchedPtr *")
    p.ptr, p.pitch, p.xsize, p.ysize = ptr, pitch, xsize, ysize
    return p[0]


def host_bytes(n, start=0):
    return (np.arange(n) + start).astype(np.uint8)


def to_host(dev, n):
    out = np.zeros(n, np.uint8)
    ok(lib.hipMemcpy(ffi.from_buffer(out), dev, n, lib.hipMemcpyDeviceToHost))
    return out


def peer_parms(src, dst, w, h, d, src_dev=0, dst_dev=0):
    p = ffi.new("hipMemcpy3DPeerParms *")
    p.srcPtr = pitched_ptr(src, w, w, h)
    p.dstPtr = pitched_ptr(dst, w, w, h)
    p.srcDevice, p.dstDevice = src_dev, dst_dev
    p.extent.width, p.extent.height, p.extent.depth = w, h, d
    return p


@needs_peer
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_3d_peer_copies_a_box(asynchronous):
    w, h, d = 16, 4, 3
    src_host = host_bytes(w * h * d)
    src, dst = malloc(w * h * d), malloc(w * h * d)
    ok(lib.hipMemcpy(src, ffi.from_buffer(src_host), src_host.nbytes, lib.hipMemcpyHostToDevice))
    dst_dev = 1 if device_count() > 1 else 0
    p = peer_parms(src, dst, w, h, d, 0, dst_dev)
    if asynchronous:
        s = stream()
        ok(lib.hipMemcpy3DPeerAsync(p, s))
        ok(lib.hipStreamSynchronize(s))
        ok(lib.hipStreamDestroy(s))
    else:
        ok(lib.hipMemcpy3DPeer(p))
    assert (to_host(dst, src_host.nbytes) == src_host).all()
    ok(lib.hipFree(src))
    ok(lib.hipFree(dst))


@needs_peer
@version_sensitive
def test_3d_peer_bad_arguments():
    src, dst = malloc(64), malloc(64)
    check(lib.hipMemcpy3DPeer(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemcpy3DPeerAsync(ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    for sd, dd in ((device_count(), 0), (0, device_count()), (-1, 0)):
        check(lib.hipMemcpy3DPeer(peer_parms(src, dst, 8, 2, 1, sd, dd)), "hipErrorInvalidDevice")
    # the 3-D copy's own checks: a pitch below the row (from 5.5,
    # STUB_RULE_MEMCPY3D_PITCH_BELOW_ROW), a box past the allocation
    p = peer_parms(src, dst, 8, 2, 1)
    p.srcPtr.pitch = p.extent.width = 4
    check(lib.hipMemcpy3DPeer(p),
          expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidPitchValue"}))
    p = peer_parms(src, dst, 8, 8, 2)
    check(lib.hipMemcpy3DPeer(p), "hipErrorInvalidValue")
    ok(lib.hipFree(src))
    ok(lib.hipFree(dst))


def arrays(*values):
    return [ffi.new("void *[]", list(values))]


@needs_batch
def test_batch_copies_every_pair_and_sets_fail_index_to_size_max():
    n = 3
    host = [host_bytes(32, 10 * i) for i in range(n)]
    back = [np.zeros(32, np.uint8) for _ in range(n)]
    dev = [malloc(32) for _ in range(n)]
    s = stream()
    fail = ffi.new("size_t *", 7)
    sizes = ffi.new("size_t[]", [32] * n)
    srcs = ffi.new("void *[]", [ffi.from_buffer(h) for h in host])
    dsts = ffi.new("void *[]", dev)
    ok(lib.hipMemcpyBatchAsync(dsts, srcs, sizes, n, ffi.NULL, ffi.NULL, 0, fail, s))
    assert fail[0] == SIZE_MAX
    # device to host with one attribute for all copies
    attrs = ffi.new("hipMemcpyAttributes[1]")
    attrs[0].srcAccessOrder = lib.hipMemcpySrcAccessOrderStream
    idxs = ffi.new("size_t[1]", [0])
    srcs2 = ffi.new("void *[]", dev)
    dsts2 = ffi.new("void *[]", [ffi.from_buffer(b) for b in back])
    ok(lib.hipMemcpyBatchAsync(dsts2, srcs2, sizes, n, attrs, idxs, 1, fail, s))
    ok(lib.hipStreamSynchronize(s))
    for h, b in zip(host, back):
        assert (h == b).all()
    ok(lib.hipStreamDestroy(s))
    for d in dev:
        ok(lib.hipFree(d))


@needs_batch
def test_batch_bad_arguments_in_hipamds_order():
    B = lib.hipMemcpyBatchAsync
    d, h = malloc(16), np.zeros(16, np.uint8)
    ok(lib.hipMemset(d, 0, 16))
    dsts = ffi.new("void *[]", [d, d])
    srcs = ffi.new("void *[]", [ffi.from_buffer(h), ffi.from_buffer(h)])
    sizes = ffi.new("size_t[]", [16, 16])
    fail = ffi.new("size_t *", 99)
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    N = ffi.NULL
    check(B(dsts, srcs, sizes, 2, N, N, 0, fail, dead), "hipErrorInvalidHandle")
    check(B(N, srcs, sizes, 2, N, N, 0, fail, N), "hipErrorInvalidValue")
    check(B(dsts, N, sizes, 2, N, N, 0, fail, N), "hipErrorInvalidValue")
    check(B(dsts, srcs, N, 2, N, N, 0, fail, N), "hipErrorInvalidValue")
    check(B(dsts, srcs, sizes, 0, N, N, 0, fail, N), "hipErrorInvalidValue")
    attrs = ffi.new("hipMemcpyAttributes[2]")
    attrs[0].srcAccessOrder = attrs[1].srcAccessOrder = lib.hipMemcpySrcAccessOrderAny
    idxs = ffi.new("size_t[2]", [0, 1])
    check(B(dsts, srcs, sizes, 2, N, idxs, 1, fail, N), "hipErrorInvalidValue")
    check(B(dsts, srcs, sizes, 2, attrs, N, 1, fail, N), "hipErrorInvalidValue")
    check(B(dsts, srcs, sizes, 2, attrs, idxs, 3, fail, N), "hipErrorInvalidValue")
    idxs[0] = 1                                                  # the first index must be 0
    check(B(dsts, srcs, sizes, 2, attrs, idxs, 1, fail, N), "hipErrorInvalidValue")
    idxs[0], idxs[1] = 0, 0                                      # not increasing
    check(B(dsts, srcs, sizes, 2, attrs, idxs, 2, fail, N), "hipErrorInvalidValue")
    idxs[1] = 1
    attrs[1].srcAccessOrder = lib.hipMemcpySrcAccessOrderInvalid
    check(B(dsts, srcs, sizes, 2, attrs, idxs, 2, fail, N), "hipErrorInvalidValue")
    # a zero size: its index in failIdx
    sizes[1] = 0
    check(B(dsts, srcs, sizes, 2, N, N, 0, fail, N), "hipErrorInvalidValue")
    assert fail[0] == 1
    # a copy past the allocation: checked before any copy, failIdx SIZE_MAX
    sizes[1] = 17
    h[:] = 5
    check(B(dsts, srcs, sizes, 2, N, N, 0, fail, N), "hipErrorInvalidValue")
    assert fail[0] == SIZE_MAX
    assert (to_host(d, 16) == 0).all()                           # nothing was copied
    ok(lib.hipFree(d))


def operand_ptr(op, ptr, row=0, layer=0):
    op.type = lib.hipMemcpyOperandTypePointer
    op.op.ptr.ptr, op.op.ptr.rowLength, op.op.ptr.layerHeight = ptr, row, layer


@needs_batch
def test_3d_batch_copies_each_op():
    w, h, d = 8, 2, 2
    host = host_bytes(w * h * d, 3)
    a, b = malloc(host.nbytes), malloc(host.nbytes)
    ops = ffi.new("hipMemcpy3DBatchOp[2]")
    operand_ptr(ops[0].src, ffi.from_buffer(host))
    operand_ptr(ops[0].dst, a)
    operand_ptr(ops[1].src, a, w, h)
    operand_ptr(ops[1].dst, b)
    for op in ops:
        op.extent.width, op.extent.height, op.extent.depth = w, h, d
        op.srcAccessOrder = lib.hipMemcpySrcAccessOrderStream
    fail = ffi.new("size_t *", 5)
    s = stream()
    ok(lib.hipMemcpy3DBatchAsync(2, ops, fail, 0, s))
    ok(lib.hipStreamSynchronize(s))
    assert fail[0] == SIZE_MAX
    assert (to_host(b, host.nbytes) == host).all()
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(a))
    ok(lib.hipFree(b))


@needs_batch
def test_3d_batch_bad_arguments_and_fail_index():
    a = malloc(64)
    ops = ffi.new("hipMemcpy3DBatchOp[2]")
    for op in ops:
        operand_ptr(op.src, a)
        operand_ptr(op.dst, a)
        op.extent.width, op.extent.height, op.extent.depth = 8, 1, 1
    fail = ffi.new("size_t *", 5)
    N = ffi.NULL
    check(lib.hipMemcpy3DBatchAsync(2, ops, fail, 1, N), "hipErrorInvalidValue")      # flags
    check(lib.hipMemcpy3DBatchAsync(2, N, fail, 0, N), "hipErrorInvalidValue")
    check(lib.hipMemcpy3DBatchAsync(0, ops, fail, 0, N), "hipErrorInvalidValue")
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    check(lib.hipMemcpy3DBatchAsync(2, ops, fail, 0, dead), "hipErrorInvalidHandle")
    check(lib.hipMemcpy3DBatchAsync(2, ops, N, 0, N), "hipErrorInvalidValue")  # hipamd: crash
    ops[1].extent.width = 65                                      # past the allocation
    check(lib.hipMemcpy3DBatchAsync(2, ops, fail, 0, N), "hipErrorInvalidValue")
    assert fail[0] == 1
    ops[1].extent.width = 8
    ops[0].src.type = 0x7                                         # no operand type
    check(lib.hipMemcpy3DBatchAsync(2, ops, fail, 0, N), "hipErrorInvalidValue")
    assert fail[0] == 0
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipFree(a))


# ihipMemcpy3D_validate from 5.5: a pitch below its pointer's xsize is
# hipErrorInvalidPitchValue (STUB_RULE_MEMCPY3D_PITCH_BELOW_ROW); 5.2-5.4
# copy what the extent asks for
@version_sensitive
def test_3d_copy_pitch_below_xsize():
    src, dst = malloc(64), malloc(64)
    ok(lib.hipMemset(src, 9, 64))
    ok(lib.hipMemset(dst, 0, 64))
    p = ffi.new("hipMemcpy3DParms *")
    p.srcPtr = pitched_ptr(src, 4, 8, 2)
    p.dstPtr = pitched_ptr(dst, 8, 8, 2)
    p.extent.width, p.extent.height, p.extent.depth = 4, 2, 1
    p.kind = lib.hipMemcpyDeviceToDevice
    check(lib.hipMemcpy3D(p), expect({(5, 2): "hipSuccess", (5, 5): "hipErrorInvalidPitchValue"}))
    copied = expect({(5, 2): True, (5, 5): False})
    assert (to_host(dst, 16)[:4] == 9).all() == copied
    ok(lib.hipFree(src))
    ok(lib.hipFree(dst))
