"""`SignalGroup`: a fixed set of signals waited on together (hsa_signal_group_*).

::

    group = hsa.SignalGroup([a, b, c])            # hsa_signal_group_create
    index, sig, value = group.wait_any("eq", 0)   # hsa_signal_group_wait_any_scacquire
    group.close()                                 # hsa_signal_group_destroy

The group holds its signals (and its Runtime): they are not destroyed while
the group lives.  HSA's group wait has no timeout and blocks in C until a
signal meets its condition; rocpy first waits in slices on the group's
signals (hsa_amd_signal_wait_any with a timeout hint, as `Signal.wait_any`
does), so Ctrl-C interrupts it and ``timeout`` is honoured, then makes the
group call, which returns at once with the signal found.  If another thread
changes that signal back in between, the group call blocks until some
signal meets its condition again, as the raw call would.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _args
from .._handle import Handle
from ..errors import ClosedError, hsa_error
from ._common import UINT32_MAX, agent_handle, api, check_timeout, ticks
from ._signal_conditions import conditions_and_values, satisfied, wait_state_value
from .signal import _SLICE, WaitTimeout, Signal

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime

_ORDERS = ("relaxed", "scacquire")


def _destroy(lib: Any, handle: Any) -> None:
    st = lib.hsa_signal_group_destroy(handle)
    if st:
        raise hsa_error(st, "hsa_signal_group_destroy")


class SignalGroup(Handle):
    """A signal group (hsa_signal_group_create), destroyed at release.

    ``SignalGroup(signals, consumers=None)``: ``consumers`` lists the agents
    that will wait on the group (None: any).
    """

    def __init__(self, signals: Sequence[Signal], consumers: Sequence[Agent] | None = None) -> None:
        signals = list(_args.sequence(signals, "signals"))
        if not signals:
            raise ValueError("a signal group needs at least one signal")
        ffi, lib = api()
        hs = ffi.new("hsa_signal_t[]", len(signals))
        for i, s in enumerate(signals):
            if not isinstance(s, Signal):
                raise TypeError(f"signals[{i}] must be an hsa.Signal, not {type(s).__name__}")
            hs[i] = s._use()
        n = 0
        agents = ffi.NULL
        if consumers is not None:
            consumers = list(consumers)
            n = len(consumers)
            agents = ffi.new("hsa_agent_t[]", max(n, 1))
            for i, a in enumerate(consumers):
                agents[i] = agent_handle(a, "each of consumers")
        out = ffi.new("hsa_signal_group_t *")
        st = lib.hsa_signal_group_create(len(signals), hs, n, agents, out)
        if st:
            raise hsa_error(st, "hsa_signal_group_create")
        self.signals: tuple[Signal, ...] = tuple(signals)
        rt = signals[0].runtime
        super().__init__(out[0], (_destroy, lib, out[0]), parents=(*self.signals, rt))

    @property
    def runtime(self) -> Runtime | None:
        """The Runtime of the group's first signal (None once closed)."""
        parents = self._parents
        return parents[-1] if parents else None

    def __len__(self) -> int:
        return len(self.signals)

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"{self._h.handle:#x}"
        return f"<hsa.SignalGroup {state} of {len(self.signals)} signals>"

    def wait_any(self, conditions: str | Sequence[str] = "eq", values: int | Sequence[int] = 0,
                 timeout: float | None = None, wait_state: str = "blocked", *,
                 order: str = "scacquire", raise_on_timeout: bool = False
                 ) -> tuple[int | None, Signal | None, int | None]:
        """Block until a signal of the group meets its condition; ``(index, signal, value)``.

        ``conditions`` and ``values`` are one for all or one per signal;
        ``order`` ``'scacquire'`` or ``'relaxed'`` (the group call used);
        ``wait_state`` HSA's hint.  On a timeout ``(None, None, None)``, or a
        `WaitTimeout` with ``raise_on_timeout``.
        """
        h = self._require_open()
        if order not in _ORDERS:
            raise ValueError(f"order must be one of {', '.join(_ORDERS)}, not {order!r}")
        n = len(self.signals)
        conds, vals, cs, vs = conditions_and_values(n, conditions, values)
        ffi, lib = api()
        hs = ffi.new("hsa_signal_t[]", n)
        state = wait_state_value(wait_state)
        limit = check_timeout(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        slice_ticks = ticks(_SLICE)
        out_value = ffi.new("hsa_signal_value_t *")
        entered: list[Signal] = []
        try:
            for i, s in enumerate(self.signals):
                hs[i] = s._pin()
                entered.append(s)
            while True:
                if self._h is None:
                    raise ClosedError("hsa.SignalGroup was closed while waited on")
                if deadline is None:
                    hint = slice_ticks
                else:
                    left = deadline - time.monotonic()
                    hint = ticks(min(left, _SLICE)) if left > 0 else 0
                index = lib.hsa_amd_signal_wait_any(n, hs, cs, vs, hint, state, out_value)
                if index != UINT32_MAX and index < n and satisfied(conds[index], out_value[0], vals[index]):
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    if raise_on_timeout:
                        raise WaitTimeout(f"no signal of the group met its condition within {limit} s", None)
                    return None, None, None
            out_sig = ffi.new("hsa_signal_t *")
            fn = getattr(lib, f"hsa_signal_group_wait_any_{order}")
            st = fn(h, cs, vs, state, out_sig, out_value)
            if st:
                raise hsa_error(st, f"hsa_signal_group_wait_any_{order}")
            found = int(out_sig[0].handle)
            index = next(i for i, s in enumerate(self.signals) if s._hv == found)
            return index, self.signals[index], int(out_value[0])
        finally:
            for s in entered:
                s._unpin()
