"""rocpy's reaper thread, and the keep-alive lists of stream-ordered lifetime.

Finalizers never call a runtime: a collection can run on any thread, inside a
runtime callback or while that thread holds a runtime lock, and a ``hipFree``
may wait for a device's streams.  They `post` the release here instead, and
one daemon thread runs the posted callables in order.  `post` only puts on a
`queue.SimpleQueue`, which is safe to call from weakref callbacks and
``__del__`` (re-entrant, no Python-level lock).

A `PendingList` keeps objects alive until the work that uses them is complete
(its completion check returns True); the reaper polls non-empty lists every
`SWEEP_INTERVAL` seconds so they drain even when their owner goes quiet.
"""
from __future__ import annotations

import collections
import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from .errors import ReleaseWarning

SWEEP_INTERVAL = 0.01

Done = Callable[[], bool]
Entry = tuple[Done, tuple[Any, ...]]

_queue: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
_lock = threading.RLock()  # re-entrant: finalizers may call in (see PendingList)
_thread: threading.Thread | None = None
_stopping = False
_watched: set[PendingList] = set()

# Post a callable for the reaper to run.  A bound builtin on purpose: it needs
# no module globals, so weakref callbacks can use it during interpreter teardown.
post: Callable[[Callable[[], object]], None] = _queue.put


def _stop() -> None:
    """The reaper's stop marker; never called."""


def start() -> None:
    """Start the reaper thread if it is not running (idempotent)."""
    global _thread, _stopping
    with _lock:
        if _thread is not None and _thread.is_alive():
            return
        _stopping = False
        _thread = threading.Thread(target=_run, name="rocpy-reaper", daemon=True)
        _thread.start()


def running() -> bool:
    """Whether the reaper thread runs and will process what is posted."""
    thread = _thread
    return thread is not None and thread.is_alive() and not _stopping


def is_reaper_thread() -> bool:
    """Whether the caller runs on the reaper thread."""
    return threading.current_thread() is _thread


def stop(timeout: float | None = None) -> bool:
    """Run what was posted before, then stop; True when the thread ended in time."""
    global _stopping
    with _lock:
        thread = _thread
        if thread is None or not thread.is_alive():
            return True
        _stopping = True
    post(_stop)
    thread.join(timeout)
    return not thread.is_alive()


def flush(timeout: float | None = None) -> bool:
    """Wait until the reaper has run everything posted, including what that posted.

    Returns False on timeout, when called on the reaper thread itself (it
    cannot wait for itself), or when the reaper is stopped with work queued.
    """
    if is_reaper_thread():
        return False
    if not running():
        return _queue.empty()
    idle = threading.Event()

    def marker() -> None:
        if _queue.empty():
            idle.set()
        else:
            post(marker)

    post(marker)
    return idle.wait(timeout)


def _run() -> None:
    next_sweep = time.monotonic() + SWEEP_INTERVAL
    while True:
        try:
            item = _queue.get(timeout=SWEEP_INTERVAL if _watched else None)
        except queue.Empty:
            item = None
        if item is _stop:
            return
        if sys.is_finalizing():
            # too late to call a runtime: leak rather than crash
            return
        if item is not None:
            try:
                item()
            except Exception as exc:
                _report(item, exc)
        if _watched and time.monotonic() >= next_sweep:
            sweep()
            next_sweep = time.monotonic() + SWEEP_INTERVAL


def _report(item: Callable[[], object], exc: Exception) -> None:
    try:
        warnings.warn(ReleaseWarning(f"rocpy reaper: {item!r} raised {exc!r}"))
    except Exception:
        pass  # warnings turned into errors: nothing on this thread could catch it


def _watch(pending: PendingList) -> None:
    with _lock:
        wake = not _watched
        _watched.add(pending)
    if wake:
        post(_noop)


def _noop() -> None:
    """Posted to wake the reaper when it has lists to sweep."""


def sweep() -> int:
    """Poll every non-empty `PendingList` once; returns how many entries remain."""
    with _lock:
        lists = list(_watched)
    return sum(p._sweep() for p in lists)


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
            post(lambda: self.keep_alive(done, *objects))
            return
        entry = (done, objects)
        with self._lock:
            self._entries.append(entry)
            watch = not self._watched
            self._watched = True
        if watch:
            _watch(self)
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
            post(self.clear)
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
                with _lock:
                    _watched.discard(self)
        return remaining


_anywhere = PendingList(ordered=False)


def keep_alive_until(done: Done, *objects: Any) -> None:
    """Keep `objects` alive until `done()` returns True, for work on no one stream.

    Polled by the reaper; for work on one stream, the stream's own ordered
    `PendingList` is cheaper.
    """
    _anywhere.keep_alive(done, *objects)


def drain_pending(timeout: float) -> bool:
    """Poll the keep-alive lists until they are empty or `timeout` passes (at exit).

    Whatever is still pending then is dropped; returns True if all completed.
    """
    deadline = time.monotonic() + timeout
    while sweep():
        if time.monotonic() >= deadline:
            with _lock:
                lists = list(_watched)
            for pending in lists:
                pending.clear()
            return False
        time.sleep(0.001)
    return True
