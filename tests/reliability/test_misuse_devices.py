"""Objects of one device given to another's (two stub devices, ROCPY_STUB_DEVICES=2).

HIP's rules: a kernel runs on the device it was loaded on, so a stream of
another device refuses it; a stream-ordered allocation belongs to its
stream's device; an event records only on streams of its own device, and two
events time each other only on one device.  Waits, copies and fills across
devices are legal (peer access) and must give the right data.  A device reset
invalidates that device's objects and no other's.

The cases run in one subprocess (two devices must be configured before the
runtime starts); each prints its outcome, checked here one test per case.
"""
from __future__ import annotations

import json

import pytest

# name -> (statement run with d0, d1, s0, s1, b0, b1, e0, e1, k0, k1, g0, np, hip in scope;
#          expected: "ok", an exception class name, or "ClassName:statusName")
CASES = {
    "kernel of d0 on a stream of d1": (
        "k0.launch(1, 16, (b0, np.uint32(1), np.int32(16)), stream=s1)", "HipInvalidValueError:hipErrorInvalidValue"),
    "kernel of d0 on the null stream of d1": (
        "k0.launch(1, 16, (b0, np.uint32(1), np.int32(16)), stream=d1.default_stream)",
        "HipInvalidValueError:hipErrorInvalidValue"),
    "kernel of d0 on the per-thread stream of d1": (
        "k0.launch(1, 16, (b0, np.uint32(1), np.int32(16)), stream=hip.Stream.per_thread(d1))",
        "HipInvalidValueError:hipErrorInvalidValue"),
    "kernel of d1 on a stream of d0": (
        "k1.launch(1, 16, (b1, np.uint32(1), np.int32(16)), stream=s0)", "HipInvalidValueError:hipErrorInvalidValue"),
    "kernel of d0, null stream, d1 current": (
        "d1.set_current(); k0.launch(1, 16, (b0, np.uint32(9), np.int32(16))); d0.sync();"
        "assert (b0.copy_to(np.zeros(16, np.uint32))[:16] == 9).all()", "ok"),
    "stream-ordered alloc of d0 on a stream of d1": (
        "d0.context.alloc(64, stream=s1)", "HipInvalidValueError:hipErrorInvalidValue"),
    "stream-ordered alloc of d1 on a stream of d0": (
        "d1.context.alloc(64, stream=s0)", "HipInvalidValueError:hipErrorInvalidValue"),
    "event of d0 recorded on a stream of d1": ("e0.record(s1)", "HipInvalidHandleError:hipErrorInvalidHandle"),
    "stream of d1 records an event of d0": ("s1.record(e0)", "HipInvalidHandleError:hipErrorInvalidHandle"),
    "elapsed between devices": (
        "e0.record(s0); e1.record(s1); e0.sync(); e1.sync(); (e1 - e0)",
        "HipInvalidHandleError:hipErrorInvalidHandle"),
    "stream of d0 waits for an event of d1": ("e1.record(s1); s0.wait(e1); s0.sync()", "ok"),
    "stream of d0 waits for a stream of d1": ("s0.wait(s1); s0.sync()", "ok"),
    "copy d1 -> d0": (
        "b1.copy_from(np.arange(16, dtype=np.uint32)); b0.copy_from(b1);"
        "assert (b0.copy_to(np.zeros(16, np.uint32)) == np.arange(16)).all()", "ok"),
    "async copy d1 -> d0 on a stream of d1": (
        "b1.fill(np.uint32(3)); b0.copy_from(b1, stream=s1); s1.sync();"
        "assert (b0.copy_to(np.zeros(16, np.uint32)) == 3).all()", "ok"),
    "fill of d0 memory on a stream of d1": (
        "b0.fill(np.uint32(4), stream=s1); s1.sync();"
        "assert (b0.copy_to(np.zeros(16, np.uint32)) == 4).all()", "ok"),
    "graph of d0 launched on a stream of d1": ("x = g0.instantiate(); x.launch(s1); s1.sync(); x.close()", "ok"),
    "d0 buffer freed in order on a stream of d1": ("d0.context.alloc(64).close(stream=s1); s1.sync()", "ok"),
    "Device(2)": ("hip.Device(2)", "HipInvalidValueError:hipErrorInvalidDevice"),
    "Device(2).default_stream": ("hip.Device(2).default_stream", "HipInvalidValueError:hipErrorInvalidDevice"),
    "peer of itself": ("d0.enable_peer_access(d0)", "HipInvalidValueError:hipErrorInvalidDevice"),
    "peer access twice": ("d0.enable_peer_access(d1); d0.enable_peer_access(d1); d0.disable_peer_access(d1);"
                          "d0.disable_peer_access(d1)", "ok"),
    "can access peer": ("assert d0.can_access_peer(d1) in (True, False)", "ok"),
    "reset of d1 leaves d0's objects": (
        "d1.reset(); b0.fill(1); s0.sync(); e0.record(s0);"
        "k0.launch(1, 16, (b0, np.uint32(1), np.int32(16)), stream=s0); s0.sync()", "ok"),
    "after reset of d1 its buffer refuses": ("b1.fill(1)", "ClosedError"),
    "after reset of d1 its stream refuses": ("s1.sync()", "ClosedError"),
    "after reset of d1 its kernel refuses": ("k1.launch(1, 16, (b0, np.uint32(1), np.int32(16)))", "ClosedError"),
    "after reset of d1 a new stream works": ("s = d1.create_stream(); s.sync(); s.close()", "ok"),
}

SCRIPT = r"""
import json, sys
import numpy as np
import rocpy, rocpy.stub
from rocpy import hip
cases = json.loads(sys.argv[2])
d0, d1 = hip.Device(0), hip.Device(1)
s0, s1 = d0.create_stream(), d1.create_stream()
b0, b1 = d0.context.alloc(64), d1.context.alloc(64)
e0, e1 = hip.Event(d0), hip.Event(d1)
k0 = hip.Module.load(sys.argv[1], d0)["fill"]
k1 = hip.Module.load(sys.argv[1], d1)["fill"]
g0 = hip.Graph(d0); g0.add_memset(b0, 0)
out = {}
for name, code in cases:
    try:
        exec(code, dict(globals()))
        out[name] = "ok"
    except Exception as exc:
        out[name] = type(exc).__name__ + (f":{exc.name}" if isinstance(exc, rocpy.HipError) else "")
for o in (s0, s1):
    if not o.closed:
        o.sync()
for d in (d0, d1):
    d.sync()
del k0, k1
for o in (g0, s0, s1, b0, b1, e0, e1):
    o.close()
rocpy.debug.collect()
out["__leaks__"] = [rocpy.debug.live_objects(), rocpy.stub.live_allocations()]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def outcomes(kernel_paths):
    from rel_support import run_py
    proc = run_py(SCRIPT, env={"ROCPY_STUB_DEVICES": "2"},
                  args=(kernel_paths["fill"], json.dumps([[n, c] for n, (c, _) in CASES.items()])))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", list(CASES))
def test_cross_device(name, outcomes):
    assert outcomes[name] == CASES[name][1]


def test_nothing_leaked_across_devices(outcomes):
    live, allocations = outcomes["__leaks__"]
    assert live == {} and allocations == 0
