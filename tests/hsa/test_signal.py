"""hsa.Signal: value operations in every memory order, waits, wait_any, async handlers."""
from __future__ import annotations

import threading
import time
import weakref

import pytest

from rocpy import debug, hsa
from rocpy.errors import CallbackError, CallbackWarning, ClosedError


def later(delay: float, fn) -> threading.Timer:
    """Run `fn` on another thread after `delay` seconds; join it before closing what it uses
    (destroying a signal while another thread is inside an operation on it is undefined)."""
    timer = threading.Timer(delay, fn)
    timer.start()
    return timer


@pytest.fixture
def sig(rt):
    with hsa.Signal(0, runtime=rt) as s:
        yield s


def test_create_load_store(rt):
    s = hsa.Signal(7, runtime=rt)
    assert s.load() == s.value == 7
    assert s.runtime is rt
    assert debug.live_objects() == {"Runtime": 1, "Signal": 1}
    s.store(-3)
    assert s.load("relaxed") == -3
    s.close()
    assert s.runtime is None
    assert debug.live_objects() == {"Runtime": 1}


def test_consumers(rt, gpu, cpu):
    with hsa.Signal(1, consumers=[gpu, cpu]) as s:
        assert s.load() == 1


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "acquire"])
def test_load_orders(sig, order):
    sig.store(5)
    assert sig.load(order) == 5


@pytest.mark.parametrize("order", ["relaxed", "screlease", "release"])
def test_store_orders(sig, order):
    sig.store(11, order)
    assert sig.load() == 11
    sig.silent_store(12, order)
    assert sig.load() == 12


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "screlease", "scacq_screl",
                                   "acquire", "release", "acq_rel"])
def test_read_modify_write_in_every_order(sig, order):
    sig.store(0b1100)
    assert sig.exchange(0b1010, order) == 0b1100
    sig.and_(0b0110, order)
    assert sig.load() == 0b0010
    sig.or_(0b1000, order)
    assert sig.load() == 0b1010
    sig.xor(0b1111, order)
    assert sig.load() == 0b0101
    sig.add(10, order)
    sig.subtract(3, order)
    assert sig.load() == 12
    assert sig.cas(12, 40, order) == 12          # success: returns the expected value
    assert sig.cas(12, 50, order) == 40          # failure: returns what it saw
    assert sig.load() == 40


def test_orders_are_checked(sig):
    with pytest.raises(ValueError, match="load: memory order must be one of relaxed, scacquire"):
        sig.load("screlease")
    with pytest.raises(ValueError, match="store: memory order"):
        sig.store(1, "scacquire")
    with pytest.raises(ValueError, match="add: memory order"):
        sig.add(1, "seq_cst")
    with pytest.raises(ValueError, match="wait: memory order"):
        sig.wait("eq", 0, order="screlease")


def test_values_are_checked(sig):
    with pytest.raises(OverflowError, match="signed 64-bit"):
        sig.store(1 << 63)
    with pytest.raises(TypeError, match="must be an int"):
        sig.add(1.5)
    with pytest.raises(TypeError, match="must be an int"):
        sig.store(True)
    sig.store(-(1 << 63))
    assert sig.load() == -(1 << 63)


# ---- waits --------------------------------------------------------------------------

def test_wait_returns_at_once_when_met(sig):
    sig.store(3)
    t0 = time.monotonic()
    assert sig.wait("gte", 3, timeout=5) == 3
    assert sig.wait("ne", 0) == 3
    assert sig.wait("lt", 4, wait_state="active") == 3
    assert time.monotonic() - t0 < 1


def test_wait_timeout_returns_the_value(sig):
    sig.store(1)
    t0 = time.monotonic()
    assert sig.wait("eq", 0, timeout=0.05) == 1
    elapsed = time.monotonic() - t0
    assert 0.04 <= elapsed < 2
    assert sig.wait("eq", 0, timeout=0) == 1


def test_wait_timeout_can_raise(sig):
    sig.store(4)
    with pytest.raises(hsa.WaitTimeout) as e:
        sig.wait("lt", 2, timeout=0.02, raise_on_timeout=True)
    assert e.value.value == 4
    assert isinstance(e.value, TimeoutError)


def test_wait_is_woken_by_another_thread(sig):
    sig.store(1)
    timer = later(0.05, lambda: sig.store(0))
    t0 = time.monotonic()
    assert sig.wait("eq", 0, timeout=10) == 0
    assert time.monotonic() - t0 < 5
    timer.join()


def test_wait_without_timeout_spans_many_slices(sig):
    sig.store(1)
    timer = later(0.25, lambda: sig.subtract(1))
    assert sig.wait("eq", 0) == 0
    timer.join()


def test_wait_arguments_are_checked(sig):
    with pytest.raises(ValueError, match="condition must be one of eq, ne, lt, gte"):
        sig.wait("le", 0)
    with pytest.raises(ValueError, match="wait_state must be"):
        sig.wait("eq", 0, wait_state="spin")
    with pytest.raises(ValueError, match="timeout"):
        sig.wait("eq", 0, timeout=-1)


def test_wait_any(rt):
    a, b = hsa.Signal(1), hsa.Signal(1)
    b.store(0)
    assert hsa.Signal.wait_any([a, b], "eq", 0, timeout=5) == (1, 0)
    assert hsa.Signal.wait_any([a, b], ["eq", "ne"], [1, 5], timeout=5) == (0, 1)
    b.store(1)
    assert hsa.Signal.wait_any([a, b], "eq", 0, timeout=0.02) == (None, None)
    with pytest.raises(hsa.WaitTimeout):
        hsa.Signal.wait_any([a, b], "eq", 0, timeout=0.01, raise_on_timeout=True)
    timer = later(0.05, lambda: a.store(0))
    assert hsa.Signal.wait_any([a, b], "eq", 0, timeout=10) == (0, 0)
    timer.join()
    with pytest.raises(ValueError, match="at least one signal"):
        hsa.Signal.wait_any([], "eq", 0)
    with pytest.raises(ValueError, match="2 signals need 2 conditions and values"):
        hsa.Signal.wait_any([a, b], ["eq"], 0)
    with pytest.raises(TypeError, match=r"signals\[1\] must be an hsa.Signal"):
        hsa.Signal.wait_any([a, 42], "eq", 0)
    b.close()
    with pytest.raises(ClosedError):
        hsa.Signal.wait_any([a, b], "eq", 0)


# ---- closed signals ----------------------------------------------------------------------

def test_closed_signal_refuses_every_operation(rt):
    s = hsa.Signal(1)
    s.close()
    s.close()
    uses = [s.load, lambda: s.store(1), lambda: s.silent_store(1), lambda: s.exchange(1),
            lambda: s.cas(1, 2), lambda: s.add(1), lambda: s.subtract(1), lambda: s.and_(1),
            lambda: s.or_(1), lambda: s.xor(1), lambda: s.wait("eq", 0),
            lambda: s.on("eq", 0, print), lambda: s.value]
    for use in uses:
        with pytest.raises(ClosedError, match="Signal is closed"):
            use()
    assert "closed" in repr(s)


# ---- asynchronous handlers -------------------------------------------------------------------

def test_handler_runs_on_the_dispatcher_thread(sig):
    seen = []
    done = threading.Event()

    def callback(value):
        seen.append((value, threading.current_thread().name))
        done.set()

    sig.store(3)
    sig.on("lt", 1, callback)
    assert sig.pending_handlers == 1
    sig.store(0)
    assert done.wait(10)
    assert seen == [(0, "rocpy-dispatcher")]
    deadline = time.monotonic() + 5
    while sig.pending_handlers and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sig.pending_handlers == 0


def test_handler_already_satisfied_fires(sig):
    done = threading.Event()
    sig.on("eq", 0, lambda v: done.set())
    assert done.wait(10)


def test_handler_exception_is_raised_by_the_next_use(sig):
    done = threading.Event()

    def bad(value):
        done.set()
        raise RuntimeError(f"handler saw {value}")

    # The value already meets the condition: the handler may run before `on` returns, so
    # the warning is caught from before `on`.  The dispatcher warns before the signal
    # holds the error (rocpy._dispatcher.report): once it is pending, the warning was
    # issued, however late the dispatcher thread ran.
    with pytest.warns(CallbackWarning, match="handler saw 0"):
        sig.on("eq", 0, bad)
        assert done.wait(10)
        deadline = time.monotonic() + 10
        while not sig._bad and time.monotonic() < deadline:
            time.sleep(0.005)
        assert sig._bad
    with pytest.raises(CallbackError, match="RuntimeError: handler saw 0") as e:
        sig.load()
    assert isinstance(e.value.__cause__, RuntimeError)
    assert sig.load() == 0             # reported once


def test_handler_keeps_the_signal_alive(rt):
    done = threading.Event()
    s = hsa.Signal(1)
    s.on("eq", 0, lambda v: done.set())
    ref = weakref.ref(s)
    del s
    debug.collect()
    assert ref() is not None and debug.live_objects().get("Signal") == 1
    ref().store(0)
    assert done.wait(10)
    deadline = time.monotonic() + 5
    while ref() is not None and time.monotonic() < deadline:
        debug.collect()
        time.sleep(0.01)
    assert ref() is None


def test_closing_forgets_pending_handlers(rt):
    called = []
    s = hsa.Signal(1)
    s.on("eq", 0, called.append)
    s.close()
    assert s.pending_handlers == 0
    time.sleep(0.05)
    assert called == []


def test_handler_arguments_are_checked(sig):
    with pytest.raises(TypeError, match="callback must be callable"):
        sig.on("eq", 0, None)
    with pytest.raises(ValueError, match="condition must be one of"):
        sig.on("gt", 0, print)


def test_compiled_loads_and_stores_match_the_cffi_ones(sig):
    """The compiled value operations (rocpy._hot, by integer handle) and the cffi ones
    they replace read and write the same values in every order, and refuse the same."""
    from rocpy import _hotpath
    from rocpy.hsa import signal as signal_module
    if not _hotpath.available():
        pytest.skip("rocpy._hot is not built")
    compiled = signal_module._by_int
    try:
        with _hotpath.disabled():
            fallback = signal_module._int_ops(signal_module._ops)   # cffi: takes sig._h
    finally:
        signal_module._int_ops(signal_module._ops)                  # _BY_INT back on
    assert signal_module._BY_INT and compiled["load"]["scacquire"].func is not None
    for op in ("store", "silent_store"):
        for order in compiled[op]:
            for value in (0, -1, 2**63 - 1, -(2**63), 12345):
                compiled[op][order](sig._hv, value)
                assert fallback["load"]["relaxed"](sig._h) == value
                fallback[op][order](sig._h, value ^ 1)
                assert all(compiled["load"][o](sig._hv) == value ^ 1 for o in compiled["load"])
    for bad, exc in ((2**63, OverflowError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(exc):
            sig.store(bad)
    with pytest.raises(ValueError, match="memory order"):
        sig.load("screlease")
