"""Interrupt vs polling signals as ROCr's hsa_amd_signal_create makes them, and the wait-state hint.

ROCr: a signal with HSA_AMD_SIGNAL_IPC or HSA_AMD_SIGNAL_AMD_GPU_ONLY, any
signal while HSA_ENABLE_INTERRUPT=0, or one whose consumers name no CPU agent
is a DefaultSignal (BusyWaitSignal::WaitRelaxed polls whatever the hint);
the others are InterruptSignals, whose 'blocked' waits sleep on an event
after a short spin.  The stub counts the polling in rocpy.stub.hsa_busy_wait_ns:
a timed-out wait of T ns on a polling signal counts T, on an interrupt
signal with the 'blocked' hint less than a millisecond.
"""
from __future__ import annotations

import pytest

from rocpy import HsaError, hsa

TIMEOUT = 0.03
T_NS = int(TIMEOUT * 1e9)


def busy_of(sig, wait_state="blocked"):
    """Busy nanoseconds the stub counts for one raw wait timing out after TIMEOUT
    (one call, not Signal.wait's slices: the count is then exactly the timeout's)."""
    from rocpy import stub
    from rocpy.hsa import lib
    from rocpy.hsa._common import ticks
    state = lib.HSA_WAIT_STATE_BLOCKED if wait_state == "blocked" else lib.HSA_WAIT_STATE_ACTIVE
    before = stub.hsa_busy_wait_ns()
    assert lib.hsa_signal_wait_scacquire(sig.handle, lib.HSA_SIGNAL_CONDITION_EQ, 12345,
                                         ticks(TIMEOUT), state) != 12345
    return stub.hsa_busy_wait_ns() - before


def busy_of_any(signals):
    from rocpy import stub
    from rocpy.hsa import ffi, lib
    from rocpy.hsa._common import ticks
    n = len(signals)
    hs = ffi.new("hsa_signal_t[]", [s.handle for s in signals])
    cs = ffi.new("hsa_signal_condition_t[]", [lib.HSA_SIGNAL_CONDITION_EQ] * n)
    vs = ffi.new("hsa_signal_value_t[]", [0] * n)
    before = stub.hsa_busy_wait_ns()
    assert lib.hsa_amd_signal_wait_any(n, hs, cs, vs, ticks(TIMEOUT), lib.HSA_WAIT_STATE_BLOCKED,
                                       ffi.NULL) == 0xFFFFFFFF
    return stub.hsa_busy_wait_ns() - before


@pytest.mark.parametrize("make", [
    lambda gpu, cpu: hsa.Signal(1, gpu_only=True),
    lambda gpu, cpu: hsa.Signal(1, ipc=True),
    lambda gpu, cpu: hsa.Signal(1, [gpu]),            # no CPU among the consumers
], ids=["gpu_only", "ipc", "gpu consumers"])
def test_polling_signals_poll_whatever_the_hint(stub_only, gpu, cpu, make):
    sig = make(gpu, cpu)
    assert busy_of(sig, "blocked") >= T_NS * 0.99
    sig.close()


@pytest.mark.parametrize("consumers", [None, "cpu", "both"])
def test_interrupt_signals_follow_the_hint(stub_only, gpu, cpu, consumers):
    agents = {None: None, "cpu": [cpu], "both": [gpu, cpu]}[consumers]
    sig = hsa.Signal(1, agents)
    assert busy_of(sig, "blocked") < 1_000_000
    assert busy_of(sig, "active") >= T_NS * 0.99
    sig.close()


def test_wait_any_polls_if_one_signal_polls(stub_only, rt):
    a, b = hsa.Signal(1), hsa.Signal(1, gpu_only=True)
    assert busy_of_any([a]) < 1_000_000
    assert busy_of_any([a, b]) >= T_NS * 0.99
    a.close()
    b.close()


def test_interrupts_off(stub_only, run_python):
    code = """
        from rocpy import hsa, stub
        from rocpy.hsa import lib
        from rocpy.hsa._common import ticks
        with hsa.Runtime():
            sig = hsa.Signal(1)
            before = stub.hsa_busy_wait_ns()
            lib.hsa_signal_wait_scacquire(sig.handle, lib.HSA_SIGNAL_CONDITION_EQ, 0, ticks(0.03),
                                          lib.HSA_WAIT_STATE_BLOCKED)
            print("BUSY", stub.hsa_busy_wait_ns() - before)
            sig.close()
    """
    proc = run_python(code, env={"HSA_ENABLE_INTERRUPT": "0"})
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.split("BUSY")[1]) >= T_NS * 0.99


def test_attributes_and_duplicate_consumers(rt, gpu, cpu):
    assert hsa.Signal(0).attributes == frozenset()
    s = hsa.Signal(0, [gpu], ipc=True, gpu_only=True)
    assert s.attributes == {"ipc", "gpu_only"}
    s.close()
    with pytest.raises(HsaError) as e:       # validated for interrupt signals only
        hsa.Signal(0, [cpu, cpu])
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    hsa.Signal(0, [cpu, cpu], gpu_only=True).close()
