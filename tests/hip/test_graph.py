"""rocpy.hip.Graph / GraphExec: explicit graphs, captured graphs, lifetimes, host nodes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.errors import CallbackWarning

N = 1024

pytestmark = pytest.mark.graphs


def test_explicit_graph(dev, load, rng):
    vadd = load("vadd")
    a, b = rng.random(N, dtype=np.float32), rng.random(N, dtype=np.float32)
    ctx = dev.context
    A, B, C = ctx.alloc(N * 4), ctx.alloc(N * 4), ctx.alloc(N * 4)
    out = np.zeros(N, np.float32)
    seen = []
    g = hip.Graph(dev)
    ca = g.add_copy(A, a)
    cb = g.add_copy(B, b)
    z = g.add_memset(C, np.uint32(0))
    run = g.add_kernel(vadd, N // 256, 256, (A, B, C, np.int32(N)), deps=[ca, cb, z])
    back = g.add_copy(out, C, deps=run)
    g.add_host(seen.append, "done", deps=[back])
    g.add_empty(deps=[back])
    assert len(g) == 7 and run.kind == "kernel" and run.graph is g
    exe = g.instantiate()
    del a, b                                    # the graph keeps its pageable sources
    with dev.create_stream() as s:
        exe.launch(s)
        s.sync()
    assert seen == ["done"]
    A_host = np.empty(N, np.float32)
    A.copy_to(A_host)
    B_host = np.empty(N, np.float32)
    B.copy_to(B_host)
    assert np.array_equal(out, A_host + B_host)
    g.close(), exe.close()


def test_dependencies_must_be_nodes_of_the_graph(dev):
    g1, g2 = hip.Graph(dev), hip.Graph(dev)
    n1 = g1.add_empty()
    with pytest.raises(rocpy.InvalidValueError):
        g2.add_empty(deps=[n1])
    with pytest.raises(rocpy.InvalidValueError):
        g2.add_empty(deps=["nope"])
    g1.close(), g2.close()


def test_node_argument_checks(dev):
    g = hip.Graph(dev)
    buf = dev.context.alloc(64)
    with pytest.raises(rocpy.InvalidValueError):
        g.add_copy(buf, np.zeros(3, np.float32))
    with pytest.raises(rocpy.InvalidValueError):
        g.add_memset(buf, 300)
    with pytest.raises(TypeError):
        g.add_memset(buf, 1.5)
    with pytest.raises(TypeError):
        g.add_host(3)
    g.close()


def test_host_node_errors_reach_the_next_launch(dev):
    g = hip.Graph(dev)
    g.add_host(lambda: 1 / 0)
    exe = g.instantiate()
    with dev.create_stream() as s, warnings.catch_warnings():
        warnings.simplefilter("ignore", CallbackWarning)
        exe.launch(s)
        with pytest.raises(rocpy.CallbackError):
            s.sync()                         # the stream it ran on reports it
        exe.launch(s)
        from rocpy.hip.stream import _dispatcher_barrier
        dev.sync()                           # not a use of s or of exe
        _dispatcher_barrier()
        s._more_errors.clear()                      # report through the graph this time
        with pytest.raises(rocpy.CallbackError):
            exe.launch(s)
        s.sync()
    g.close(), exe.close()


def test_executable_outlives_its_graph(dev, load):
    fill = load("fill")
    buf = dev.context.alloc(N * 4)
    g = hip.Graph(dev)
    g.add_kernel(fill, N // 256, 256, (buf, np.uint32(6), np.int32(N)))
    exe = g.instantiate()
    g.close()
    del fill
    exe.launch()
    dev.sync()
    out = np.empty(N, np.uint32)
    buf.copy_to(out)
    assert (out == 6).all()
    exe.close()


def test_captured_callback_becomes_a_host_node(dev):
    seen = []
    with dev.create_stream() as s:
        with s.capture() as g:
            s.add_callback(seen.append, 1)
        exe = g.instantiate()
        exe.launch(s)
        exe.launch(s)
        s.sync()
    assert seen == [1, 1]
    g.close(), exe.close()


def test_captured_launch_arguments_are_frozen(dev, load):
    fill = load("fill")
    buf = dev.context.alloc(N * 4)
    with dev.create_stream() as s:
        with s.capture() as g:
            fill.launch(N // 256, 256, (buf, np.uint32(1), np.int32(N)), stream=s)
        fill.launch(N // 256, 256, (buf, np.uint32(2), np.int32(N)), stream=s)  # reuses the buffer
        s.sync()
        g.instantiate().launch(s)
        s.sync()
    out = np.empty(N, np.uint32)
    buf.copy_to(out)
    assert (out == 1).all()
    g.close()


def test_not_constructible():
    with pytest.raises(TypeError):
        hip.GraphExec()
