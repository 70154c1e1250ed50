"""The compiled `Stream.sync` (rocpy/_native/hot/hot_sync.c) against its Python
definition (`rocpy.hip._methods.PYTHON["Stream.sync"]`): the same outcome (type,
message, status) in every case, what the work held dropped once it completed and
held again when the wait failed, and every case it declines handed to Python
(a closed stream, pending callback errors, callbacks to report, a wait longer than
the first spin, a capture)."""
from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import rocpy
from rocpy import _hotpath, hip
from rocpy.hip import _methods, _wait

pytestmark = pytest.mark.skipif(not _hotpath.available() or _hotpath.module() is None,
                                reason="rocpy._hot is not built or ROCPY_HOT=0")


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc), str(exc), getattr(exc, "status", None)


@pytest.fixture
def streams(dev):
    made = [dev.create_stream(), dev.create_stream()]
    yield made
    for s in made:
        s.close()


def py_sync(s):
    return _methods.PYTHON["Stream.sync"](s)


def test_sync_is_compiled_and_drops_what_completed_work_held(streams, dev):
    assert type(hip.Stream.__dict__["sync"]) is rocpy._hot.Method
    assert hip.Stream.sync is _methods.PYTHON["Stream.sync"]
    a, b = dev.context.alloc(64), dev.context.alloc(64)
    for s, sync in zip(streams, (lambda s: s.sync(), py_sync)):
        a.copy_from(b, s)
        assert len(s._lane.box[0]) == 1
        assert sync(s) is None
        assert s._lane.box[0] == []
        assert sync(s) is None                  # nothing held: nothing to drop
    a.close()
    b.close()


def test_bad_arguments_closed_streams_and_callback_errors_agree(streams, dev):
    hot, slow = streams
    assert outcome(lambda: hot.sync(1)) == outcome(lambda: _methods.PYTHON["Stream.sync"](hot, 1))
    assert outcome(lambda: hot.sync(x=1))[0] is TypeError
    for s in streams:
        s._errors.add(ZeroDivisionError("from a callback"))
    a, b = outcome(hot.sync), outcome(lambda: py_sync(slow))
    assert a == b and a[0] is rocpy.errors.CallbackError
    assert outcome(hot.sync) == outcome(lambda: py_sync(slow)) == ("ok", None)   # raised once
    for s in streams:       # a callback that fails while the wait runs: raised by the sync
        s.add_callback(lambda: 1 / 0)
    a, b = outcome(hot.sync), outcome(lambda: py_sync(slow))
    assert a == b and a[0] is rocpy.errors.CallbackError
    closed = dev.create_stream()
    closed.close()
    r = outcome(closed.sync)
    assert r == outcome(lambda: py_sync(closed)) and r[0] is rocpy.ClosedError


def test_a_callback_error_arriving_during_the_compiled_wait_is_raised(streams, dev,
                                                                       kernel_file):
    """No callback of this stream to report (the compiled case), but an error recorded
    for it while the wait runs (here by the kernel's emulation): the sync raises it."""
    if rocpy.backend().name != "stub":
        pytest.skip("a stub kernel records the error")
    hot, _ = streams
    module = hip.Module.load(kernel_file("vadd"), dev)
    k = module["vadd"]
    rocpy.stub.register_kernel("vadd", lambda d: hot._errors.add(ValueError("arrived")))
    buf = dev.context.alloc(64)
    try:
        k.launch(1, 1, (buf, buf, buf, np.int32(1)), hot)
        r = outcome(hot.sync)
    finally:
        rocpy.stub.unregister_kernel("vadd")
    assert r[0] is rocpy.errors.CallbackError and "arrived" in r[1], r
    assert outcome(hot.sync) == ("ok", None)
    buf.close()
    module.close()


def test_a_wait_past_the_first_spin_finishes_in_python(streams, dev, kernel_file, monkeypatch):
    """The compiled spin runs out: what it detached is held again and Python waits;
    the sync still returns once the work is done, having dropped what it held."""
    if rocpy.backend().name != "stub":
        pytest.skip("times a stub kernel")
    module = hip.Module.load(kernel_file("vadd"), dev)
    k = module["vadd"]
    release = threading.Event()
    rocpy.stub.register_kernel("vadd", lambda d: release.wait(10) and None)
    calls = []
    hot, _ = streams
    buf = dev.context.alloc(64)
    try:
        k.launch(1, 1, (buf, buf, buf, np.int32(1)), hot)
        held = list(hot._lane.box[0])
        assert held
        timer = threading.Timer(4 * _wait.SPIN_NS / 1e9, release.set)
        timer.start()
        orig = _wait.wait

        def counting(*a, **kw):
            calls.append(sys._getframe(1).f_locals["taken"])   # what Python's _take detached
            return orig(*a, **kw)
        monkeypatch.setattr(_wait, "wait", counting)
        assert hot.sync() is None
        timer.join()
    finally:
        release.set()
        hot.sync()
        rocpy.stub.unregister_kernel("vadd")
        buf.close()
        module.close()
    assert calls == [held]      # held again by the compiled path, then Python's to wait on
    assert hot._lane.box[0] == []


def test_a_failed_wait_raises_its_status_and_keeps_what_was_held(run_script, kernel_file):
    if rocpy.backend().name != "stub":
        pytest.skip("a failing kernel is the stub's")
    out = run_script(f"""
        import numpy as np, rocpy
        from rocpy import hip, stub
        from rocpy.hip import _methods
        dev = hip.Device(0)
        k = hip.Module.load({kernel_file("vadd")!r}, dev)["vadd"]
        stub.register_kernel("vadd", lambda d: 1)
        hot, slow = dev.create_stream(), dev.create_stream()
        b = dev.context.alloc(64)
        res = []
        for s, sync in ((hot, hot.sync), (slow, lambda: _methods.PYTHON["Stream.sync"](slow))):
            k.launch(1, 1, (b, b, b, np.int32(1)), s)
            try:
                sync()
            except rocpy.HipError as e:
                res.append((type(e).__name__, e.name, len(s._lane.box[0])))
        print(res[0] == res[1], res[0])
    """, ROCPY_BACKEND="stub")
    assert out.split(" ", 1)[0] == "True", out
    assert "hipErrorLaunchFailure" in out and ", 1)" in out, out
