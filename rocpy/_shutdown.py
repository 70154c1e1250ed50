"""The exit hook: stop rocpy's threads, then release what is still live.

Registered with `atexit` once, when the first handle is made or the dispatcher
starts.  atexit runs before the interpreter finalizes and before the runtimes'
own C-level teardown, so the releases here still reach working runtimes; what
is collected later, during finalization, is leaked instead.
"""
from __future__ import annotations

import atexit
import threading

EXIT_TIMEOUT = 2.0  # seconds for each stage: pending work, dispatcher, reaper

_lock = threading.Lock()
_registered = False
_ran = False


def register() -> None:
    """Register `run` with atexit (idempotent)."""
    global _registered
    with _lock:
        if _registered:
            return
        _registered = True
    atexit.register(run)


def run() -> None:
    """Tear down in order; idempotent.

    1. wait (bounded) for enqueued work to release what it keeps alive;
       wait (bounded) for pending HIP host callbacks, reporting those that never ran;
    2. stop the dispatcher after it ran the callbacks already queued;
    3. stop the reaper after it ran the releases already posted;
    4. release every live handle, children before parents.
    """
    global _ran
    with _lock:
        if _ran:
            return
        _ran = True
    import sys

    from . import _dispatcher, _handle, _reaper
    _reaper.drain_pending(EXIT_TIMEOUT)
    callbacks = sys.modules.get("rocpy.hip._callbacks")
    if callbacks is not None:      # host callbacks run now, or are reported (never dropped)
        callbacks.drain_at_exit(EXIT_TIMEOUT)
    _dispatcher.shutdown(EXIT_TIMEOUT)
    _reaper.stop(EXIT_TIMEOUT)
    _handle.release_all()
