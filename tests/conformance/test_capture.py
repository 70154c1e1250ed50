"""Stream capture into graphs, and what invalidates a capture.

Platform independent: the capture modes and their "unsafe call" rules are
CUDA's, and hipamd (ROCm/clr) and the stub follow them.
"""
from __future__ import annotations

import threading

import numpy as np
import pytest

import rocpy
from rocpy import hip

N = 1024

pytestmark = pytest.mark.skipif(
    not hasattr(hip.lib, "hipStreamBeginCapture"),
    reason="this backend's HIP has no stream capture (HIP 5.x's NVIDIA platform has no graph "
           "API); test_bad_inputs.py::test_capture_without_runtime_support covers it")


def test_capture_then_launch_replays_the_work(dev, load, rng):
    vadd = load("vadd")
    a, b = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    ctx = dev.context
    A, B, C = ctx.alloc(N * 4), ctx.alloc(N * 4), ctx.alloc(N * 4)
    A.copy_from(a)
    B.copy_from(b)
    with dev.create_stream() as s:
        with s.capture() as g:
            vadd.launch(N // 256, 256, (A, B, C, np.int32(N)), stream=s)
        assert len(g) == 1
        exe = g.instantiate()
        g.close()                           # the executable graph keeps what it needs
        for _ in range(3):
            C.fill(0, stream=s)
            exe.launch(s)
            out = np.empty(N, np.float32)
            C.copy_to(out, stream=s)
            s.sync()
            assert np.array_equal(out, a + b)
        exe.close()


def test_nothing_runs_while_capturing(dev, load):
    fill = load("fill")
    buf = dev.context.alloc(N * 4)
    buf.fill(0)
    with dev.create_stream() as s:
        with s.capture() as g:
            fill.launch(N // 256, 256, (buf, np.uint32(5), np.int32(N)), stream=s)
            assert s.is_capturing
        assert not s.is_capturing
        out = np.empty(N, np.uint32)
        buf.copy_to(out)
        assert (out == 0).all()
        g.instantiate().launch(s)
        s.sync()
        buf.copy_to(out)
        assert (out == 5).all()


def test_graph_is_unusable_until_the_block_ends(dev):
    with dev.create_stream() as s:
        with s.capture() as g:
            with pytest.raises(rocpy.ClosedError, match="still being captured"):
                g.instantiate()
        g.instantiate().close()


def test_allocation_during_global_capture_invalidates_it(dev):
    with dev.create_stream() as s:
        with pytest.raises(rocpy.HipError) as end:
            with s.capture(mode="global"):
                with pytest.raises(rocpy.HipError) as unsafe:
                    dev.context.alloc(4096)
                assert unsafe.value.name == "hipErrorStreamCaptureUnsupported"
        assert end.value.name == "hipErrorStreamCaptureInvalidated"


def test_synchronize_during_capture_invalidates_it(dev):
    with dev.create_stream() as s:
        with pytest.raises(rocpy.HipError) as end:
            with s.capture():
                with pytest.raises(rocpy.HipError) as sync:
                    s.sync()
                assert sync.value.name == "hipErrorStreamCaptureUnsupported"
        assert end.value.name == "hipErrorStreamCaptureInvalidated"
        s.sync()                     # the stream is usable again


def test_relaxed_capture_allows_allocation(dev, load):
    empty = load("empty")
    with dev.create_stream() as s:
        with s.capture(mode="relaxed") as g:
            buf = dev.context.alloc(4096)       # refused under "global"/"thread_local"
            empty.launch(1, 1, (), stream=s)
        assert len(g) == 1                      # the launch was captured, the allocation was not
        buf.close()
        g.instantiate().launch(s)
        s.sync()
        assert s.query()


def test_thread_local_capture_ignores_other_threads(dev, load):
    empty = load("empty")
    errors = []

    def allocate():
        try:
            dev.context.alloc(4096).close()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with dev.create_stream() as s:
        with s.capture(mode="thread_local") as g:
            empty.launch(1, 1, (), stream=s)
            t = threading.Thread(target=allocate)
            t.start()
            t.join()
        assert errors == []
        g.instantiate().launch(s)
        s.sync()


def test_null_stream_cannot_capture(dev):
    # refused by hipStreamBeginCapture itself (hipamd, CUDA and the stub), so the
    # block never runs: not some later error of an end-of-capture on the null stream
    null = dev.default_stream
    entered = False
    with pytest.raises(rocpy.HipError) as info:
        with null.capture():
            entered = True
    assert not entered
    assert info.value.name == "hipErrorStreamCaptureUnsupported"
    assert info.value.call == "hipStreamBeginCapture"
    assert null.is_capturing is False


def test_exception_in_block_abandons_graph(dev, load):
    empty = load("empty")
    with dev.create_stream() as s:
        with pytest.raises(KeyError):
            with s.capture() as g:
                empty.launch(1, 1, (), stream=s)
                raise KeyError("user error")
        with pytest.raises(rocpy.ClosedError, match="raised"):
            g.instantiate()
        assert not s.is_capturing
        s.sync()


def test_capture_keeps_pageable_sources_alive(dev):
    buf = dev.context.alloc(N * 4)
    with dev.create_stream() as s:
        with s.capture() as g:
            # the array's only owner is the graph
            buf.copy_from(np.full(N, 3, np.uint32), stream=s)
        exe = g.instantiate()
        del g
        exe.launch(s)
        s.sync()
        out = np.empty(N, np.uint32)
        buf.copy_to(out)
        assert (out == 3).all()
        exe.close()
