"""Signals: value operations in every memory order, blocking waits with each
condition, wait-any, async handlers, groups, and the abort on dead handles."""
from __future__ import annotations

import threading
import time

import pytest

from hsa_raw import (SECOND, UINT32_MAX, WAIT_FOREVER, assert_aborts, check, ffi, keep, lib, run_python, signal,
                     wait_eq)

NULL = ffi.NULL
RMW_ORDERS = ["relaxed", "scacquire", "screlease", "scacq_screl", "acquire", "release", "acq_rel"]
C = {"eq": lib.HSA_SIGNAL_CONDITION_EQ, "ne": lib.HSA_SIGNAL_CONDITION_NE,
     "lt": lib.HSA_SIGNAL_CONDITION_LT, "gte": lib.HSA_SIGNAL_CONDITION_GTE}


@pytest.fixture
def sig(rt):
    s = signal(10)
    yield s
    check(lib.hsa_signal_destroy(s))


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "acquire"])
def test_load(sig, order):
    assert getattr(lib, f"hsa_signal_load_{order}")(sig) == 10


@pytest.mark.parametrize("op", ["store_relaxed", "store_screlease", "store_release", "silent_store_relaxed",
                                "silent_store_screlease"])
def test_stores(sig, op):
    getattr(lib, f"hsa_signal_{op}")(sig, -7)
    assert lib.hsa_signal_load_scacquire(sig) == -7


@pytest.mark.parametrize("order", RMW_ORDERS)
@pytest.mark.parametrize("op,operand,expected", [("add", 5, 15), ("subtract", 3, 7), ("and", 6, 2), ("or", 5, 15),
                                                 ("xor", 3, 9)])
def test_read_modify_write(sig, op, order, operand, expected):
    getattr(lib, f"hsa_signal_{op}_{order}")(sig, operand)
    assert lib.hsa_signal_load_relaxed(sig) == expected


@pytest.mark.parametrize("order", RMW_ORDERS)
def test_exchange_and_cas(sig, order):
    assert getattr(lib, f"hsa_signal_exchange_{order}")(sig, 20) == 10
    cas = getattr(lib, f"hsa_signal_cas_{order}")
    assert cas(sig, 99, 30) == 20                # fails: the observed value comes back
    assert lib.hsa_signal_load_relaxed(sig) == 20
    assert cas(sig, 20, 30) == 20                # succeeds
    assert lib.hsa_signal_load_relaxed(sig) == 30


def test_values_are_64_bit_and_wrap(sig):
    lib.hsa_signal_store_relaxed(sig, 2**63 - 1)
    lib.hsa_signal_add_relaxed(sig, 1)
    assert lib.hsa_signal_load_relaxed(sig) == -2**63


@pytest.mark.parametrize("order", ["relaxed", "scacquire", "acquire"])
@pytest.mark.parametrize("cond,compare", [("eq", 10), ("ne", 3), ("lt", 11), ("gte", 10)])
def test_wait_already_satisfied(sig, order, cond, compare):
    wait = getattr(lib, f"hsa_signal_wait_{order}")
    assert wait(sig, C[cond], compare, WAIT_FOREVER, lib.HSA_WAIT_STATE_BLOCKED) == 10


@pytest.mark.parametrize("hint", ["HSA_WAIT_STATE_BLOCKED", "HSA_WAIT_STATE_ACTIVE"])
def test_wait_times_out_with_the_current_value(sig, hint):
    start = time.monotonic()
    assert lib.hsa_signal_wait_scacquire(sig, C["eq"], 0, SECOND // 20, getattr(lib, hint)) == 10
    assert 0.045 < time.monotonic() - start < 2


def later(delay, fn, *args):
    t = threading.Thread(target=lambda: (time.sleep(delay), fn(*args)))
    t.start()
    return t


WAKERS = {
    "store": lambda s: lib.hsa_signal_store_screlease(s, 0),
    "subtract": lambda s: lib.hsa_signal_subtract_screlease(s, 10),
    "add": lambda s: lib.hsa_signal_add_relaxed(s, -10),
    "and": lambda s: lib.hsa_signal_and_relaxed(s, 0),
    "xor": lambda s: lib.hsa_signal_xor_relaxed(s, 10),
    "exchange": lambda s: lib.hsa_signal_exchange_relaxed(s, 0),
    "cas": lambda s: lib.hsa_signal_cas_scacq_screl(s, 10, 0),
}


@pytest.mark.parametrize("waker", sorted(WAKERS))
def test_every_change_wakes_a_blocked_waiter(sig, waker):
    t = later(0.05, WAKERS[waker], sig)
    assert wait_eq(sig, 0, 5 * SECOND) == 0
    t.join()


@pytest.mark.parametrize("cond,final", [("ne", 11), ("lt", 9), ("gte", 12)])
def test_conditions_block_until_met(sig, cond, final):
    start = time.monotonic()      # before the waker starts: a descheduled main thread
    t = later(0.05, lib.hsa_signal_store_relaxed, sig, final)   # cannot shorten what it sees
    assert lib.hsa_signal_wait_relaxed(sig, C[cond], {"ne": 10, "lt": 10, "gte": 12}[cond], 5 * SECOND,
                                       lib.HSA_WAIT_STATE_BLOCKED) == final
    assert time.monotonic() - start >= 0.04
    t.join()


def test_waiting_does_not_spin(sig):
    t = later(0.3, lib.hsa_signal_store_screlease, sig, 0)
    cpu0 = time.process_time()
    assert wait_eq(sig, 0) == 0
    assert time.process_time() - cpu0 < 0.1       # a spinning waiter burns ~0.3 s of CPU here
    t.join()


def test_destroying_a_waited_signal_releases_the_waiter(rt):
    s = signal(1)
    t = later(0.05, lib.hsa_signal_destroy, s)
    assert wait_eq(s, 0, 5 * SECOND) == 0          # ROCr's waits return 0 once the signal is gone
    t.join()


def test_wait_any(rt):
    a, b = signal(1), signal(1)
    sigs = ffi.new("hsa_signal_t[2]", [a, b])
    conds = ffi.new("hsa_signal_condition_t[2]", [C["eq"], C["eq"]])
    values = ffi.new("hsa_signal_value_t[2]", [0, 0])
    got = ffi.new("hsa_signal_value_t*")
    assert lib.hsa_amd_signal_wait_any(2, sigs, conds, values, SECOND // 50, lib.HSA_WAIT_STATE_BLOCKED,
                                       got) == UINT32_MAX
    t = later(0.05, lib.hsa_signal_store_relaxed, b, 0)
    assert lib.hsa_amd_signal_wait_any(2, sigs, conds, values, 5 * SECOND, lib.HSA_WAIT_STATE_BLOCKED, got) == 1
    assert got[0] == 0
    t.join()
    lib.hsa_signal_store_relaxed(b, 1)
    t = later(0.05, lib.hsa_signal_destroy, a)
    assert lib.hsa_amd_signal_wait_any(2, sigs, conds, values, 5 * SECOND, lib.HSA_WAIT_STATE_BLOCKED,
                                       got) == UINT32_MAX     # a destroyed while waited on ends the wait
    t.join()
    check(lib.hsa_signal_destroy(b))


def test_create_and_destroy_bad_input(rt):
    check(lib.hsa_signal_create(0, 0, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    out = ffi.new("hsa_signal_t*")
    check(lib.hsa_signal_create(0, 2, NULL, out), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    from hsa_raw import cpu_agent
    twice = ffi.new("hsa_agent_t[2]", [cpu_agent(), cpu_agent()])
    check(lib.hsa_signal_create(0, 2, twice, out), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_signal_create(0, 2, twice, lib.HSA_AMD_SIGNAL_IPC, out))   # ROCr checks interrupt signals only
    check(lib.hsa_signal_destroy(out[0]))
    check(lib.hsa_signal_destroy(ffi.new("hsa_signal_t*")[0]), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(out[0]), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(lib.hsa_signal_destroy(ffi.new("hsa_signal_t*", {"handle": 0x1234})[0]), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)


def test_a_destroyed_handle_stays_dead_when_its_slot_is_reused(rt):
    old = signal(5)
    check(lib.hsa_signal_destroy(old))
    new = signal(6)                              # likely the same slot
    assert new.handle != old.handle
    check(lib.hsa_signal_destroy(old), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    assert lib.hsa_signal_load_relaxed(new) == 6
    check(lib.hsa_signal_destroy(new))


@pytest.mark.parametrize("call,handle,why", [
    ("lib.hsa_signal_load_relaxed(s)", "destroyed", "the signal was destroyed"),
    ("lib.hsa_signal_store_screlease(s, 1)", "null", "the null signal"),
    ("lib.hsa_signal_add_scacq_screl(s, 1)", "forged", "not a signal"),
    ("lib.hsa_signal_cas_relaxed(s, 0, 1)", "destroyed", "the signal was destroyed"),
    ("lib.hsa_signal_wait_scacquire(s, 0, 0, 1000, 0)", "destroyed", "the signal was destroyed"),
    ("lib.hsa_amd_signal_wait_any(1, ffi.new('hsa_signal_t[1]', [s]), ffi.new('hsa_signal_condition_t[1]'),"
     " ffi.new('hsa_signal_value_t[1]'), 0, 0, ffi.NULL)", "forged", "not a signal"),
    ("lib.hsa_amd_signal_wait_any(2, ffi.new('hsa_signal_t[2]', [signal(1), s]),"
     " ffi.new('hsa_signal_condition_t[2]'), ffi.new('hsa_signal_value_t[2]'), 1000, 0, ffi.NULL)",
     "destroyed", "the signal was destroyed"),
])
def test_operations_on_dead_handles_abort(call, handle, why):
    setup = {"destroyed": "s = signal(1); lib.hsa_signal_destroy(s)",
             "null": "s = ffi.new('hsa_signal_t*')[0]",
             "forged": "s = ffi.new('hsa_signal_t*', {'handle': 0x7777})[0]"}[handle]
    proc = run_python(f"{setup}\n{call}\nprint('survived')")
    assert_aborts(proc, call.split("(")[0].replace("lib.", ""), why)
    assert "survived" not in proc.stdout


def test_async_handler_runs_on_one_runtime_thread(rt):
    calls, threads = [], set()
    done = threading.Event()

    @ffi.callback("bool(hsa_signal_value_t, void*)")
    def handler(value, arg):
        calls.append(value)
        threads.add(threading.get_ident())
        if len(calls) == 3:
            done.set()
        return len(calls) < 3                    # false unregisters
    keep(handler)

    ran = threading.Event()

    @ffi.callback("void(void*)")
    def function(arg):
        threads.add(threading.get_ident())
        ran.set()
    keep(function)
    s = signal(1)
    check(lib.hsa_amd_signal_async_handler(s, C["eq"], 0, handler, NULL))
    time.sleep(0.05)
    assert calls == []
    lib.hsa_signal_store_screlease(s, 0)
    assert done.wait(5)
    time.sleep(0.05)
    assert calls == [0, 0, 0]                    # kept while true, called while the condition holds
    lib.hsa_signal_store_screlease(s, 1)
    lib.hsa_signal_store_screlease(s, 0)
    time.sleep(0.05)
    assert len(calls) == 3                       # unregistered
    check(lib.hsa_amd_async_function(function, NULL))
    assert ran.wait(5)
    assert len(threads) == 1 and threading.get_ident() not in threads
    check(lib.hsa_signal_destroy(s))


def test_async_handler_bad_input(rt):
    @ffi.callback("bool(hsa_signal_value_t, void*)")
    def handler(value, arg):
        return False
    s = signal(1)
    check(lib.hsa_amd_signal_async_handler(s, C["eq"], 0, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_signal_async_handler(ffi.new("hsa_signal_t*")[0], C["eq"], 0, handler, NULL),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(s))
    check(lib.hsa_amd_signal_async_handler(s, C["eq"], 0, handler, NULL), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(lib.hsa_amd_async_function(NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_handler_of_a_destroyed_signal_is_dropped(rt):
    calls = []

    @ffi.callback("bool(hsa_signal_value_t, void*)")
    def handler(value, arg):
        calls.append(value)
        return True
    keep(handler)
    s = signal(1)
    check(lib.hsa_amd_signal_async_handler(s, C["eq"], 0, handler, NULL))
    check(lib.hsa_signal_destroy(s))
    time.sleep(0.05)
    assert calls == []


def test_signal_groups(rt):
    a, b = signal(1), signal(1)
    group = ffi.new("hsa_signal_group_t*")
    check(lib.hsa_signal_group_create(2, ffi.new("hsa_signal_t[2]", [a, b]), 0, NULL, group))
    lib.hsa_signal_store_relaxed(a, 0)
    conds = ffi.new("hsa_signal_condition_t[2]", [C["eq"], C["eq"]])
    values = ffi.new("hsa_signal_value_t[2]", [0, 0])
    which, value = ffi.new("hsa_signal_t*"), ffi.new("hsa_signal_value_t*")
    check(lib.hsa_signal_group_wait_any_scacquire(group[0], conds, values, lib.HSA_WAIT_STATE_BLOCKED, which, value))
    assert which[0].handle == a.handle and value[0] == 0
    check(lib.hsa_signal_group_destroy(group[0]))
    check(lib.hsa_signal_group_destroy(group[0]), lib.HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP)
    check(lib.hsa_signal_group_create(0, NULL, 0, NULL, group), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(b))
    check(lib.hsa_signal_group_create(1, ffi.new("hsa_signal_t[1]", [b]), 0, NULL, group),
          lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(lib.hsa_signal_destroy(a))


def test_many_threads_hammering_one_signal(sig):
    lib.hsa_signal_store_relaxed(sig, 0)
    n_threads, n_ops = 8, 5000

    def work():
        for _ in range(n_ops):
            lib.hsa_signal_add_scacq_screl(sig, 1)
    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    assert lib.hsa_signal_wait_scacquire(sig, C["eq"], n_threads * n_ops, 20 * SECOND,
                                         lib.HSA_WAIT_STATE_BLOCKED) == n_threads * n_ops
    for t in threads:
        t.join()
