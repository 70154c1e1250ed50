"""Plumbing of runtime callbacks for the HIP layer: the C trampolines, a
barrier on rocpy's dispatcher thread (see `rocpy._dispatcher`), and the count
of host callbacks enqueued and not yet run.

Rule 4, nothing submitted is silently dropped: `register_host_callback`
counts each stream callback until it ran; the exit hook (`drain_at_exit`,
called by `rocpy._shutdown` before the dispatcher stops) waits, bounded, for
those still pending and reports on stderr the ones that never ran; a
synchronize whose wait for the dispatcher times out raises `TimeoutError`.
"""
from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .._dispatcher import dispatcher
from ._api import api

_trampolines: tuple[Any, Any] | None = None


def _callback_trampolines() -> tuple[Any, Any]:
    """The C trampolines as (``hipHostFn_t``, ``hipStreamCallback_t``); userData is a token."""
    global _trampolines
    if _trampolines is None:
        a = api()
        ffi, lib = a.ffi, a.lib
        _trampolines = (ffi.cast("hipHostFn_t", ffi.addressof(lib, "rocpy_callqueue_host_fn")),
                        ffi.cast("hipStreamCallback_t",
                                 ffi.addressof(lib, "rocpy_callqueue_stream_cb")))
    return _trampolines


BARRIER_TIMEOUT = 30.0   # seconds a synchronize waits for host callbacks still running

_pending: set[int] = set()    # tokens of stream host callbacks not yet run
_pending_lock = threading.Lock()


def register_host_callback(fn: Callable[..., object], args: tuple[Any, ...], errors: Any) -> int:
    """Register a stream host callback with the dispatcher; counted until it ran."""
    d = dispatcher()
    box: list[int] = []

    def run(_a: int, _b: int) -> None:
        with _pending_lock:
            _pending.discard(box[0])
        fn(*args)
    token = d.register(run, errors=errors, once=True)
    box.append(token)
    with _pending_lock:
        _pending.add(token)
    return token


def forget_host_callback(token: int) -> None:
    """The runtime refused the callback: it will never run, and is not pending."""
    dispatcher().unregister(token)
    with _pending_lock:
        _pending.discard(token)


def pending_host_callbacks() -> int:
    """Stream host callbacks enqueued and not yet run."""
    return len(_pending)


def drain_at_exit(timeout: float) -> None:
    """At exit, before the dispatcher stops: let pending host callbacks run (at most
    ``timeout`` seconds), then report on stderr those that never will."""
    deadline = time.monotonic() + timeout
    while _pending and time.monotonic() < deadline:
        time.sleep(0.005)
    n = len(_pending)
    if n:
        try:
            sys.stderr.write(f"rocpy: {n} host callback(s) enqueued with Stream.add_callback never "
                             f"ran: the work before them had not completed at exit "
                             f"(waited {timeout:g} s)\n")
        except Exception:
            pass


def _dispatcher_barrier(timeout: float | None = None, call: str = "synchronize") -> None:
    """Wait until rocpy's dispatcher has run every call queued before now.

    The call queue is FIFO: a marker pushed now runs after them.  Skipped on
    the dispatcher thread itself (it cannot wait for itself).  `TimeoutError`
    when they are still running after ``timeout`` seconds (default
    `BARRIER_TIMEOUT`; a callback blocked): returning would claim they are done.
    """
    if timeout is None:
        timeout = BARRIER_TIMEOUT
    d = dispatcher()
    if d.is_dispatcher_thread():
        return
    reached = threading.Event()
    token = d.register(lambda _a, _b: reached.set(), once=True)
    if not d.queue.push(token, 0, 0):
        d.unregister(token)
        return
    if not reached.wait(timeout):
        raise TimeoutError(f"{call}: host callbacks enqueued before it were still running on "
                           f"rocpy's dispatcher thread after {timeout:g} s")
