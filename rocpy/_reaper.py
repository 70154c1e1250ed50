"""rocpy's reaper thread: finalizer releases, and the sweep of keep-alive lists.

Finalizers never call a runtime: a collection can run on any thread, inside a
runtime callback or while that thread holds a runtime lock, and a ``hipFree``
may wait for a device's streams.  They `post` the release here instead, and
one daemon thread runs the posted callables in order.  `post` only puts on a
`queue.SimpleQueue`, which is safe to call from weakref callbacks and
``__del__`` (re-entrant, no Python-level lock).

The keep-alive lists (`rocpy._keepalive.PendingList`: objects kept until the
work using them completes) register here while they hold anything (`watch`);
the reaper sweeps them every `SWEEP_INTERVAL` seconds so they drain even when
their owner goes quiet.  This module knows them only as objects with
``_sweep() -> int`` (poll; how many entries remain) and ``clear()``.
"""
from __future__ import annotations

import queue
import sys
import threading
import time
import warnings
from collections.abc import Callable
from typing import Protocol

from .errors import ReleaseWarning

SWEEP_INTERVAL = 0.01



class Sweepable(Protocol):
    """What the reaper sweeps: a `rocpy._keepalive.PendingList`."""

    def _sweep(self) -> int: ...

    def clear(self) -> None: ...


_queue: queue.SimpleQueue[Callable[[], object]] = queue.SimpleQueue()
_lock = threading.RLock()  # re-entrant: finalizers may call in (see PendingList)
_thread: threading.Thread | None = None
_stopping = False
_watched: set[Sweepable] = set()

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


def watch(pending: Sweepable) -> None:
    """Sweep ``pending`` every `SWEEP_INTERVAL` until its ``_sweep`` finds it empty
    (it then calls `unwatch` itself, under its own lock)."""
    with _lock:
        wake = not _watched
        _watched.add(pending)
    if wake:
        post(_noop)


def unwatch(pending: Sweepable) -> None:
    """Stop sweeping ``pending`` (it is empty)."""
    with _lock:
        _watched.discard(pending)


def _noop() -> None:
    """Posted to wake the reaper when it has lists to sweep."""


def sweep() -> int:
    """Poll every watched keep-alive list once; returns how many entries remain."""
    with _lock:
        lists = list(_watched)
    return sum(p._sweep() for p in lists)


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
