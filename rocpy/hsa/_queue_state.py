"""A `Queue`'s native state, shared by its release recipe and its error callback.

None of these hold the Queue (a recipe or a callback holding it would keep
it alive forever): `QueueFailed` is the error state the dispatcher's
callback sets, `Ring` answers which kernarg segments retired, `Retired` is
the reaper's check for one segment, `QueueNative` what the release recipe
`destroy` takes.
"""
from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from .. import _keepalive
from .._dispatcher import CallbackErrors, dispatcher, report
from ..errors import hsa_error
from ._common import const


class QueueFailed:
    """Error state shared with the dispatcher callback (it must not hold the Queue)."""

    __slots__ = ("aql", "call", "errors", "lib", "lock", "on_error", "queue_ref", "status")

    def __init__(self, lib: Any, on_error: Callable[[BaseException], Any] | None, call: str) -> None:
        self.lib = lib
        self.lock = threading.Lock()
        self.aql: Any = None
        self.status = 0
        self.on_error = on_error
        self.errors = CallbackErrors()
        self.queue_ref: weakref.ref[Any] | None = None
        self.call = call

    def error(self) -> BaseException:
        return hsa_error(self.status, self.call)

    def __call__(self, status: int, _queue: int) -> None:
        """On the dispatcher thread: the runtime reported a queue error."""
        with self.lock:
            if self.status:
                return
            self.status = status or const("HSA_STATUS_ERROR", 1) or 1
            if self.aql is not None:
                self.lib.rocpy_aql_set_error(self.aql, self.status)
        q = self.queue_ref() if self.queue_ref is not None else None
        if q is not None:
            q._bad = True
        if self.on_error is not None:
            try:
                self.on_error(self.error())
            except BaseException as exc:
                report(self.on_error, exc)   # warned before any use can raise it
                self.errors.add(exc)


class Ring:
    """The kernarg ring's retirement, asked safely from other threads (reaper, synchronize)."""

    __slots__ = ("aql", "lib", "lock", "retire")

    def __init__(self, lib: Any, aql: Any, retire: Sequence[Any]) -> None:
        self.lib = lib
        self.aql = aql
        self.retire = tuple(retire)
        self.lock = threading.Lock()

    def retired(self, gen: int) -> bool:
        with self.lock:
            return self.aql is None or bool(self.lib.rocpy_aql_retired(self.aql, gen))

    def wait(self, gen: int, hint: int) -> bool:
        """Whether `gen` retired, after waiting up to `hint` ticks for it (the queue may close)."""
        with self.lock:
            if self.aql is None or self.lib.rocpy_aql_retired(self.aql, gen):
                return True
            lib = self.lib
            lib.hsa_signal_wait_scacquire(self.retire[gen % len(self.retire)],
                                          lib.HSA_SIGNAL_CONDITION_EQ, 0, hint,
                                          lib.HSA_WAIT_STATE_BLOCKED)
            return bool(lib.rocpy_aql_retired(self.aql, gen))

    def close(self) -> None:
        with self.lock:
            self.aql = None


class QueueNative:
    """What a `Queue`'s release needs, by name (its recipe is ``(destroy, QueueNative)``):
    the native objects `rocpy.hsa._queue_native.create_native` made and the
    Python state shared with the queue.  None of it holds the Queue."""

    __slots__ = ("aql", "failed", "kernarg", "lib", "lock", "pending", "queue", "retire",
                 "ring", "token")

    def __init__(self, lib: Any, native: Any, ring: Ring, pending: _keepalive.PendingList,
                 lock: Any) -> None:
        self.lib = lib
        self.queue = native.queue           # hsa_queue_t *
        self.aql = native.aql               # the C submission state
        self.kernarg = native.kernarg       # the kernarg ring (None: not allocated)
        self.retire = tuple(native.retire)  # a retirement signal per kernarg segment
        self.failed: QueueFailed = native.failed
        self.token: int = native.token      # the dispatcher registration of `failed`
        self.ring = ring
        self.pending = pending              # the queue's keep-alive timeline
        self.lock = lock                    # the queue's submission lock

    def __repr__(self) -> str:
        return f"<QueueNative {len(self.retire)} kernarg segments, {len(self.pending)} pending>"


def destroy(state: QueueNative) -> None:
    """Release recipe: stop the callbacks, destroy the queue, free the ring and its signals."""
    lib, aql, failed = state.lib, state.aql, state.failed
    # a producer blocked for ring space or a kernarg segment gives up, then leaves the C
    # state under the queue's lock: nothing uses it after this
    lib.rocpy_aql_set_error(aql, -1)
    with state.lock:
        state.ring.close()
        with failed.lock:
            failed.aql = None
        dispatcher().unregister(state.token)
        st = lib.hsa_queue_destroy(state.queue)
        lib.rocpy_aql_free(aql)
        for sig in state.retire:
            lib.hsa_signal_destroy(sig)
        kernarg = state.kernarg
        st2 = lib.hsa_amd_memory_pool_free(kernarg) if kernarg is not None else 0
    state.pending.clear()
    if st:
        raise hsa_error(st, "hsa_queue_destroy")
    if st2:
        raise hsa_error(st2, "hsa_amd_memory_pool_free")


class Retired:
    """A PendingList check: has a kernarg generation retired."""

    __slots__ = ("gen", "ring")

    def __init__(self, ring: Ring, gen: int) -> None:
        self.ring = ring
        self.gen = gen

    def __call__(self) -> bool:
        return self.ring.retired(self.gen)
