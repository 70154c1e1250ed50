"""The compiled `Stream.sync` and `Event.sync` (rocpy/_native/hot/hot_sync.c) against
their Python definitions (`rocpy.hip._methods.PYTHON`): the same outcome (type,
message, status) in every case, what the work held dropped once it completed and
held again when the wait failed, and every case it declines handed to Python
(a closed stream, pending callback errors, callbacks to report, a wait longer than
the first spin, a capture)."""
from __future__ import annotations

import sys
import textwrap
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


def failing_vadd(run_script, kernel_file, body):
    """Run ``body`` on the stub after a prelude: ``dev``, ``k`` (vadd, made to fail by
    the stub's emulation), a buffer ``b`` and a list ``res``; prints what ``body`` does."""
    if rocpy.backend().name != "stub":
        pytest.skip("a failing kernel is the stub's")
    return run_script(textwrap.dedent(f"""
        import numpy as np, rocpy
        from rocpy import hip, stub
        from rocpy.hip import _methods
        dev = hip.Device(0)
        k = hip.Module.load({kernel_file("vadd")!r}, dev)["vadd"]
        stub.register_kernel("vadd", lambda d: 1)
        b = dev.context.alloc(64)
        res = []
    """) + textwrap.dedent(body), ROCPY_BACKEND="stub")


def test_a_failed_wait_raises_its_status_and_keeps_what_was_held(run_script, kernel_file):
    out = failing_vadd(run_script, kernel_file, """
        hot, slow = dev.create_stream(), dev.create_stream()
        for s, sync in ((hot, hot.sync), (slow, lambda: _methods.PYTHON["Stream.sync"](slow))):
            k.launch(1, 1, (b, b, b, np.int32(1)), s)
            try:
                sync()
            except rocpy.HipError as e:
                res.append((type(e).__name__, e.name, len(s._lane.box[0])))
        print(res[0] == res[1], res[0])
    """)
    assert out.split(" ", 1)[0] == "True", out
    assert "hipErrorLaunchFailure" in out and ", 1)" in out, out


def py_event_sync(ev):
    return _methods.PYTHON["Event.sync"](ev)


def test_event_sync_is_compiled_and_agrees_with_python(streams, dev):
    assert type(hip.Event.__dict__["sync"]) is rocpy._hot.Method
    assert hip.Event.sync is _methods.PYTHON["Event.sync"]
    a, b = dev.context.alloc(1 << 16), dev.context.alloc(1 << 16)
    s = streams[0]
    for blocking in (False, True):
        ev = dev.create_event(blocking=blocking)
        for sync in (ev.sync, lambda: py_event_sync(ev)):
            a.copy_from(b, s)
            ev.record(s)
            assert sync() is None
            assert ev.query() is True
        ev.sync()                                   # complete already: returns at once
        r = outcome(lambda: ev.sync(1))
        assert r == outcome(lambda: _methods.PYTHON["Event.sync"](ev, 1)) and r[0] is TypeError
        assert outcome(lambda: ev.sync(timeout=1))[0] is TypeError
        ev.close()
        r = outcome(ev.sync)
        assert r == outcome(lambda: py_event_sync(ev)) and r[0] is rocpy.ClosedError
    a.close()
    b.close()


def test_an_event_wait_past_the_first_spin_finishes_in_python(streams, dev, kernel_file,
                                                                monkeypatch):
    """The compiled spin runs out: Event.sync (Python) waits the rest; a complete event
    is the compiled spin's alone; during a capture begun by rocpy, Python waits."""
    if rocpy.backend().name != "stub":
        pytest.skip("times a stub kernel")
    module = hip.Module.load(kernel_file("vadd"), dev)
    k = module["vadd"]
    release = threading.Event()
    rocpy.stub.register_kernel("vadd", lambda d: release.wait(10) and None)
    calls = []
    s = streams[0]
    ev = dev.create_event()
    buf = dev.context.alloc(64)
    orig = _wait.wait

    def counting(*a, **kw):
        calls.append(a[0])
        return orig(*a, **kw)
    try:
        k.launch(1, 1, (buf, buf, buf, np.int32(1)), s)
        ev.record(s)
        timer = threading.Timer(4 * _wait.SPIN_NS / 1e9, release.set)
        timer.start()
        monkeypatch.setattr(_wait, "wait", counting)
        assert ev.sync() is None
        timer.join()
        assert calls == [_wait.EVENT]               # Python's wait took over once
        assert ev.query() is True
        calls.clear()
        assert ev.sync() is None                    # complete: the compiled spin alone
        assert calls == []
        _wait.captures[0] += 1                      # stands for a capture begun by rocpy
        try:
            assert ev.sync() is None
        finally:
            _wait.captures[0] -= 1
        assert calls == [_wait.EVENT]               # handed to Python (its blocking call)
    finally:
        release.set()
        s.sync()
        rocpy.stub.unregister_kernel("vadd")
        buf.close()
        module.close()
        ev.close()


def test_an_event_after_a_failed_kernel_waits_as_python(run_script, kernel_file):
    out = failing_vadd(run_script, kernel_file, """
        for compiled in (True, False):
            s, ev = dev.create_stream(), dev.create_event()
            k.launch(1, 1, (b, b, b, np.int32(1)), s)
            ev.record(s)
            try:
                ev.sync() if compiled else _methods.PYTHON["Event.sync"](ev)
                res.append("ok")
            except rocpy.HipError as e:
                res.append((type(e).__name__, e.name, e.status))
            try:
                s.sync()
            except rocpy.HipError as e:
                res[-1] = (res[-1], e.name)
        print(res[0] == res[1], res[0])
    """)
    assert out.split(" ", 1)[0] == "True", out
    assert "hipErrorLaunchFailure" in out, out   # the failure is reported, by one of them
