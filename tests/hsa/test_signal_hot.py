"""The compiled `hsa.Signal.load` / `store` / `silent_store` (rocpy/_native/hot/hot_signal.c)
against their Python definitions (what the class attribute gives): the same values, the
same exceptions (type and message) for every way of calling them, every order, every
value kind, closed signals and pending handler errors."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from rocpy import _hotpath, hsa
from rocpy.errors import CallbackError, ClosedError

pytestmark = pytest.mark.skipif(_hotpath.module() is None,
                                reason="rocpy._hot is not built or ROCPY_HOT=0")


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the result compared
        return type(exc), str(exc)


@pytest.fixture
def pair(rt):
    """Two signals of the same value: one used through the compiled methods, one
    through the Python definitions."""
    with hsa.Signal(5, runtime=rt) as a, hsa.Signal(5, runtime=rt) as b:
        yield a, b


def test_the_methods_are_compiled_method_descriptors_and_the_class_gives_python():
    hsa.Signal(0).close()                      # the first signal installs them
    from rocpy._hot import Method
    for op in ("load", "store", "silent_store"):
        d = hsa.Signal.__dict__[op]
        assert type(d) is Method
        assert getattr(hsa.Signal, op).__qualname__ == f"Signal.{op}"
    assert Method.__flags__ & (1 << 17)        # Py_TPFLAGS_METHOD_DESCRIPTOR
    assert "current value" in hsa.Signal.load.__doc__


LOADS = [((), {}), (("relaxed",), {}), (("scacquire",), {}), (("acquire",), {}),
         ((), {"order": "relaxed"}), (("bogus",), {}), ((3,), {}), (([],), {}),
         (("relaxed", 1), {}), ((), {"ordre": "relaxed"}), (("relaxed",), {"order": "relaxed"}),
         ((np.str_("relaxed"),), {})]


@pytest.mark.parametrize("args,kw", LOADS, ids=[repr(c) for c in LOADS])
def test_loads_agree(pair, args, kw):
    a, b = pair
    got = outcome(lambda: a.load(*args, **kw))
    assert got == outcome(lambda: hsa.Signal.load(b, *args, **kw))
    if not args and not kw:
        assert got == ("ok", 5)


STORES = [((7,), {}), ((-(2**63),), {}), ((2**63 - 1,), {}), ((2**63,), {}), ((-(2**63) - 1,), {}),
          ((7, "relaxed"), {}), ((7, "release"), {}), ((7,), {"order": "relaxed"}),
          ((), {"value": 7}), ((), {"value": 7, "order": "screlease"}), ((7, "scacquire"), {}),
          ((np.int64(9),), {}), ((np.int32(-3),), {}), ((True,), {}), ((1.0,), {}), (("7",), {}),
          ((), {}), ((7, "relaxed", 1), {}), ((7,), {"value": 8}), ((7,), {"orde": "relaxed"})]


@pytest.mark.parametrize("op", ["store", "silent_store"])
@pytest.mark.parametrize("args,kw", STORES, ids=[repr(c) for c in STORES])
def test_stores_agree(pair, op, args, kw):
    a, b = pair
    got = outcome(lambda: getattr(a, op)(*args, **kw))
    assert got == outcome(lambda: getattr(hsa.Signal, op)(b, *args, **kw))
    assert a.load("relaxed") == b.load("relaxed")


def test_closed_signals_raise_as_python(rt):
    a, b = hsa.Signal(1, runtime=rt), hsa.Signal(1, runtime=rt)
    a.close()
    b.close()
    for op, args in (("load", ()), ("store", (2,)), ("silent_store", (2,))):
        got = outcome(lambda: getattr(a, op)(*args))
        assert got == outcome(lambda: getattr(hsa.Signal, op)(b, *args))
        assert got[0] is ClosedError


def test_a_pending_handler_error_is_raised_once_as_python(pair):
    for op, args in (("load", ()), ("store", (4,)), ("silent_store", (4,))):
        got = []
        for s, call in ((pair[0], getattr(pair[0], op)),
                        (pair[1], functools.partial(getattr(hsa.Signal, op), pair[1]))):
            from rocpy._dispatcher import CallbackErrors
            s._cb = s._cb or CallbackErrors()
            s._cb.add(RuntimeError("from a handler"))
            s._bad = True
            got.append((outcome(lambda: call(*args)), outcome(lambda: call(*args))))
        assert got[0] == got[1]
        assert got[0][0][0] is CallbackError and got[0][1][0] == "ok"


def test_the_descriptor_called_directly_takes_a_signal_and_hands_anything_else_to_python(pair):
    a, b = pair
    d = hsa.Signal.__dict__["load"]
    assert d(a) == 5 and d(a, "relaxed") == 5 and d(a, order="relaxed") == 5
    assert functools.partial(d, a)() == 5      # through tp_call
    assert hsa.Signal.__dict__["store"](a, 6) is None and a.load() == 6
    for args in ((), (3,), (None, "relaxed")):
        assert outcome(lambda: d(*args)) == outcome(lambda: hsa.Signal.load(*args))
        assert outcome(lambda: d(*args))[0] in (TypeError, AttributeError)
