"""Rule 4: nothing submitted is silently dropped (issue 20), and per-thread streams.

Host callbacks enqueued before exit run (the exit hook waits for them before
it stops the dispatcher) or are reported on stderr; a synchronize whose wait
for the dispatcher times out raises `TimeoutError`; a `Stream.per_thread()`
wrapper is its thread's (elsewhere hipStreamPerThread names another stream);
a thread's per-thread stream that ends with the thread finishes its work
first, and `Device.sync` waits for it meanwhile.
"""
from __future__ import annotations

import threading
import time

import pytest

import rocpy
import rocpy.debug
from rocpy import hip
from rocpy.hip import _callbacks

SLOW_KERNEL = """
    import sys, threading, time
    import numpy as np, rocpy, rocpy.stub
    from rocpy import hip
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    rocpy.stub.register_kernel("fill", lambda d: time.sleep(float(sys.argv[2])) and None)
    buf = dev.context.alloc(256)
    s = dev.create_stream()
    k.launch(1, 64, (buf, np.uint32(1), np.int32(64)), stream=s)
    s.add_callback(lambda: print("callback ran", flush=True))
"""


def test_a_callback_enqueued_just_before_exit_runs(py, kernel_paths):
    """Before: the call queue closed first; the callback was counted dropped, never ran."""
    proc = py(SLOW_KERNEL, args=(kernel_paths["fill"], "0.5"))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "callback ran\n", "")


def test_a_callback_that_cannot_run_before_exit_is_reported(py, kernel_paths):
    """The work before it outlasts the exit hook's wait: said on stderr, not dropped silently."""
    proc = py(SLOW_KERNEL, args=(kernel_paths["fill"], "4"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "1 host callback(s) enqueued with Stream.add_callback never ran" in proc.stderr
    assert "callback ran" not in proc.stdout


def test_synchronize_that_times_out_on_callbacks_says_so(dev, monkeypatch):
    """Before: synchronize() returned after 30 s with the callback still running."""
    monkeypatch.setattr(_callbacks, "BARRIER_TIMEOUT", 0.2)
    release = threading.Event()
    with dev.create_stream() as s:
        s.add_callback(release.wait, 10)
        with pytest.raises(TimeoutError, match="still running"):
            s.sync()
        release.set()
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


def test_pending_host_callbacks_are_counted(dev):
    release = threading.Event()
    with dev.create_stream() as s:
        s.add_callback(release.wait, 10)
        s.add_callback(len, "x")
        time.sleep(0.05)
        assert _callbacks.pending_host_callbacks() >= 1
        release.set()
        s.sync()
        assert _callbacks.pending_host_callbacks() == 0
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


def test_per_thread_stream_refuses_another_thread(dev):
    """Before: another thread's wrapper synchronized (and enqueued on) that thread's
    own per-thread stream, silently."""
    s = hip.Stream.per_thread(dev)
    errors = []

    def use():
        for op in (s.sync, s.query, lambda: s.record()):
            try:
                op()
            except rocpy.HipError as exc:
                errors.append(exc)
    t = threading.Thread(target=use)
    t.start()
    t.join()
    assert len(errors) == 3
    assert all(e.name == "hipErrorInvalidHandle" and "per-thread" in str(e) for e in errors)
    s.sync()                                # its own thread may
    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}


PER_THREAD_EXIT = """
    import json, sys, threading, time
    import numpy as np, rocpy, rocpy.stub, rocpy.debug
    from rocpy import hip
    dev = hip.Device(0)
    k = hip.Module.load(sys.argv[1], dev)["fill"]
    params = k.params
    def emulate(d):
        time.sleep(0.3)
        p, value, n = (d.arg(a.offset, f) for a, f in zip(params, "QIi"))
        d.array(p, np.uint32, n)[:] = value
    rocpy.stub.register_kernel("fill", emulate)
    buf = dev.context.alloc(256)
    buf.fill(0)
    def work():
        k.launch(1, 64, (buf, np.uint32(9), np.int32(64)), stream=hip.Stream.per_thread(dev))
    t = threading.Thread(target=work)
    t.start()
    time.sleep(0.05)                               # the thread is exiting: its stream ends
    dev.sync()
    out = np.empty(64, np.uint32)
    buf.copy_to(out)
    t.join()
    print(json.dumps({"filled": bool((out == 9).all())}))
"""


def test_thread_exit_finishes_its_per_thread_stream_first(py, kernel_paths):
    """Before: the stub took the exiting thread's per-thread stream out of the registry
    first, so Device.sync returned before its work was done."""
    proc = py(PER_THREAD_EXIT, args=(kernel_paths["fill"],))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == '{"filled": true}'
