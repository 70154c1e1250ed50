"""Differential tests of the compiled host-array copies and the compiled
`Event.record`/`Event.query`/`Stream.query` (rocpy/_native/hot/hot_calls.c,
hot_method.c) against the pure-Python path: the same bytes, the same exceptions
(type, message, status), the same objects held until the work completes.

Copies: one stream per path (`rocpy._hotpath.disabled` makes the second one's lane
pure Python, so the compiled copy declines it).  Methods: the compiled descriptor
against the Python definition (`rocpy.hip._methods.PYTHON`) on the same objects.
"""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
from rocpy import _hotpath, hip
from rocpy.hip import _copy, _methods, memory
from rocpy.hip._lane import PyLane

pytestmark = pytest.mark.skipif(not _hotpath.available() or _hotpath.module() is None,
                                reason="rocpy._hot is not built or ROCPY_HOT=0")
N = 256


def outcome(fn):
    """('ok', result bytes or None) or the exception's (type, message, status)."""
    try:
        r = fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc), str(exc), getattr(exc, "status", None)
    if r is None:
        return "ok", None
    return "ok", np.asarray(r).tobytes() if isinstance(r, np.ndarray) else bytes(r)


@pytest.fixture
def paths(dev):
    """(compiled stream, Python stream, two device buffers per stream)."""
    hot = dev.create_stream()
    with _hotpath.disabled():
        slow = dev.create_stream()
    assert type(hot._lane) is not PyLane and type(slow._lane) is PyLane
    bufs = {id(s): [dev.context.alloc(N) for _ in range(2)] for s in (hot, slow)}
    yield hot, slow, bufs
    for s in (hot, slow):
        s.sync()
        for b in bufs[id(s)]:
            b.close()
        s.close()


def _sources():
    base = np.arange(2 * N, dtype=np.uint8)
    obj = np.empty(N // 8, dtype=object)
    return {
        "numpy": lambda: np.arange(N, dtype=np.uint8),
        "numpy float32": lambda: np.linspace(0, 1, N // 4, dtype=np.float32),
        "numpy 2-D": lambda: np.arange(N, dtype=np.uint8).reshape(16, 16),
        "numpy strided": lambda: base[::2],                 # the Python path copies it
        "numpy read-only": lambda: np.frombuffer(bytes(range(256)), np.uint8),
        "bytes": lambda: bytes(range(256)),
        "bytearray": lambda: bytearray(range(256)),
        "memoryview": lambda: memoryview(bytearray(range(256))),
        "memoryview strided": lambda: memoryview(bytes(range(256)) * 2)[::2],
        "too small": lambda: np.zeros(N - 1, np.uint8),
        "empty": lambda: b"",
        "objects": lambda: obj,
        "datetime": lambda: np.zeros(N // 8, "datetime64[s]"),
        "not bytes-like": lambda: 3,
        "a str": lambda: "x" * N,
    }


@pytest.mark.parametrize("name", list(_sources()))
def test_host_to_device_copies_agree(name, paths):
    hot, slow, bufs = paths
    make = _sources()[name]
    got = {}
    for s in (hot, slow):
        dst = bufs[id(s)][0]
        dst.fill(0xAA)
        src = make()
        res = outcome(lambda: dst.copy_from(src, s))
        s.sync()
        got[id(s)] = (res, bytes(dst.copy_to(bytearray(N))))
    assert got[id(hot)] == got[id(slow)]


def _destinations():
    return {
        "numpy": lambda: np.zeros(N, np.uint8),
        "numpy uint32": lambda: np.zeros(N // 4, np.uint32),
        "numpy read-only": lambda: np.frombuffer(bytes(N), np.uint8),
        "numpy strided": lambda: np.zeros(2 * N, np.uint8)[::2],
        "numpy fortran": lambda: np.zeros((16, 16), np.uint8, order="F"),
        "bytearray": lambda: bytearray(N),
        "memoryview": lambda: memoryview(bytearray(N)),
        "memoryview read-only": lambda: memoryview(bytes(N)),
        "bytes": lambda: bytes(N),
        "too large": lambda: bytearray(N + 1),
    }


@pytest.mark.parametrize("name", list(_destinations()))
def test_device_to_host_copies_agree(name, paths):
    hot, slow, bufs = paths
    make = _destinations()[name]
    got = {}
    for s in (hot, slow):
        src = bufs[id(s)][0]
        src.copy_from(bytes(range(256)))
        dst = make()
        res = outcome(lambda: src.copy_to(dst, s))
        s.sync()
        got[id(s)] = res, outcome(lambda: dst)
    assert got[id(hot)] == got[id(slow)]


def test_the_compiled_copy_takes_host_arrays_itself_and_holds_them(paths):
    """The fast cases really are done in C (copy_async returns True), the host memory is
    held until the work completes, and the cases it declines leave nothing held."""
    hot, slow, bufs = paths
    buf = bufs[id(hot)][0]
    arr = np.arange(N, dtype=np.uint8)
    ba = bytearray(N)
    assert _copy.copy_async(buf, arr, False, hot) is True
    assert _copy.copy_async(buf, ba, True, hot) is True
    held = hot._lane.box[0]
    assert held[-2] == (buf, arr)                       # numpy: the array itself
    kept = held[-1][1]
    assert type(kept) is memoryview and kept.obj is ba  # bytes-like: an export of it
    with pytest.raises(BufferError):
        ba.extend(b"x")                                 # no resize while the copy may run
    n = len(held)
    for other, to_other in ((arr[::2], False), (np.zeros(N, np.uint8)[::2], True),
                            (bytes(N), True), (np.zeros(N - 1, np.uint8), False)):
        assert _copy.copy_async(buf, other, to_other, hot) is False
    assert len(hot._lane.box[0]) == n
    assert _copy.copy_async(bufs[id(slow)][0], arr, False, slow) is False   # Python lane
    hot.sync()
    assert hot._lane.box[0] == []
    del kept, held
    ba.extend(b"x")                                     # released once complete
    assert bytes(ba[:N]) == bytes(range(256))
    assert buf._last is not None and buf._last() is hot


def test_a_closed_buffer_or_stream_raises_identically(paths, dev):
    hot, slow, bufs = paths
    arr = np.zeros(N, np.uint8)
    res = []
    for s in (hot, slow):
        b = dev.context.alloc(N)
        b.close()
        res.append((outcome(lambda: b.copy_from(arr, s)), outcome(lambda: b.copy_to(arr, s))))
    assert res[0] == res[1] and res[0][0][0] is rocpy.ClosedError
    res = []
    for s in (hot, slow):
        other = dev.create_stream() if s is hot else None
        if other is None:
            with _hotpath.disabled():
                other = dev.create_stream()
        other.close()
        res.append(outcome(lambda: bufs[id(s)][0].copy_from(arr, other)))
    assert res[0] == res[1] and res[0][0] is rocpy.ClosedError


# ---- Event.record / Event.query / Stream.query ---------------------------------------------


def test_the_methods_are_compiled_and_the_class_gives_the_python_definition():
    assert type(hip.Event.__dict__["query"]) is rocpy._hot.Method
    assert type(hip.Stream.__dict__["query"]) is rocpy._hot.Method
    assert hip.Event.query is _methods.PYTHON["Event.query"]
    assert hip.Event.record.__doc__ == _methods.PYTHON["Event.record"].__doc__
    assert "Record on" in hip.Event.record.__doc__


def _agree(call_hot, call_py):
    a, b = outcome(call_hot), outcome(call_py)
    assert a == b
    return a


def test_event_methods_agree_with_the_python_definitions(paths, dev):
    hot, slow, _ = paths
    query, record = _methods.PYTHON["Event.query"], _methods.PYTHON["Event.record"]
    ev = hip.Event(dev, timing=False)
    assert ev.query() is query(ev) is True               # never recorded: complete
    for s in (hot, slow, None):
        assert ev.record(s) is ev and record(ev, s) is ev
        assert ev.record(stream=s) is ev
        ev.sync()
        assert ev.query() is query(ev) is True
    _agree(lambda: ev.record(hot, 1), lambda: record(ev, hot, 1))        # TypeError
    _agree(lambda: ev.record(sream=hot), lambda: record(ev, sream=hot))  # TypeError
    _agree(lambda: ev.record(3), lambda: record(ev, 3))
    _agree(lambda: ev.query(1), lambda: query(ev, 1))
    closed = dev.create_stream()
    closed.close()
    r = _agree(lambda: ev.record(closed), lambda: record(ev, closed))
    assert r[0] is rocpy.ClosedError
    ev.close()
    assert _agree(lambda: ev.query(), lambda: query(ev))[0] is rocpy.ClosedError
    assert _agree(lambda: ev.record(hot), lambda: record(ev, hot))[0] is rocpy.ClosedError


def test_stream_query_agrees_and_drops_what_completed_work_held(paths, dev):
    hot, slow, bufs = paths
    query = _methods.PYTHON["Stream.query"]
    for s, q in ((hot, hip.Stream.__dict__["query"].__get__(hot)), (slow, lambda: query(slow))):
        bufs[id(s)][0].copy_from(bufs[id(s)][1], s)
        s.sync()
        bufs[id(s)][0].copy_from(bufs[id(s)][1], s)
        assert len(s._lane.box[0]) == 1
        while not q():              # a query that says complete drops what the work held
            assert len(s._lane.box[0]) == 1
        assert s._lane.box[0] == []
        assert s.query() is query(s) is True
    for s in (hot, slow):   # a pending callback error: raised by both, once
        s._errors.add(ZeroDivisionError("from a callback"))
    a = outcome(lambda: hot.query())
    b = outcome(lambda: query(slow))
    assert a == b and a[0] is rocpy.errors.CallbackError
    assert outcome(lambda: hot.query(1)) == outcome(lambda: query(hot, 1))
    closed = dev.create_stream()
    closed.close()
    assert _agree(lambda: closed.query(), lambda: query(closed))[0] is rocpy.ClosedError


def test_buffer_copies_are_compiled_with_the_stream_positional_or_by_keyword(paths):
    hot, _, bufs = paths
    assert type(hip.DeviceBuffer.__dict__.get("copy_from") or
                memory.Buffer.__dict__["copy_from"]) is rocpy._hot.Method
    assert memory.Buffer.copy_to is _methods.PYTHON["Buffer.copy_to"]
    buf = bufs[id(hot)][0]
    src = np.arange(N, dtype=np.uint8)
    n = len(hot._lane.box[0])
    assert buf.copy_from(src, stream=hot) is None
    out = bytearray(N)
    assert buf.copy_to(out, stream=hot) is out
    assert buf.copy_to(dst=out, stream=hot) is out        # the Python definition's names
    held = hot._lane.box[0][n:]                           # by keyword: the Python definition,
    assert [type(k) for _, k in held] == [np.ndarray, memoryview, memoryview]   # compiled copy
    hot.sync()
    assert bytes(out) == src.tobytes()
    assert buf.copy_to(bytearray(N)) == src.tobytes()     # no stream: synchronous, Python
    py = _methods.PYTHON["Buffer.copy_from"]
    del held
    for args, kwargs in (((src, hot, 1), {}), ((src,), {"strem": hot}), ((), {})):
        a = outcome(lambda: buf.copy_from(*args, **kwargs))
        b = outcome(lambda: py(buf, *args, **kwargs))
        assert a == b and a[0] is TypeError


def test_the_descriptors_called_directly_agree_with_the_python_definitions(paths, dev):
    """``obj.method(...)`` is ``descr(obj, ...)`` (the type is a method descriptor with
    vectorcall: no bound builtin per call): the descriptor called with an instance does
    what the bound call does, with anything else what the Python definition does."""
    import functools
    hot, _, bufs = paths
    assert rocpy._hot.Method.__flags__ & (1 << 17)     # Py_TPFLAGS_METHOD_DESCRIPTOR
    ev = hip.Event(dev, timing=False)
    record, query = hip.Event.__dict__["record"], hip.Event.__dict__["query"]
    s_query = hip.Stream.__dict__["query"]
    copy_from = memory.Buffer.__dict__["copy_from"]
    assert record(ev, hot) is ev and functools.partial(record, ev)(stream=hot) is ev
    hot.sync()
    assert query(ev) is True and s_query(hot) is True
    dst, src = bufs[id(hot)]
    src.fill(7)
    assert copy_from(dst, src, hot) is None
    hot.sync()
    assert bytes(dst.copy_to(bytearray(N))) == bytes([7]) * N
    for name, d in (("Event.record", record), ("Event.query", query),
                    ("Stream.query", s_query), ("Buffer.copy_from", copy_from)):
        py = _methods.PYTHON[name]
        for args in ((), (3,), (None, hot)):
            a, b = outcome(lambda: d(*args)), outcome(lambda: py(*args))
            assert a == b and a[0] in (TypeError, AttributeError)
    ev.close()
