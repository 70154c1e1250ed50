"""Stream ordering every backend shares: FIFO within a stream, the legacy null
stream's implicit synchronisation with blocking streams (not with non-blocking
ones), event waits across streams, and host callbacks in stream order.

All platform independent (hipamd, the stub and CUDA's legacy default stream
behave alike); ``spin`` makes a kernel slow enough to observe the order.
"""
from __future__ import annotations

import threading

import numpy as np

from rocpy import hip

N = 4096


def host_of(buf):
    out = np.empty(buf.nbytes // 4, np.uint32)
    buf.copy_to(out)
    return out


def test_work_in_one_stream_runs_in_order(dev, spin):
    ctx = dev.context
    x = ctx.alloc(N * 4)
    with dev.create_stream() as s:
        spin(x, 1, 50, stream=s)
        x.fill(np.uint32(2), stream=s)    # must not overtake the slow fill
        out = np.empty(N, np.uint32)
        x.copy_to(out, stream=s)
        s.sync()
    assert (out == 2).all()


def test_null_stream_waits_for_blocking_stream(dev, spin):
    x = dev.context.alloc(N * 4)
    with dev.create_stream() as s:               # blocking (the default)
        spin(x, 7, 100, stream=s)
        out = host_of(x)                         # hipMemcpy: the legacy null stream
    assert (out == 7).all()


def test_blocking_stream_waits_for_null_stream(dev, spin):
    x = dev.context.alloc(N * 4)
    spin(x, 5, 100)                              # on the null stream
    with dev.create_stream() as s:
        out = np.empty(N, np.uint32)
        x.copy_to(out, stream=s)
        s.sync()
    assert (out == 5).all()


def test_non_blocking_stream_is_not_ordered_with_null_stream(dev, spin):
    x = dev.context.alloc(N * 4)
    y = dev.context.alloc(N * 4)
    null = dev.default_stream
    spin(x, 3, 400)                              # slow, on the null stream
    marker = null.record(timing=False)
    with dev.create_stream(non_blocking=True) as s:
        y.fill(np.uint32(9), stream=s)
        s.sync()                          # returns while the null stream still works
        assert not marker.query()
    marker.sync()
    assert (host_of(y) == 9).all() and (host_of(x) == 3).all()
    marker.close()


def test_blocking_stream_is_ordered_after_null_work_enqueued_before(dev, spin):
    x = dev.context.alloc(N * 4)
    with dev.create_stream() as s:
        spin(x, 11, 100)                         # null stream
        x.fill(np.uint32(12), stream=s)          # waits for the null stream's spin
        s.sync()
    assert (host_of(x) == 12).all()


def test_event_wait_orders_two_streams(dev, spin):
    x = dev.context.alloc(N * 4)
    with dev.create_stream(non_blocking=True) as a, dev.create_stream(non_blocking=True) as b:
        spin(x, 21, 100, stream=a)
        b.wait(a.record(timing=False))
        x.fill(np.uint32(22), stream=b)
        b.sync()
        a.sync()
    assert (host_of(x) == 22).all()


def test_stream_wait_on_stream(dev, spin):
    x = dev.context.alloc(N * 4)
    with dev.create_stream(non_blocking=True) as a, dev.create_stream(non_blocking=True) as b:
        spin(x, 31, 100, stream=a)
        b.wait(a)
        x.fill(np.uint32(32), stream=b)
        b.sync()
    assert (host_of(x) == 32).all()


def test_host_callbacks_run_in_stream_order(dev, spin):
    # the kernel writes pinned host memory (device-accessible everywhere), so a
    # callback can see whether the work before it is done
    xh = hip.Context.host().alloc_host(N * 4, mapped=True)
    view = xh.numpy(np.uint32)
    view[:] = 0
    seen = []
    main = threading.get_ident()
    with dev.create_stream() as s:
        s.add_callback(seen.append, "first")
        spin(xh, 1, 50, stream=s)
        s.add_callback(lambda: seen.append(("after spin", int(view[0]), int(view[-1]))))
        s.add_callback(lambda: seen.append(threading.get_ident() != main))
        s.sync()
    assert seen == ["first", ("after spin", 1, 1), True]


def test_done_reports_progress_without_raising(dev, spin):
    x = dev.context.alloc(N * 4)
    with dev.create_stream() as s:
        spin(x, 1, 200, stream=s)
        assert s.query() is False
        s.sync()
        assert s.query() is True
