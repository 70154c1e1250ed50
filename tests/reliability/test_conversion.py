"""Rule 3: every public argument goes through one conversion layer (`rocpy._args`).

Integers through ``operator.index`` (numpy integers work wherever Python ints
do), bounds checked before any C call, dtypes that hold Python objects or have
no size refused with `TypeError`; no cffi `OverflowError`/`TypeError` or numpy
internal error reaches a user, and every message names the argument.

The cases of issue 20 first (each failed before: a `TypeError` from an
``isinstance(x, int)`` check, cffi's OverflowError, a segfault from an object
dtype), then the general sweeps: every integer parameter of the misuse tables
called with numpy integers of every width.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from rel_support import has_graphs, has_hsa

import rocpy
import rocpy.debug
from rocpy import _args, hip

NP_INTS = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


# ---- the layer itself ---------------------------------------------------------------------

@pytest.mark.parametrize("t", NP_INTS)
def test_numpy_integers_are_integers(t):
    assert _args.integer(t(7), "x") == 7 and type(_args.integer(t(7), "x")) is int
    assert _args.integers(np.array([1, 2], t), "grid") == (1, 2)
    assert _args.shape(t(3)) == (3,)


@pytest.mark.parametrize("bad", [True, np.bool_(True), 1.5, np.float64(2), "3", b"3", None, [1],
                                 object()])
def test_non_integers_are_type_errors_naming_the_argument(bad):
    with pytest.raises(TypeError, match="^count must be an integer"):
        _args.integer(bad, "count")


def test_bounds_are_value_errors_naming_the_argument():
    with pytest.raises(ValueError, match=r"count must be in \[0, 2\*\*32\)"):
        _args.unsigned(2**32, 32, "count")
    with pytest.raises(ValueError, match=r"x must be in \[1, 4\], got 5"):
        _args.integer(5, "x", 1, 4)
    with pytest.raises(TypeError, match=r"shape\[1\] must be an integer, not float"):
        _args.shape((1, 2.0))
    with pytest.raises(ValueError, match="grid must be one-dimensional"):
        _args.integers(np.ones((2, 2), int), "grid")


@pytest.mark.parametrize("bad", [[1], "1", b"1", object(), True])
def test_timeouts_that_are_not_numbers(bad):
    with pytest.raises(TypeError, match="timeout must be None or a number of seconds"):
        _args.seconds(bad)


def test_timeouts():
    assert _args.seconds(None) is None and _args.seconds(math.inf) is None
    assert _args.seconds(np.float32(0.5)) == 0.5 and _args.seconds(np.int64(2)) == 2.0
    for bad in (-1, math.nan):
        with pytest.raises(ValueError, match="timeout"):
            _args.seconds(bad)


@pytest.mark.parametrize("dt", [object, "O", "V0", "S0", [("a", "O")], [("a", "i4"), ("b", "O")],
                                np.dtype([])])
def test_dtypes_without_size_or_holding_objects(dt):
    with pytest.raises(TypeError, match="dtype"):
        _args.dtype(dt)


def test_sequence_takes_generators_once():
    assert _args.sequence((x for x in (1, 2)), "args") == (1, 2)
    with pytest.raises(TypeError, match="args must be a sequence"):
        _args.sequence(5, "args")


# ---- HIP: the cases ----------------------------------------------------------------

def test_object_and_zero_size_dtypes_are_refused_by_buffers(dev):
    """Before: copy_to(np.empty(2, object)), HostBuffer.numpy(object) and
    typed(object).numpy() segfaulted; they viewed raw bytes as PyObject pointers."""
    ctx = dev.context
    buf, host = ctx.alloc(16), ctx.alloc_host(16)
    for call in (lambda: buf.copy_to(np.empty(2, object)),
                 lambda: buf.copy_from(np.empty(2, object)),
                 lambda: buf.copy_to(memoryview(np.empty(2, object))),
                 lambda: host.numpy(object),
                 lambda: host.numpy("V0"),
                 lambda: buf.typed(object),
                 lambda: buf.typed([("p", "O"), ("q", "O")])):
        with pytest.raises(TypeError, match="objects|size 0"):
            call()
    buf.close()
    host.close()
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


def test_numpy_integers_in_the_hip_layer(dev):
    """Before: `priority`, typed shapes and device indices refused numpy integers."""
    ctx = dev.context
    buf = ctx.alloc(np.int64(64))
    assert buf.typed(np.float32, np.int64(16)).shape == (16,)
    assert buf.typed(np.uint8, (np.int32(8), np.uint8(8))).shape == (8, 8)
    assert buf.typed(np.uint8, np.array([4, 16])).shape == (4, 16)
    s = dev.create_stream(priority=np.int32(0))
    assert s.priority == 0
    assert hip.Device(np.int64(0)) is dev
    assert dev.attribute(np.int32(dev.attribute("warp_size") and
                                  hip.lib.hipDeviceAttributeWarpSize)) == dev.attribute("warp_size")
    assert hip.Stream.from_handle(np.uint64(0), device=dev) is dev.default_stream
    s.close()
    buf.close()
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


@pytest.mark.skipif(not has_graphs(), reason="this backend's HIP has no capture")
def test_closing_a_stream_inside_its_capture(dev):
    """Before: hipErrorContextIsDestroyed from hipStreamEndCapture at the block's end."""
    s = dev.create_stream()
    with s.capture() as g:
        with pytest.raises(rocpy.HipError) as info:
            s.close()
        assert info.value.name == "hipErrorStreamCaptureUnsupported"
        assert "capture" in str(info.value)
        assert not s.closed
    g.instantiate().close()
    g.close()
    s.close()
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


# ---- HSA: the cases ----------------------------------------------------------------

pytest_hsa = pytest.mark.skipif(not has_hsa(), reason="this backend has no HSA runtime")


@pytest_hsa
def test_hsa_numpy_integers(hsa_env):
    """Before: wait_any values, dispatch_many(count=), create_queue(size=) and
    Buffer.numpy(offset=) refused (or crashed on) numpy integers."""
    hsa, gpu = hsa_env["hsa"], hsa_env["gpu"]
    buf = hsa_env["buf"]
    assert buf.numpy(np.uint8, offset=np.int64(4)).size == buf.size - 4
    assert buf.numpy(np.uint32, count=np.uint8(3)).size == 3
    sig = hsa.Signal(0)
    assert hsa.Signal.wait_any([sig], "eq", np.int64(0), timeout=1) == (0, 0)
    q = gpu.create_queue(size=np.int64(gpu.queue_min_size))
    done = hsa.Signal(3)
    d = hsa.Dispatch(hsa_env["kernel"], 64, 64, hsa_env["args"], completion_signal=done)
    q.dispatch_many(d, count=np.int32(3))
    assert done.wait("eq", 0, timeout=10) == 0
    for o in (q, d, done, sig):
        o.close()


@pytest_hsa
@pytest.mark.parametrize("call,exc,name", [
    (lambda e: e["queue"].dispatch_many(e["disp"], count=2**32), ValueError, "count"),
    (lambda e: e["queue"].dispatch_many(e["disp"], count=1.5), TypeError, "count"),
    (lambda e: e["gpu"].create_queue(kernarg_bytes=2**70), ValueError, "kernarg_bytes"),
    (lambda e: e["gpu"].create_queue(kernarg_segments=1.5), TypeError, "kernarg_segments"),
    (lambda e: e["gpu"].create_queue(kernarg_segments=2**40), ValueError, "kernarg_segments"),
    (lambda e: e["gpu"].create_queue(size=np.float64(64)), TypeError, "size"),
    (lambda e: e["buf"].numpy(offset=1.5), TypeError, "offset"),
    (lambda e: e["buf"].numpy("O"), TypeError, "dtype"),
    (lambda e: e["buf"].numpy("V0"), TypeError, "dtype"),
    (lambda e: e["signal"].wait("eq", 0, timeout=[1]), TypeError, "timeout"),
    (lambda e: e["hsa"].Signal.wait_any([e["signal"]], "eq", [1.5]), TypeError, "value"),
    (lambda e: e["queue"].sync(timeout="1"), TypeError, "timeout"),
])
def test_hsa_bad_arguments_name_themselves(call, exc, name, hsa_env):
    """Before: cffi's OverflowError (count=2**32, kernarg_bytes=2**70), a TypeError from
    ``range`` (kernarg_segments=1.5), from float() (timeout=[1]), a segfault ('O')."""
    hsa_env["disp"] = hsa_env["hsa"].Dispatch(hsa_env["kernel"], 64, 64, hsa_env["args"])
    with pytest.raises(exc) as info:
        call(hsa_env)
    assert name in str(info.value)
    assert not isinstance(info.value, OverflowError)
    hsa_env.pop("disp").close()


# ---- the general sweep: numpy integers wherever Python ints work ------------------------

def _int_calls(dev):
    """(name, call(value)) for integer parameters of the HIP layer, each given a valid value."""
    ctx = dev.context
    buf = ctx.alloc(64)
    host = ctx.alloc_host(64)
    return [
        ("Context.alloc", 64, lambda v: ctx.alloc(v).close()),
        ("Context.alloc_host", 64, lambda v: ctx.alloc_host(v).close()),
        ("Context.alloc_managed", 64, lambda v: ctx.alloc_managed(v).close()),
        ("buf[a:b]", 8, lambda v: buf[v:2 * v].close()),
        ("typed shape", 16, lambda v: buf.typed(np.uint32, (v,))),
        ("host.numpy shape", 64, lambda v: host.numpy(np.uint8, (v,))),
        ("fill byte", 7, lambda v: buf.fill(int(v))),
        ("Device", 0, lambda v: hip.Device(v)),
        ("create_stream priority", 0, lambda v: dev.create_stream(priority=v).close()),
    ], (buf, host)


@pytest.mark.parametrize("t", NP_INTS)
def test_every_integer_parameter_takes_numpy_integers(t, dev):
    calls, owned = _int_calls(dev)
    failures = []
    for name, value, call in calls:
        try:
            call(t(value))
        except Exception as exc:  # collected: the assertion lists every failure
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    for o in owned:
        o.close()
    assert failures == []
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}
