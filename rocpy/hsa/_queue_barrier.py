"""`Queue`'s barrier packets: barrier-AND and barrier-OR."""
from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from .._handle import borrow_all
from ._common import signal_handle
from ._queue_submit import FULL
from .executable import fence_bits
from .signal import Signal

BARRIER = struct.Struct("<HHI5QQQ")   # hsa_barrier_and_packet_t / hsa_barrier_or_packet_t


class Barriers:
    """The barrier half of `Queue` (a mixin: the state is the Queue's)."""

    __slots__ = ()
    _bad: bool
    _lib: Any
    _lock: Any

    def _barrier(self, kind: str, deps: Sequence[Signal | None], completion_signal: Signal | None,
                 barrier: bool, fences: Any) -> None:
        if self._bad:
            self._check()
        lib = self._lib
        deps = list(deps)
        if len(deps) > 5:
            raise ValueError(f"a barrier packet takes at most 5 dependency signals (HSA's limit); "
                             f"{len(deps)} given: chain barriers through intermediate signals")
        handles = []
        for i, s in enumerate(deps):
            if s is None:
                handles.append(0)
            elif isinstance(s, Signal):
                s._use()
                handles.append(s._hv)
            else:
                raise TypeError(f"deps[{i}] must be an hsa.Signal or None, not {type(s).__name__}")
        handles += [0] * (5 - len(handles))
        sig = 0
        if completion_signal is not None:
            signal_handle(completion_signal, "completion_signal")
            sig = completion_signal._hv
        ptype = lib.HSA_PACKET_TYPE_BARRIER_AND if kind == "and" else lib.HSA_PACKET_TYPE_BARRIER_OR
        header = ((ptype << lib.HSA_PACKET_HEADER_TYPE) |
                  ((1 if barrier else 0) << lib.HSA_PACKET_HEADER_BARRIER) | fence_bits(fences))
        packet = BARRIER.pack(header, 0, 0, *handles, 0, sig)
        with self._lock:
            gen = lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0)
            while gen == FULL:
                gen = self._wait_for_space(
                    lambda: lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0))
            self._submitted(gen, borrow_all((*deps, completion_signal)))

    def barrier_and(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                    *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-AND packet: later packets wait until every signal in `deps` is 0.

        At most 5 dependencies (None entries are ignored); `completion_signal`
        is decremented once they are all 0.
        """
        self._barrier("and", deps, completion_signal, barrier, fences)

    def barrier_or(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                   *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-OR packet: later packets wait until any signal in `deps` is 0."""
        self._barrier("or", deps, completion_signal, barrier, fences)

