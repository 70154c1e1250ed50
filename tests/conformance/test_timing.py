"""Event timing: monotonic, consistent with the host clock, and the errors of
events that cannot be timed.  Platform independent unless marked."""
from __future__ import annotations

import time

import numpy as np
import pytest

import rocpy
from rocpy import hip


def test_elapsed_is_monotonic_and_within_host_time(dev, spin):
    x = dev.context.alloc(1 << 14)
    with dev.create_stream() as s:
        t0 = time.perf_counter()
        e0 = s.record()
        spin(x, 1, 80, stream=s)
        e1 = s.record()
        spin(x, 2, 40, stream=s)
        e2 = s.record()
        e2.sync()
        host_ms = (time.perf_counter() - t0) * 1000
        a, b = (e1 - e0), (e2 - e0)
        assert 0 < a <= b
        assert b <= host_ms * 1.05 + 1.0           # the device cannot outrun the host clock
        assert (e2 - e1) == pytest.approx(b - a, abs=0.5)
        assert (e0 - e2) == pytest.approx(-b, abs=0.5)
        for e in (e0, e1, e2):
            e.close()


def test_elapsed_of_back_to_back_records_is_small(dev):
    with dev.create_stream() as s:
        e0, e1 = s.record(), s.record()
        e1.sync()
        assert 0 <= (e1 - e0) < 100
        e0.close(), e1.close()


def test_elapsed_without_timing_is_invalid_handle(dev):
    with dev.create_stream() as s:
        e0 = s.record(timing=False)
        e1 = s.record()
        e1.sync()
        with pytest.raises(rocpy.InvalidHandleError) as info:
            e1 - e0
        assert isinstance(info.value, rocpy.HipError)
        assert info.value.name == "hipErrorInvalidHandle"
        assert "timing=False" in str(info.value)
        e0.close(), e1.close()


def test_elapsed_of_unrecorded_event_is_invalid_handle(dev):
    e0 = hip.Event(dev)
    with dev.create_stream() as s:
        e1 = s.record()
        e1.sync()
        with pytest.raises(rocpy.InvalidHandleError):
            e1 - e0
    e0.close(), e1.close()


def test_elapsed_of_incomplete_event_is_not_ready(dev, spin):
    x = dev.context.alloc(1 << 14)
    with dev.create_stream() as s:
        e0 = s.record()
        spin(x, 1, 300, stream=s)
        e1 = s.record()
        with pytest.raises(rocpy.NotReadyError) as info:
            e1 - e0
        assert info.value.name == "hipErrorNotReady"
        assert e1.query() is False
        e1.sync()
        assert e1.query() is True
        assert (e1 - e0) > 0
        e0.close(), e1.close()


def test_never_recorded_event_is_complete(dev):
    with hip.Event(dev) as e:
        assert e.query() is True
        e.sync()


def test_interprocess_event_needs_timing_off(dev):
    with pytest.raises(rocpy.InvalidValueError) as info:
        hip.Event(dev, interprocess=True)
    assert info.value.name == "hipErrorInvalidValue"
    hip.Event(dev, interprocess=True, timing=False).close()


def test_blocking_event_synchronizes(dev, spin):
    x = dev.context.alloc(1 << 14)
    with dev.create_stream() as s, hip.Event(dev, blocking=True) as e:
        spin(x, 4, 50, stream=s)
        e.record(s)
        e.sync()
        assert e.query()
        out = np.empty(1 << 12, np.uint32)
        x.copy_to(out)
        assert (out == 4).all()
