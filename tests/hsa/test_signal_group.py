"""hsa.SignalGroup: hsa_signal_group_create/destroy and an interruptible group wait_any."""
from __future__ import annotations

import os
import signal as os_signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import rocpy
from rocpy import ClosedError, debug, hsa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_wait_any_returns_the_signal_met(rt):
    a, b, c = hsa.Signal(1), hsa.Signal(1), hsa.Signal(1)
    with hsa.SignalGroup([a, b, c]) as group:
        assert len(group) == 3 and group.signals == (a, b, c)
        assert debug.live_objects()["SignalGroup"] == 1
        b.store(0)
        assert group.wait_any("eq", 0) == (1, b, 0)
        assert group.wait_any(["eq", "eq", "gte"], [5, 5, 1], order="relaxed") == (2, c, 1)
        threading.Timer(0.05, a.store, (0,)).start()
        b.store(1)
        index, sig, value = group.wait_any("eq", 0, timeout=10)
        assert (index, sig, value) == (0, a, 0)
    for s in (a, b, c):
        s.close()


def test_timeout(rt):
    a = hsa.Signal(1)
    with hsa.SignalGroup([a]) as group:
        assert group.wait_any("eq", 0, timeout=0) == (None, None, None)
        assert group.wait_any("eq", 0, timeout=0.02, wait_state="active") == (None, None, None)
        with pytest.raises(hsa.WaitTimeout):
            group.wait_any("eq", 0, timeout=0.01, raise_on_timeout=True)
    a.close()


def test_the_group_holds_its_signals(rt):
    a = hsa.Signal(0)
    group = hsa.SignalGroup([a])
    a.close()                                  # closed for use, destroyed after the group
    assert debug.live_objects()["Signal"] == 1
    with pytest.raises(ClosedError):
        group.wait_any("eq", 0)
    group.close()
    assert debug.live_objects() == {"Runtime": 1}
    with pytest.raises(ClosedError):
        group.wait_any("eq", 0)


def test_misuse(rt, gpu):
    a = hsa.Signal(0)
    with pytest.raises(ValueError, match="at least one"):
        hsa.SignalGroup([])
    with pytest.raises(TypeError, match=r"signals\[1\]"):
        hsa.SignalGroup([a, 3])
    with pytest.raises(TypeError, match="consumers"):
        hsa.SignalGroup([a], ["gpu"])
    with hsa.SignalGroup([a], [gpu]) as group:
        with pytest.raises(ValueError, match="need 1 conditions"):
            group.wait_any(["eq", "eq"], 0)
        with pytest.raises(ValueError, match="condition"):
            group.wait_any("le", 0)
        with pytest.raises(ValueError, match="wait_state"):
            group.wait_any("eq", 0, wait_state="sleepy")
        with pytest.raises(ValueError, match="order"):
            group.wait_any("eq", 0, order="screlease")
    b = hsa.Signal(0)
    b.close()
    with pytest.raises(ClosedError):
        hsa.SignalGroup([a, b])
    a.close()


def test_raw_statuses(rt):
    from rocpy.hsa import ffi, lib
    sig = hsa.Signal(0)
    out = ffi.new("hsa_signal_group_t *")
    hs = ffi.new("hsa_signal_t[1]", [sig.handle])
    assert lib.hsa_signal_group_create(0, hs, 0, ffi.NULL, out) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    bogus = ffi.new("hsa_signal_t[1]", [{"handle": 0x123456789}])
    assert lib.hsa_signal_group_create(1, bogus, 0, ffi.NULL, out) == lib.HSA_STATUS_ERROR_INVALID_SIGNAL
    assert lib.hsa_signal_group_create(1, hs, 0, ffi.NULL, out) == 0
    assert lib.hsa_signal_group_destroy(out[0]) == 0
    assert lib.hsa_signal_group_destroy(out[0]) == lib.HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP
    conds = ffi.new("hsa_signal_condition_t[1]", [lib.HSA_SIGNAL_CONDITION_EQ])
    vals = ffi.new("hsa_signal_value_t[1]", [0])
    assert lib.hsa_signal_group_wait_any_scacquire(out[0], conds, vals, lib.HSA_WAIT_STATE_BLOCKED,
                                                   ffi.NULL, ffi.NULL) == lib.HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP
    sig.close()


def test_ctrl_c_interrupts_a_group_wait():
    code = textwrap.dedent("""
        from rocpy import hsa
        with hsa.Runtime():
            a, b = hsa.Signal(1), hsa.Signal(1)
            group = hsa.SignalGroup([a, b])
            try:
                print("WAITING", flush=True)   # inside the try: a SIGINT from here on is caught
                group.wait_any("eq", 0)
            except KeyboardInterrupt:
                print("INTERRUPTED", flush=True)
            group.close(); a.close(); b.close()
    """)
    env = dict(os.environ, ROCPY_BACKEND=rocpy.backend().name)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "WAITING"
        time.sleep(0.3)                           # inside the wait (it never returns by itself)
        proc.send_signal(os_signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "INTERRUPTED" in out, err
    assert proc.returncode == 0, err
