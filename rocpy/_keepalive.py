"""The one keep-alive mechanism: keep these objects alive until this point of
this stream's or queue's work completes.

Work rocpy enqueues uses Python objects the runtime does not know about:
buffers and host arrays a copy reads, a kernel's arguments, a signal a packet
completes, a handle whose release `Handle.close(stream=)` orders after the
work.  They are kept here, and nowhere else:

- `Timeline` is the interface: a HIP `Stream` and an HSA `Queue` each are one.
  ``timeline._hold(obj)`` keeps ``obj`` until the work enqueued on it so far
  completes (batched: the point is taken at the next fence, so one completion
  check serves many enqueues); ``timeline._keep_alive(*objs)`` is the same with
  the point taken now (what `Handle.close(stream=)` uses).
- A *point* is a completion check: a callable, cheap and non-blocking,
  returning True once the work before it is done.  A stream's is a private
  event recorded after the batch (`rocpy.hip.event._Fence`, every
  `rocpy.hip._stream_order.FENCE_EVERY` items); a queue's is the retirement
  of a kernarg generation (`rocpy.hsa._queue_state.Retired`: the generation's
  segments retire when their closing barrier packets complete).
- `PendingList` is where a timeline's points wait, in order: each entry pairs a
  point with what its work uses; ``poll`` (a synchronize, a query, the
  reaper's sweep) drops the leading entries whose point passed.
- `keep_alive_until` is for work on no one stream or queue (HSA copies and SVM
  prefetches, which complete their own signal; a closed stream's last batch):
  one unordered list the reaper sweeps.

The reaper (`rocpy._reaper`) sweeps every list that holds anything, so they
drain even when their owner goes quiet; at exit `rocpy._reaper.drain_pending`
waits for them (bounded).
"""
from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any, Protocol

from . import _reaper

Done = Callable[[], bool]
Entry = tuple[Done, tuple[Any, ...]]


class Timeline(Protocol):
    """Work enqueued in order (a HIP `Stream`, an HSA `Queue`): what it keeps alive."""

    def _hold(self, obj: Any) -> None:
        """Keep ``obj`` until the work enqueued so far completes (at the next point)."""

    def _keep_alive(self, *objs: Any) -> None:
        """Keep ``objs`` until the work enqueued so far completes (a point taken now)."""


class PendingList:
    """Objects kept alive until the work using them completes.

    Each entry pairs a completion check (a callable returning True once the
    work is done, e.g. an event query; cheap and non-blocking) with the objects
    the work uses.  ``ordered=True`` (one stream) means entries complete in the
    order they were added, so a poll stops at the first incomplete one.

    Checks run and objects die outside the lock.  A finalizer that calls in
    while its own thread is inside this list's lock is deferred to the reaper.
    """

    __slots__ = ("_entries", "_held_here", "_lock", "_ordered", "_watched")

    def __init__(self, ordered: bool = True) -> None:
        self._lock = threading.RLock()
        self._held_here: Callable[[], bool] = self._lock._is_owned  # type: ignore[attr-defined]
        self._entries: collections.deque[Entry] = collections.deque()
        self._ordered = ordered
        self._watched = False

    def __len__(self) -> int:
        return len(self._entries)

    def keep_alive(self, done: Done, *objects: Any) -> None:
        """Keep `objects` alive until `done()` returns True (then polls the oldest entry)."""
        if self._held_here():
            _reaper.post(lambda: self.keep_alive(done, *objects))
            return
        entry = (done, objects)
        with self._lock:
            self._entries.append(entry)
            watch = not self._watched
            self._watched = True
        if watch:
            _reaper.watch(self)
        self.poll()

    def poll(self) -> None:
        """Drop the leading entries whose work is complete."""
        if not self._entries or self._held_here():   # the empty case without the lock
            return
        while True:
            with self._lock:
                head = self._entries[0] if self._entries else None
            if head is None or not head[0]():
                return
            with self._lock:
                if self._entries and self._entries[0] is head:
                    self._entries.popleft()
            del head  # its objects die here, outside the lock

    def clear(self) -> None:
        """Drop every entry: all the work is known complete (e.g. after a synchronize)."""
        if self._held_here():
            _reaper.post(self.clear)
            return
        fresh: collections.deque[Entry] = collections.deque()
        with self._lock:
            dropped, self._entries = self._entries, fresh
        del dropped

    def _sweep(self) -> int:
        """Drop completed entries (only leading ones if ordered); how many remain."""
        if self._ordered:
            self.poll()
        else:
            with self._lock:
                snapshot = list(self._entries)
            finished = {id(entry) for entry in snapshot if entry[0]()}
            if finished:
                with self._lock:
                    # the snapshot keeps its entries alive, so their ids stay unique
                    keep = collections.deque(e for e in self._entries if id(e) not in finished)
                    dropped, self._entries = self._entries, keep
                del dropped
            del snapshot
        with self._lock:
            remaining = len(self._entries)
            if not remaining:
                self._watched = False
                _reaper.unwatch(self)
        return remaining


_anywhere = PendingList(ordered=False)


def keep_alive_until(done: Done, *objects: Any) -> None:
    """Keep `objects` alive until `done()` returns True, for work on no one stream.

    Polled by the reaper; for work on one stream or queue, its `Timeline` is
    cheaper (ordered: a poll stops at the first point not passed).
    """
    _anywhere.keep_alive(done, *objects)


