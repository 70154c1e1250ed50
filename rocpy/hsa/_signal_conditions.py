"""What a signal wait compares: conditions, wait states and signal values checked and
converted, in one place for `Signal` and `SignalGroup` (`bind_conditions` takes the
runtime's values of the enums once the library is loaded)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _args
from ._common import api

CONDITIONS = ("eq", "ne", "lt", "gte")
WAIT_STATES = ("blocked", "active")
_cond_values: dict[str, int] = {}
_state_values: dict[str, int] = {}


def bind_conditions(lib: Any) -> None:
    """Take the runtime's hsa_signal_condition_t and hsa_wait_state_t values."""
    for c in CONDITIONS:
        _cond_values[c] = getattr(lib, f"HSA_SIGNAL_CONDITION_{c.upper()}")
    _state_values["blocked"] = lib.HSA_WAIT_STATE_BLOCKED
    _state_values["active"] = lib.HSA_WAIT_STATE_ACTIVE


def conditions_and_values(n: int, conditions: str | Sequence[str],
                           values: int | Sequence[int]) -> tuple[list[str], list[int], Any, Any]:
    """``n`` conditions and values for a wait on several signals, from one for all or
    one per signal (numpy ints too), checked: as lists and as the C arrays."""
    conds = [conditions] * n if isinstance(conditions, str) else list(conditions)
    if hasattr(type(values), "__index__"):          # one value for all
        vals: list[int] = [values] * n  # type: ignore[list-item]  # an int-like (__index__), checked by int64
    else:
        vals = list(_args.sequence(values, "values"))
    if len(conds) != n or len(vals) != n:
        raise ValueError(f"{n} signals need {n} conditions and values "
                         f"({len(conds)} and {len(vals)} given)")
    ffi, _ = api()
    cs = ffi.new("hsa_signal_condition_t[]", n)
    vs = ffi.new("hsa_signal_value_t[]", n)
    for i, (c, v) in enumerate(zip(conds, vals)):
        cs[i] = condition_value(c)
        vs[i] = int64(v)
    return conds, vals, cs, vs


def condition_value(condition: Any) -> int:
    """``'eq'``, ``'ne'``, ``'lt'`` or ``'gte'`` as the runtime's hsa_signal_condition_t."""
    try:
        return _cond_values[condition]
    except (KeyError, TypeError):
        raise ValueError(f"condition must be one of {', '.join(CONDITIONS)}, "
                         f"not {condition!r}") from None


def wait_state_value(state: Any) -> int:
    """``'blocked'`` or ``'active'`` as the runtime's hsa_wait_state_t."""
    try:
        return _state_values[state]
    except (KeyError, TypeError):
        raise ValueError(f"wait_state must be 'blocked' or 'active', not {state!r}") from None


def satisfied(condition: str, observed: int, value: int) -> bool:
    """Whether `observed` meets ``condition`` against `value` (HSA's semantics)."""
    if condition == "eq":
        return observed == value
    if condition == "ne":
        return observed != value
    if condition == "lt":
        return observed < value
    return observed >= value


def int64(value: Any, what: str = "value") -> int:
    """A signal value: an int (numpy ints too, never bool) within int64."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    if not isinstance(value, int):
        try:
            value = value.__index__()
        except AttributeError:
            raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if not -(1 << 63) <= value < 1 << 63:
        raise OverflowError(f"{what} {value} does not fit in a signed 64-bit signal value")
    result: int = value
    return result
