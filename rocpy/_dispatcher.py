"""Runtime callbacks run on rocpy's dispatcher thread, never on the runtime's.

A runtime thread only pushes ``(token, a, b)`` on a call queue (the C one in
``_native/fast/callqueue.c``, through a trampoline whose userData is the
token); the dispatcher thread pops and runs the callable registered for the
token.  A HIP layer would do::

    token = dispatcher().register(fn, errors=self._callback_errors)
    host_fn = ffi.cast("hipHostFn_t", ffi.addressof(lib, "rocpy_callqueue_host_fn"))
    st = lib.hipLaunchHostFunc(stream, host_fn, ffi.cast("void *", token))
    if st:
        dispatcher().unregister(token)
        raise hip_error(st, "hipLaunchHostFunc")

An exception in a callback is reported as a `CallbackWarning` and then stored in
the owner's `CallbackErrors`, which raises it on the owner's next use.
"""
from __future__ import annotations

import queue
import threading
import traceback
import warnings
from collections.abc import Callable
from typing import Any, Protocol

from . import _shutdown
from .errors import CallbackError, CallbackWarning

Item = tuple[int, int, int]
Callback = Callable[[int, int], object]


class CallQueue(Protocol):
    """The queue between pushers (any thread) and the one dispatcher thread."""

    def push(self, token: int, a: int, b: int) -> bool:
        """Queue one call; False when it was dropped."""
        ...

    def pop(self) -> list[Item]:
        """Block until calls are queued and return them; [] once shut down and drained."""
        ...

    def shutdown(self) -> None:
        """Refuse pushes; `pop` returns [] once what was queued is taken."""

    def reopen(self) -> None:
        """Accept pushes again after `shutdown`."""

    def dropped(self) -> int:
        """How many pushes were dropped."""
        ...


class PyCallQueue:
    """A `CallQueue` in Python, for backends without the C queue and for tests."""

    _SHUTDOWN = object()

    def __init__(self, batch: int = 64) -> None:
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._dropped = 0
        self._batch = batch

    def push(self, token: int, a: int, b: int) -> bool:
        with self._lock:
            if self._closed:
                self._dropped += 1
                return False
            self._queue.put((token, a, b))
            return True

    def pop(self) -> list[Item]:
        while True:
            item = self._queue.get()
            if item is not self._SHUTDOWN:
                break
            if self._closed:
                return []
        items = [item]
        while len(items) < self._batch:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is self._SHUTDOWN:
                self._queue.put(item)  # seen by the next pop, after these items ran
                break
            items.append(item)
        return items

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
            self._queue.put(self._SHUTDOWN)

    def reopen(self) -> None:
        with self._lock:
            self._closed = False

    def dropped(self) -> int:
        return self._dropped


class NativeCallQueue:
    """The C call queue of a backend module (``rocpy_callqueue_*``)."""

    def __init__(self, ffi: Any, lib: Any, batch: int = 64) -> None:
        self._lib = lib
        self._batch = batch
        self._buf = ffi.new("rocpy_callqueue_item[]", batch)

    def push(self, token: int, a: int, b: int) -> bool:
        result: bool = self._lib.rocpy_callqueue_push(token, a, b) == 0
        return result

    def pop(self) -> list[Item]:
        # cffi releases the GIL for the duration of the (blocking) call
        n = self._lib.rocpy_callqueue_pop(self._buf, self._batch)
        return [(it.token, it.a, it.b) for it in self._buf[0:n]]

    def shutdown(self) -> None:
        self._lib.rocpy_callqueue_shutdown()

    def reopen(self) -> None:
        self._lib.rocpy_callqueue_reopen()

    def dropped(self) -> int:
        return int(self._lib.rocpy_callqueue_dropped())


class CallbackErrors:
    """Exceptions raised by one owner's callbacks, kept until the owner's next use."""

    __slots__ = ("_lock", "pending")

    def __init__(self) -> None:
        self._lock = threading.RLock()  # finalizers may call in
        self.pending: list[BaseException] = []

    def add(self, exc: BaseException) -> None:
        """Store `exc` for the next `check`."""
        with self._lock:
            self.pending.append(exc)

    def check(self) -> None:
        """Raise `CallbackError` for the stored exceptions, if any, and forget them."""
        if self.pending:
            fresh: list[BaseException] = []
            with self._lock:
                errors, self.pending = self.pending, fresh
            if errors:
                raise CallbackError(errors) from errors[0]


class Dispatcher:
    """One thread running registered callables for the tokens popped from a queue."""

    def __init__(self, call_queue: CallQueue) -> None:
        self.queue = call_queue
        self._lock = threading.RLock()  # finalizers may register and unregister
        self._callbacks: dict[int, tuple[Callback, CallbackErrors | None, bool]] = {}
        self._next_token = 1
        self._thread: threading.Thread | None = None

    def register(self, fn: Callback, *, errors: CallbackErrors | None = None,
                 once: bool = True) -> int:
        """Register ``fn(a, b)`` and return its token (nonzero, fits a void*).

        ``once=True`` forgets it after its first call; otherwise it stays
        until `unregister`.  Exceptions go to `errors` and a `CallbackWarning`.
        """
        entry = (fn, errors, once)
        with self._lock:
            token = self._next_token
            self._next_token += 1
            self._callbacks[token] = entry
        return token

    def unregister(self, token: int) -> None:
        """Forget `token`; a call already queued for it is then ignored."""
        with self._lock:
            self._callbacks.pop(token, None)

    def pending_tokens(self) -> int:
        """How many callbacks are registered and not yet called (or unregistered)."""
        with self._lock:
            return len(self._callbacks)

    def start(self) -> None:
        """Start the dispatcher thread (idempotent)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self.queue.reopen()
            self._thread = threading.Thread(target=self._run, name="rocpy-dispatcher",
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Run the calls already queued, then stop; True if the thread ended in time."""
        self.queue.shutdown()
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def is_dispatcher_thread(self) -> bool:
        """Whether the caller runs on this dispatcher's thread."""
        return threading.current_thread() is self._thread

    def _run(self) -> None:
        while True:
            items = self.queue.pop()
            if not items:
                return
            for token, a, b in items:
                self._call(token, a, b)

    def _call(self, token: int, a: int, b: int) -> None:
        with self._lock:
            entry = self._callbacks.get(token)
            if entry is not None and entry[2]:
                self._callbacks.pop(token, None)
        if entry is None:
            return
        fn, errors, _ = entry
        try:
            fn(a, b)
        except BaseException as exc:  # a callback's SystemExit is its error too
            report(fn, exc)
            if errors is not None:
                errors.add(exc)


def report(fn: Callable[..., object], exc: BaseException) -> None:
    """Warn (`CallbackWarning`) that callback `fn` raised `exc`.

    Owners store the exception only after this returns: a use that raises the
    `CallbackError` comes after its warning, never before (a ``pytest.warns`` or
    ``catch_warnings`` around the work sees it)."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        warnings.warn(CallbackWarning(f"callback {fn!r} raised:\n{text}"))
    except Exception:
        pass  # warnings turned into errors: nothing on this thread could catch it


_default: Dispatcher | None = None
_default_lock = threading.Lock()


def dispatcher() -> Dispatcher:
    """The process's dispatcher, started on first use (C queue when the backend has one)."""
    global _default
    if _default is None:
        # built outside the lock: loading the backend can run finalizers that call here
        candidate = Dispatcher(_backend_queue() or PyCallQueue())
        with _default_lock:
            if _default is None:
                _default = candidate
        if _default is candidate:
            candidate.start()
            _shutdown.register()
    return _default


def _backend_queue() -> CallQueue | None:
    try:
        from rocpy import _backend
        backend = _backend.current()
    except Exception:
        return None  # no loadable backend: no runtime can call back either
    if not hasattr(backend.lib, "rocpy_callqueue_pop"):
        return None
    return NativeCallQueue(backend.ffi, backend.lib)


def shutdown(timeout: float | None = None) -> None:
    """At exit: stop the process's dispatcher, if one was started."""
    if _default is not None:
        _default.stop(timeout)
