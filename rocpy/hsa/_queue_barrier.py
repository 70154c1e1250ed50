"""`Queue`'s packets other than kernel dispatches: barrier-AND, barrier-OR, agent dispatch."""
from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .. import _args
from .._handle import borrow_all
from ._common import signal_handle
from ._queue_submit import FULL
from .executable import fence_bits
from .signal import Signal

BARRIER = struct.Struct("<HHI5QQQ")   # hsa_barrier_and_packet_t / hsa_barrier_or_packet_t
AGENT_DISPATCH = struct.Struct("<HHIQ4QQQ")   # hsa_agent_dispatch_packet_t


class Barriers:
    """The barrier half of `Queue` (a mixin: the state is the Queue's)."""

    __slots__ = ()
    _bad: bool
    _lib: Any
    _lock: Any

    if TYPE_CHECKING:   # Queue's and Submission's
        def _check(self) -> None: ...
        def _live_aql(self) -> Any: ...
        def _wait_for_space(self, retry: Callable[[], int] | None) -> int: ...
        def _submitted(self, gen: int, refs: Any) -> None: ...

    def _barrier(self, kind: str, deps: Sequence[Signal | None], completion_signal: Signal | None,
                 barrier: bool, fences: Any) -> None:
        if self._bad:
            self._check()
        lib = self._lib
        deps = list(deps)
        if kind == "or" and len(deps) > 5:
            raise ValueError(f"a barrier-OR packet takes at most 5 dependency signals (HSA's "
                             f"limit); {len(deps)} given: an OR cannot be split across packets")
        handles = []
        for i, s in enumerate(deps):
            if s is None:
                continue
            if not isinstance(s, Signal):
                raise TypeError(f"deps[{i}] must be an hsa.Signal or None, not {type(s).__name__}")
            s._use()
            handles.append(s._hv)
        sig = 0
        if completion_signal is not None:
            signal_handle(completion_signal, "completion_signal")
            sig = completion_signal._hv
        ptype = lib.HSA_PACKET_TYPE_BARRIER_AND if kind == "and" else lib.HSA_PACKET_TYPE_BARRIER_OR
        header = ((ptype << lib.HSA_PACKET_HEADER_TYPE) |
                  ((1 if barrier else 0) << lib.HSA_PACKET_HEADER_BARRIER) | fence_bits(fences))
        # More than 5: ROCclr's chain (VirtualGPU::dispatchBarrierPacket): full groups of 5
        # as barrier-AND packets with the barrier bit, no fences and no completion signal
        # (kNopPacketHeader), the rest in the caller's packet.  A barrier packet holds back
        # the queue until it completes, so the last one completes after all of them.
        nop = (lib.HSA_PACKET_TYPE_BARRIER_AND << lib.HSA_PACKET_HEADER_TYPE) | \
            (1 << lib.HSA_PACKET_HEADER_BARRIER)
        packets = []
        while len(handles) > 5:
            packets.append(BARRIER.pack(nop, 0, 0, *handles[:5], 0, 0))
            handles = handles[5:]
        handles += [0] * (5 - len(handles))
        packets.append(BARRIER.pack(header, 0, 0, *handles, 0, sig))
        borrows = borrow_all((*deps, completion_signal))
        with self._lock:
            for n, packet in enumerate(packets, 1):
                gen = lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0)
                while gen == FULL:
                    gen = self._wait_for_space(
                        lambda p=packet: lib.rocpy_aql_dispatch(  # type: ignore[misc]
                            self._live_aql(), p, b"", 0, 0))
                # what the packets use is kept with the last one: it retires after the others
                self._submitted(gen, borrows if n == len(packets) else None)

    def barrier_and(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                    *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-AND packet: later packets wait until every signal in `deps` is 0.

        None entries are ignored.  More than 5 dependencies are chained as
        ROCclr chains them: one barrier-AND packet per 5 signals, submitted
        together; `completion_signal` (on the last packet) is decremented
        once they are all 0.
        """
        self._barrier("and", deps, completion_signal, barrier, fences)

    def barrier_or(self, deps: Sequence[Signal | None], completion_signal: Signal | None = None,
                   *, barrier: bool = False, fences: Any = None) -> None:
        """A barrier-OR packet: later packets wait until any signal in `deps` is 0 (at most 5)."""
        self._barrier("or", deps, completion_signal, barrier, fences)

    def agent_dispatch(self, type: int, args: Sequence[int] = (), *, return_address: int = 0,
                       completion_signal: Signal | None = None, barrier: bool = True,
                       fences: Any = None) -> None:
        """Submit an agent-dispatch packet (HSA_PACKET_TYPE_AGENT_DISPATCH).

        ``type`` is the function code (16 bits, the consumer's meaning),
        ``args`` up to four 64-bit arguments, ``return_address`` where the
        consumer writes its result.  The consumer is whatever processes the
        queue's packets: on a GPU's AQL queue that is the command processor,
        which supports no agent dispatch, so ROCr reports the packet as
        ``HSA_STATUS_ERROR_INVALID_PACKET_FORMAT`` (AqlQueue::ExceptionHandler,
        EC_QUEUE_PACKET_UNSUPPORTED) and the queue stops, as the stub does.
        """
        if self._bad:
            self._check()
        lib = self._lib
        code = _args.unsigned(type, 16, "type")
        values = list(args)
        if len(values) > 4:
            raise ValueError(f"an agent-dispatch packet takes at most 4 arguments, {len(values)} "
                             "given")
        words = [_args.unsigned(v, 64, f"args[{i}]") for i, v in enumerate(values)]
        words += [0] * (4 - len(words))
        ret = _args.unsigned(return_address, 64, "return_address")
        sig = 0
        if completion_signal is not None:
            signal_handle(completion_signal, "completion_signal")
            sig = completion_signal._hv
        header = ((lib.HSA_PACKET_TYPE_AGENT_DISPATCH << lib.HSA_PACKET_HEADER_TYPE) |
                  ((1 if barrier else 0) << lib.HSA_PACKET_HEADER_BARRIER) | fence_bits(fences))
        packet = AGENT_DISPATCH.pack(header, code, 0, ret, *words, 0, sig)
        with self._lock:
            gen = lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0)
            while gen == FULL:
                gen = self._wait_for_space(
                    lambda: lib.rocpy_aql_dispatch(self._live_aql(), packet, b"", 0, 0))
            self._submitted(gen, borrow_all((completion_signal,)))
