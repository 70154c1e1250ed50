"""Copies of random data every way round, synchronous and on streams, with
views, pinned, managed and pageable memory.  Platform independent."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from rocpy import hip

N = 3 * 4096 + 12


@pytest.fixture
def data(rng):
    return rng.integers(0, 2**32, N, dtype=np.uint32)


def kinds(dev):
    ctx = dev.context
    return {
        "device": lambda n: ctx.alloc(n),
        "pinned": lambda n: hip.Context.host().alloc_host(n),
        "pinned-device": lambda n: ctx.alloc_host(n),
        "managed": lambda n: ctx.alloc_managed(n),
    }


@pytest.mark.parametrize("src_kind", ["device", "pinned", "pinned-device", "managed"])
@pytest.mark.parametrize("dst_kind", ["device", "pinned", "managed"])
@pytest.mark.parametrize("on_stream", [False, True])
def test_round_trip(dev, data, src_kind, dst_kind, on_stream):
    make = kinds(dev)
    src, dst = make[src_kind](data.nbytes), make[dst_kind](data.nbytes)
    out = np.zeros_like(data)
    if on_stream:
        with dev.create_stream(non_blocking=True) as s:
            src.copy_from(data, stream=s)
            dst.copy_from(src, stream=s)
            dst.copy_to(out, stream=s)
            s.sync()
    else:
        src.copy_from(data)
        dst.copy_from(src)
        dst.copy_to(out)
    assert np.array_equal(out, data)


def test_views_copy_their_range(dev, data):
    buf = dev.context.alloc(data.nbytes)
    buf.fill(0)
    half = data.nbytes // 2 // 4 * 4
    buf[half:].copy_from(data[half // 4:])
    out = np.empty_like(data)
    buf.copy_to(out)
    assert (out[:half // 4] == 0).all() and np.array_equal(out[half // 4:], data[half // 4:])
    tail = np.empty(N - half // 4, np.uint32)
    buf[-tail.nbytes:].copy_to(tail)
    assert np.array_equal(tail, data[half // 4:])


def test_bytes_and_memoryview_endpoints(dev):
    payload = bytes(range(256)) * 16
    buf = dev.context.alloc(len(payload))
    buf.copy_from(payload)
    back = bytearray(len(payload))
    buf.copy_to(back)
    assert bytes(back) == payload
    mv = memoryview(bytearray(len(payload)))
    buf.copy_to(mv)
    assert mv.tobytes() == payload


def test_non_contiguous_source_is_made_contiguous(dev, data):
    grid = data[: 64 * 64].reshape(64, 64)
    buf = dev.context.alloc(grid.nbytes)
    buf.copy_from(grid.T)
    out = np.empty((64, 64), np.uint32)
    buf.copy_to(out)
    assert np.array_equal(out, grid.T)


def test_pageable_source_lives_until_the_copy_completes(dev, spin, data):
    buf = dev.context.alloc(data.nbytes)
    with dev.create_stream() as s:
        spin(buf, 1, 100, stream=s)                 # the copy below waits for this
        buf.copy_from(data.copy(), stream=s)        # the only reference is the stream's
        gc.collect()
        out = np.empty_like(data)
        buf.copy_to(out, stream=s)
        s.sync()
    assert np.array_equal(out, data)


def test_fill_bytes_and_words(dev):
    buf = dev.context.alloc(4096)
    out = np.empty(1024, np.uint32)
    buf.fill(0xAB)
    buf.copy_to(out)
    assert (out == 0xABABABAB).all()
    buf.fill(np.uint32(0xDEADBEEF))
    buf.copy_to(out)
    assert (out == 0xDEADBEEF).all()
    buf.fill(np.float32(1.5))
    buf.copy_to(out)
    assert (out.view(np.float32) == 1.5).all()
    with dev.create_stream() as s:
        buf[1024:2048].fill(np.int32(-1), stream=s)
        buf.copy_to(out, stream=s)
        s.sync()
    assert (out[256:512] == 0xFFFFFFFF).all() and (out[:256].view(np.float32) == 1.5).all()


def test_pinned_numpy_view_is_zero_copy(dev, data):
    h = hip.Context.host().alloc_host(data.nbytes)
    view = h.numpy(np.uint32)
    view[:] = data
    buf = dev.context.alloc(data.nbytes)
    buf.copy_from(h)
    view[:] = 0
    buf.copy_to(h)
    assert np.array_equal(view, data)
    assert h.numpy(np.uint8, (data.nbytes,)).ctypes.data == h.ptr
