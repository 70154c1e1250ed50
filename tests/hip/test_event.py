"""rocpy.hip.Event: flags, record, query, sync, end - start."""
from __future__ import annotations

import pytest

import rocpy
from rocpy import hip


def test_flags(dev):
    with hip.Event(dev) as e:
        assert e.timing and not e.blocking and not e.interprocess and e.device is dev
        assert "timing" in repr(e)
    with hip.Event(dev, timing=False, blocking=True) as e:
        assert not e.timing and e.blocking
    with hip.Event(timing=False, interprocess=True) as e:
        assert e.interprocess and e.device is hip.Device.current()
    assert rocpy.debug.live_objects() == {}


def test_record_defaults_to_null_stream(dev):
    with hip.Event(dev) as e:
        assert e.record() is e
        e.sync()
        assert e.query()


def test_subtraction_takes_only_events(dev):
    with hip.Event(dev) as e:
        for bad in (lambda: e - 3, lambda: 3 - e, lambda: e - None):
            with pytest.raises(TypeError, match="unsupported operand.*Event"):
                bad()


def test_elapsed_of_closed_event(dev):
    a, b = hip.Event(dev), hip.Event(dev)
    b.close()
    with pytest.raises(rocpy.ClosedError):
        b - a
    a.close()


def test_record_on_closed_stream(dev):
    s = dev.create_stream()
    s.close()
    with hip.Event(dev) as e:
        with pytest.raises(rocpy.ClosedError):
            e.record(s)


def test_elapsed_measures_work(dev, spin):
    buf = dev.context.alloc(4096)
    with dev.create_stream() as s:
        start = s.record()
        spin(buf, 1, 30, stream=s)
        stop = s.record()
        stop.sync()
        assert (stop - start) >= 20
        start.close(), stop.close()
