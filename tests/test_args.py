"""rocpy._args, the one conversion layer of public arguments: the refusals no test of a
public method reached (coverage), each with its type and the argument's name."""
from __future__ import annotations

import numpy as np
import pytest

from rocpy import _args


def test_integers_refuse_bool_arrays_unordered_collections_and_wrong_lengths():
    with pytest.raises(TypeError, match=r"^grid must hold integers, not bool$"):
        _args.integers(np.array([True, False]), "grid")
    for bad in ({1, 2}, {1: 2}, "12", b"12", 1.5):
        with pytest.raises(TypeError, match=f"^grid must be an integer or a sequence of integers, "
                                            f"not {type(bad).__name__}$"):
            _args.integers(bad, "grid")
    with pytest.raises(ValueError, match=r"^grid must have 1 to 3 elements, got 4$"):
        _args.integers((1, 2, 3, 4), "grid", length=(1, 3))
    with pytest.raises(ValueError, match=r"^grid must have 3 elements, got 0$"):
        _args.integers([], "grid", length=(3, 3))
    assert _args.integers(np.array([1, 2], np.int64), "grid", length=(1, 3)) == (1, 2)
    assert _args.integers(np.uint8(7), "grid") == (7,)


def test_a_timeout_that_must_be_finite():
    with pytest.raises(ValueError, match=r"^wait must be finite, got inf$"):
        _args.seconds(float("inf"), "wait", allow_none=False)
    with pytest.raises(TypeError, match=r"^wait must be a number of seconds, not NoneType$"):
        _args.seconds(None, "wait", allow_none=False)
    assert _args.seconds(float("inf"), "wait") is None       # forever, where None is allowed
    assert _args.seconds(np.float32(0.5), "wait", allow_none=False) == 0.5


def test_array_refuses_non_arrays_and_zero_size_dtypes():
    with pytest.raises(TypeError, match=r"^out must be a numpy array, not list$"):
        _args.array([1, 2], "out")
    with pytest.raises(TypeError, match=r"^out has dtype \|V0 of size 0$"):
        _args.array(np.empty(4, "V0"), "out")
    with pytest.raises(TypeError, match=r"^out has dtype object, which holds Python objects"):
        _args.array(np.empty(4, object), "out")
    a = np.zeros(4, np.float32)
    assert _args.array(a, "out") is a


def test_sequence_refuses_strings_and_non_iterables():
    for bad in ("ab", b"ab"):
        with pytest.raises(TypeError, match=f"^args must be a sequence, not {type(bad).__name__}$"):
            _args.sequence(bad, "args")
    with pytest.raises(TypeError, match=r"^args must be a sequence, not int$"):
        _args.sequence(3, "args")
    assert _args.sequence(iter([1, 2]), "args") == (1, 2)
