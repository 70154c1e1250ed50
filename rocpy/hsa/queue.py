"""`Queue`: an AQL queue, its dispatches, barriers, indices and errors.

::

    q = gpu.create_queue(size=4096, on_error=lambda exc: print(exc))
    q.dispatch(k, grid=(n,), workgroup=(256,), args=(a, b, c, n), completion_signal=sig)
    q.barrier_and([s1, s2], completion_signal=s3)
    d = k.prepare(...) / hsa.Dispatch(k, ...)        # a prepared packet and its arguments
    q.dispatch_many([d1, d2, ...])                    # N packets, one doorbell
    q.sync()                                   # everything submitted so far is done

The parts, one file each: the options (``_queue_options``), the native
objects made at creation (``_queue_native``), the release recipe and error
state (``_queue_state``), kernel submission (``_queue_submit``), barrier
packets (``_queue_barrier``), profiling (``_queue_profiling``).

The kernels a queue dispatched live as long as the queue.  An explicit
``close()`` of a buffer or signal that queued work still uses is not
deferred (as in C): use `Dispatch` objects, which hold them,
``close(stream=queue)`` (released once the packets submitted so far complete:
the queue is a `rocpy._keepalive.Timeline`), or close after the work completed.

Queue errors (the queue's error callback, through rocpy's C trampoline and
dispatcher thread) are raised by the queue's next use, every use after, and
passed to ``on_error(exc)`` when given.  A packet that fails stops the
queue, as on hardware.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .. import _keepalive
from .._handle import Handle
from ._common import UINT32_MAX, agent_handle, api
from ._queue_barrier import Barriers
from ._queue_control import Control
from ._queue_native import create_native
from ._queue_options import DEFAULT_KERNARG_BYTES, DEFAULT_KERNARG_SEGMENTS, queue_options
from ._queue_profiling import DispatchTime, Profiling
from ._queue_state import QueueNative, Ring, destroy
from ._queue_submit import Submission
from .executable import Kernel

if TYPE_CHECKING:
    from .agent import Agent

__all__ = ["DispatchTime", "Queue"]


class Queue(Submission, Barriers, Control, Profiling, Handle):
    """An AQL queue of a GPU agent (hsa_queue_create), destroyed at release.

    Options: ``size`` in packets (a power of two within the agent's
    ``queue_min_size``..``queue_max_size``; default 4096), ``kind``
    (``'multi'`` or ``'single'``), ``on_error(exc)`` (called on rocpy's
    dispatcher thread when the queue fails), ``private_segment_size`` and
    ``group_segment_size`` (hints; default: no limit), ``profiling`` (record
    dispatch timestamps), ``kernarg_bytes``/``kernarg_segments`` (the
    kernarg ring: default 1 MiB in 4 segments), ``cu_mask`` (the CU indices
    the queue may use; default every CU) and ``priority`` (``'low'``,
    ``'normal'``, ``'high'``): both also properties (`_queue_control`).
    """

    # at exit a queue goes before the buffers and signals its packets use:
    # destroying a signal a barrier waits on would start dispatches on freed memory
    _release_first_at_exit = True

    __slots__ = (
        "_agent_h",
        "_agent_hv",
        "_aql",
        "_bad",
        "_dispatch_c",
        "_failed",
        "_gen",
        "_kernels",
        "_lib",
        "_lock",
        "_pending",
        "_priority",
        "_private_segment_size",
        "_profiling",
        "_refs",
        "_retire",
        "_ring",
        "_seg_bytes",
        "_templates",
        "agent",
        "base_address",
        "doorbell",
        "id",
        "kind",
        "size",
    )

    def __init__(self, agent: Agent, size: int | None = None, *, kind: str = "multi",
                 on_error: Callable[[BaseException], Any] | None = None,
                 private_segment_size: int | None = None, group_segment_size: int | None = None,
                 profiling: bool = False, kernarg_bytes: int = DEFAULT_KERNARG_BYTES,
                 kernarg_segments: int = DEFAULT_KERNARG_SEGMENTS,
                 cu_mask: Iterable[int] | None = None, priority: str = "normal") -> None:
        h_agent = agent_handle(agent)
        opts = queue_options(agent, size, kind, on_error,
                             private_segment_size=private_segment_size,
                             group_segment_size=group_segment_size, profiling=profiling,
                             kernarg_bytes=kernarg_bytes, kernarg_segments=kernarg_segments,
                             cu_mask=cu_mask, priority=priority)
        native = create_native(agent, h_agent, opts)
        self._adopt(agent, h_agent, opts, native)

    def _adopt(self, agent: Agent, h_agent: Any, opts: Any, native: Any) -> None:
        """Take ownership of what `create_native` made (nothing here can fail)."""
        ffi, lib = api()
        queue, aql, retire, failed = native.queue, native.aql, native.retire, native.failed
        ring = Ring(lib, aql, retire)
        pending = _keepalive.PendingList(ordered=True)
        lock = threading.Lock()
        self._lib = lib
        self._aql = aql
        self._ring = ring
        self._failed = failed
        self._bad = False
        self._gen = 0
        self._refs: list[Any] = []
        self._pending = pending
        self._templates: dict[Any, bytes] = {}
        self._kernels: set[Kernel] = set()
        self._dispatch_c = lib.rocpy_aql_dispatch
        self._lock = lock
        self._agent_h = h_agent
        self._agent_hv = agent._hv
        self._profiling = opts.profiling
        self._priority = opts.priority
        self._private_segment_size = (None if opts.private_segment_size == UINT32_MAX
                                      else opts.private_segment_size)
        self._retire = retire
        self._seg_bytes = opts.kernarg_bytes // opts.kernarg_segments // 64 * 64
        self.agent: Agent = agent
        self.id: int = int(queue.id)
        self.size: int = int(queue.size)
        self.kind: str = opts.kind
        self.doorbell: int = int(queue.doorbell_signal.handle)
        self.base_address: int = int(ffi.cast("uintptr_t", queue.base_address))
        super().__init__(queue, (destroy, QueueNative(lib, native, ring, pending, lock)),
                         parents=(agent.runtime,))
        failed.queue_ref = weakref.ref(self)
        if failed.status:   # failed before we could see it
            self._bad = True

    def __repr__(self) -> str:
        state = "closed" if self._h is None else ("failed" if self._failed.status else "active")
        return f"<hsa.Queue {state} id={self.id} size={self.size} on {self.agent.name!r}>"

    def close(self, stream: Any = None) -> None:
        """Destroy the queue now (what is still queued is dropped, as hsa_queue_destroy does)."""
        self._bad = True
        super().close(stream)
        with self._lock:
            self._refs = []          # the queue is gone: so is what its packets used
            self._templates = {}
            self._kernels = set()

    # ---- state ------------------------------------------------------------------------

    def _check(self) -> None:
        """Raise what makes the queue unusable: closed, callback errors, then the queue error."""
        self._require_open()
        failed = self._failed
        failed.errors.check()
        if failed.status:
            raise failed.error()
        self._bad = False

    @property
    def error(self) -> BaseException | None:
        """The queue's error (an `HsaError`), once the runtime reported one; else None."""
        return self._failed.error() if self._failed.status else None

    @property
    def read_index(self) -> int:
        """The read index (hsa_queue_load_read_index_scacquire)."""
        result: int = self._lib.hsa_queue_load_read_index_scacquire(self._require_open())
        return result

    @property
    def write_index(self) -> int:
        """The write index (hsa_queue_load_write_index_scacquire)."""
        result: int = self._lib.hsa_queue_load_write_index_scacquire(self._require_open())
        return result

    @property
    def kernarg_generation(self) -> int:
        """How many kernarg segments this queue has filled (for tests and diagnostics)."""
        return self._gen

