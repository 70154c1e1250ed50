"""`Dispatch`: a kernel dispatch prepared once and submitted many times.

::

    d = k.prepare(grid=(n,), workgroup=(256,), args=(a, b, c, n), completion_signal=sig)
    q.dispatch_many([d1, d2, d3])          # packets and arguments as prepared, one doorbell
    q.dispatch_many(d, count=1000)         # the same dispatch 1000 times

The packet (header included) and the packed kernel arguments are built at
preparation, so `Queue.dispatch_many` only joins bytes in Python and hands
them to the C fast path (``rocpy/_native/fast/hsa/aql.c``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._handle import Handle
from ._common import signal_handle
from .executable import Kernel

if TYPE_CHECKING:
    from .signal import Signal

_RECORD_ALIGN = 16   # a batch record's kernel arguments are padded to this (aql.h)


class Dispatch(Handle):
    """A prepared kernel dispatch: the packet and its packed arguments, for `Queue.dispatch_many`.

    ``Dispatch(kernel, grid, workgroup, args, completion_signal=None, ...)``
    takes `Queue.dispatch`'s arguments.  It holds the kernel's executable,
    the signal and every rocpy object among ``args`` as parents, so none of
    them is destroyed while the Dispatch lives (a ``close()`` waits for it).
    """

    __slots__ = ("_agent_hv", "_for", "_kernarg", "_packet", "_record", "args",
                 "completion_signal", "kernel")

    def __init__(self, kernel: Kernel, grid: Any, workgroup: Any, args: Sequence[Any] = (), *,
                 completion_signal: Signal | None = None, barrier: bool = True,
                 fences: Any = None, group_segment_size: int | None = None,
                 private_segment_size: int | None = None, dynamic_lds: int = 0) -> None:
        if not isinstance(kernel, Kernel):
            raise TypeError(f"kernel must be an hsa.Kernel, not {type(kernel).__name__}")
        kernel._require_open()
        sig = 0
        if completion_signal is not None:
            signal_handle(completion_signal, "completion_signal")
            sig = completion_signal._hv
        args = tuple(args)
        kernarg = kernel.pack(args, grid, workgroup, dynamic_lds)
        packet = kernel.packet(grid, workgroup, barrier=barrier, fences=fences,
                               group_segment_size=group_segment_size,
                               private_segment_size=private_segment_size, dynamic_lds=dynamic_lds,
                               completion_signal=sig)
        padded = kernarg + bytes(-len(kernarg) % _RECORD_ALIGN)
        # the record's reserved2 field (bytes 48..55) carries the kernarg size to C
        self._record = packet[:48] + len(kernarg).to_bytes(8, "little") + packet[56:] + padded
        self._packet = packet
        self._kernarg = kernarg
        self._agent_hv = kernel._agent_hv
        self._for: int | None = kernel._agent_hv   # the agent it runs on; None once closed
        self.kernel: Kernel = kernel
        self.args: Sequence[Any] = args
        self.completion_signal: Signal | None = completion_signal
        owners = [a for a in args if isinstance(a, Handle)]
        parents = (kernel.executable,) + ((completion_signal,) if completion_signal is not None
                                          else ())
        super().__init__(id(self), None, parents=parents + tuple(owners))

    def close(self, stream: Any = None) -> None:
        """Forget this dispatch: `Queue.dispatch_many` refuses it; what it held may go."""
        self._for = None
        super().close(stream)

    def __repr__(self) -> str:
        state = "closed " if self._h is None else ""
        return f"<hsa.Dispatch {state}{self.kernel.name} {len(self._kernarg)} kernarg bytes>"

