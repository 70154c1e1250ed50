"""Plumbing of runtime callbacks for the HIP layer: the C trampolines and a
barrier on rocpy's dispatcher thread (see `rocpy._dispatcher`)."""
from __future__ import annotations

import threading
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


def _dispatcher_barrier(timeout: float = 30.0) -> None:
    """Wait until rocpy's dispatcher has run every call queued before now.

    The call queue is FIFO: a marker pushed now runs after them.  Skipped on
    the dispatcher thread itself (it cannot wait for itself).
    """
    d = dispatcher()
    if d.is_dispatcher_thread():
        return
    reached = threading.Event()
    token = d.register(lambda _a, _b: reached.set(), once=True)
    if not d.queue.push(token, 0, 0):
        d.unregister(token)
        return
    reached.wait(timeout)
