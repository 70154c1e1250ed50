"""`Signal`: an HSA signal, its value operations, waits and asynchronous handlers.

::

    sig = hsa.Signal(1)
    sig.load()                       # scacquire by default
    sig.add(2, order="relaxed")      # every operation in the orders hsa.h declares
    old = sig.cas(3, 0)              # returns the value observed
    sig.wait("eq", 0, timeout=1.0)   # returns the value observed (see below)
    sig.on("lt", 1, lambda value: print("done", value))   # on rocpy's dispatcher thread
    hsa.Signal.wait_any([a, b], "eq", 0, timeout=1.0)     # -> (index, value)

Memory orders are ``'relaxed'``, ``'scacquire'``, ``'screlease'`` and
``'scacq_screl'``; the deprecated names ``'acquire'``, ``'release'`` and
``'acq_rel'`` are accepted as aliases.  Loads take relaxed/scacquire, stores
relaxed/screlease, read-modify-writes all four.

Waits return the value they observed, as HSA's do: on a timeout that is a
value failing the condition (a wait also returns early if the signal stops
being valid).  Pass ``raise_on_timeout=True`` to get a `TimeoutError`
instead (its ``.value`` is the value observed).  Waits without a timeout
block in slices, so Ctrl-C still interrupts them.

`on` registers ``hsa_amd_signal_async_handler`` with rocpy's C trampoline:
the runtime's thread only queues the call, and ``callback(value)`` runs on
rocpy's dispatcher thread.  The Signal (and the callback) stay alive while
a handler is registered; an exception in a callback is reported as a
`CallbackWarning` and raised as `CallbackError` by the Signal's next
operation.  Closing the signal forgets its pending handlers.
"""
from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._dispatcher import CallbackErrors, dispatcher, report
from .._handle import Handle
from ..errors import ClosedError, hsa_error
from ._common import UINT32_MAX, agent_handle, api, check_timeout, ticks
from ._signal_conditions import (bind_conditions, condition_value, conditions_and_values, int64,
                                 satisfied, wait_state_value)
from .ipc import IpcHandle, attach_runtime

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime

ALIASES = {"acquire": "scacquire", "release": "screlease", "acq_rel": "scacq_screl"}
_LOAD_ORDERS = ("relaxed", "scacquire")
_STORE_ORDERS = ("relaxed", "screlease")
_RMW_ORDERS = ("relaxed", "scacquire", "screlease", "scacq_screl")

# A wait without a deadline blocks at most this long per call, so signals
# (Ctrl-C) reach Python between calls.
_SLICE = 0.1

# Value operations by (name -> order -> lib function), filled at first use.
_ops: dict[str, dict[str, Callable[..., Any]]] = {}
# loads and stores by integer handle (the compiled path), filled with _ops
_by_int: dict[str, dict[str, Callable[..., Any]]] = {}
# explicit closes against keep-alive checks and waits on other threads
_close_lock = threading.Lock()


def _bind(lib: Any) -> None:
    table: dict[str, dict[str, Callable[..., Any]]] = {}

    def orders(op: str, allowed: Sequence[str]) -> None:
        fns = {o: getattr(lib, f"hsa_signal_{op}_{o}") for o in allowed}
        for alias, real in ALIASES.items():
            if real in fns:
                fns[alias] = fns[real]
        table[op] = fns

    orders("load", _LOAD_ORDERS)
    orders("store", _STORE_ORDERS)
    orders("silent_store", _STORE_ORDERS)
    for op in ("exchange", "cas", "add", "subtract", "and", "or", "xor"):
        orders(op, _RMW_ORDERS)
    orders("wait", ("relaxed", "scacquire"))
    bind_conditions(lib)
    _by_int.update(_int_ops(table))
    _ops.update(table)
    _install_methods()


def _int_ops(table: dict[str, dict[str, Callable[..., Any]]]) -> dict[str, dict[str, Any]]:
    """Loads and stores: by the signal's integer handle (``Signal._hv``) through
    ``rocpy._hot`` (the runtime's function by address; ``hsa_signal_t`` is one
    uint64_t, passed as one in the C ABI), or, without it, the cffi functions
    taking the ``hsa_signal_t`` (``Signal._h``); `_BY_INT` says which."""
    from .. import _hotpath
    hot = _hotpath.module()
    ffi, lib = api()
    out: dict[str, dict[str, Any]] = {}
    for op in ("load", "store", "silent_store"):
        fns: dict[str, Any] = {}
        addrs: dict[str, int] = {}
        for order, fn in table[op].items():
            if hot is not None:
                addr = addrs[order] = int(ffi.cast("uintptr_t", ffi.addressof(lib, fn.__name__)))
                call = hot.call_signal_load if op == "load" else hot.call_signal_store
                fns[order] = functools.partial(call, addr)
            else:   # the cffi function itself: it takes the hsa_signal_t (Signal._h)
                fns[order] = fn
        out[op] = fns
        if addrs:
            _addresses[op] = addrs
    global _BY_INT
    _BY_INT = hot is not None
    return out


#: Whether `_by_int` takes the integer handle (compiled) or the cffi struct (fallback).
_BY_INT = False
#: The compiled path's function addresses: op -> order (aliases too) -> address
_addresses: dict[str, dict[str, int]] = {}
_METHOD_KINDS = {"load": 6, "store": 7, "silent_store": 8}     # rocpy/_native/hot/hot_method.h


def _install_methods() -> None:
    """`Signal.load`, `store` and `silent_store` as compiled methods where `rocpy._hot` is
    in use (rocpy/_native/hot/hot_signal.c): an open signal, a known order (str) and, for
    stores, an int within int64 make the call in C with no Python frame; every other
    case, and every error, is the Python definition's (`_PYTHON`, which the class
    attribute also gives).  Chosen once per process, as the HIP methods are."""
    from .. import _hotpath
    hot = _hotpath.module()
    if hot is None or not _addresses:
        return
    slots = (Handle.__dict__["_h"], Signal.__dict__["_bad"], Signal.__dict__["_hv"])
    for op, kind in _METHOD_KINDS.items():
        default = _PYTHON[op].__defaults__[-1]
        # setattr: the C descriptor replaces the method (a type checker refuses assigning one)
        setattr(Signal, op, hot.method(kind, _addresses[op][default], _PYTHON[op], 0, slots,
                                       dict(_addresses[op]), Signal))


def _order_error(op: str, order: Any) -> ValueError:
    allowed = [o for o in _ops[op] if o not in ALIASES]
    return ValueError(f"{op}: memory order must be one of {', '.join(allowed)} "
                      f"(or a deprecated alias), not {order!r}")


def _destroy(lib: Any, handle: Any) -> None:
    st = lib.hsa_signal_destroy(handle)
    if st:
        raise hsa_error(st, "hsa_signal_destroy")


class WaitTimeout(TimeoutError):
    """A wait's timeout passed with the condition unmet; ``.value`` is the value observed."""

    def __init__(self, message: str, value: int | None) -> None:
        super().__init__(message)
        self.value = value


class Signal(Handle):
    """An HSA signal (hsa_signal_create), destroyed at release.

    ``Signal(initial, consumers=None, runtime=None)``: ``consumers`` lists the
    agents that will wait on it (None: any).  ``value`` reads the current
    value (scacquire); ``handle.handle`` is the raw handle.

    ``ipc=True`` / ``gpu_only=True`` make it with hsa_amd_signal_create's
    ``HSA_AMD_SIGNAL_IPC`` / ``HSA_AMD_SIGNAL_AMD_GPU_ONLY``.  ROCr's rule
    (hsa_amd_signal_create): such a signal, or any signal while interrupts
    are off (``HSA_ENABLE_INTERRUPT=0``), or one whose ``consumers`` name no
    CPU agent, is a polling signal (its waits spin whatever the wait-state
    hint); the others are interrupt signals (a ``'blocked'`` wait sleeps on
    an event after a short spin, ``'active'`` spins).  An IPC signal can be
    shared with `ipc_handle` / `Signal.attach`.
    """

    __slots__ = ("_bad", "_cb", "_hv", "_lib", "_tokens", "attributes")

    def __init__(self, initial: int = 0, consumers: Sequence[Agent] | None = None, *,
                 ipc: bool = False, gpu_only: bool = False,
                 runtime: Runtime | None = None) -> None:
        from .runtime import Runtime
        ffi, lib = api()
        if not _ops:
            _bind(lib)
        initial = int64(initial, "initial")
        if runtime is not None and not isinstance(runtime, Runtime):
            raise TypeError(f"runtime must be an hsa.Runtime, not {type(runtime).__name__}")
        rt = runtime if runtime is not None else Runtime.current()
        rt._require_open()
        n = 0
        agents = ffi.NULL
        if consumers:
            consumers = list(consumers)
            n = len(consumers)
            agents = ffi.new("hsa_agent_t[]", n)
            for i, a in enumerate(consumers):
                agents[i] = agent_handle(a, "each of consumers")
        out = ffi.new("hsa_signal_t *")
        attributes = frozenset(name for name, on in (("ipc", ipc), ("gpu_only", gpu_only)) if on)
        if attributes:
            bits = ((lib.HSA_AMD_SIGNAL_IPC if ipc else 0)
                    | (lib.HSA_AMD_SIGNAL_AMD_GPU_ONLY if gpu_only else 0))
            st = lib.hsa_amd_signal_create(initial, n, agents, bits, out)
            if st:
                raise hsa_error(st, "hsa_amd_signal_create")
        else:
            st = lib.hsa_signal_create(initial, n, agents, out)
            if st:
                raise hsa_error(st, "hsa_signal_create")
        self._adopt(out[0], rt, attributes)

    def _adopt(self, handle: Any, rt: Runtime, attributes: frozenset[str]) -> None:
        """Own `handle` (destroyed at release), holding `rt`."""
        _, lib = api()
        self.attributes: frozenset[str] = attributes
        self._lib = lib
        self._bad = False
        self._cb: CallbackErrors | None = None
        self._tokens: set[int] = set()
        self._hv: int = handle.handle
        super().__init__(handle, (_destroy, lib, handle), parents=(rt,))

    @classmethod
    def attach(cls, handle: Any, *, runtime: Runtime | None = None) -> Signal:
        """The signal another process shared with `ipc_handle` (hsa_amd_ipc_signal_attach).

        Owned like any Signal: its release (hsa_signal_destroy) detaches it;
        the exporter's signal may be destroyed first.  Attached signals poll
        (ROCr's IPCSignal is a BusyWaitSignal).
        """
        rt = attach_runtime(handle, runtime)
        ffi, lib = api()
        if not _ops:
            _bind(lib)
        out = ffi.new("hsa_signal_t *")
        st = lib.hsa_amd_ipc_signal_attach(handle._native(), out)
        if st:
            raise hsa_error(st, "hsa_amd_ipc_signal_attach")
        sig = cls.__new__(cls)
        sig._adopt(out[0], rt, frozenset({"ipc", "attached"}))
        return sig

    def ipc_handle(self) -> Any:
        """An `hsa.IpcHandle` for another process's `Signal.attach` (hsa_amd_ipc_signal_create).

        Only for a signal made with ``ipc=True`` (ROCr: "Signal must be IPC
        enabled", ``HSA_STATUS_ERROR_INVALID_ARGUMENT``).
        """
        h = self._use()
        ffi, lib = api()
        out = ffi.new("hsa_amd_ipc_signal_t *")
        st = lib.hsa_amd_ipc_signal_create(h, out)
        if st:
            raise hsa_error(st, "hsa_amd_ipc_signal_create")
        return IpcHandle._from_native(out, 4096, "signal")

    @property
    def runtime(self) -> Runtime | None:
        """The `Runtime` this signal holds (None once closed)."""
        parents = self._parents
        return parents[0] if parents else None

    def __repr__(self) -> str:
        if self._h is None:
            return "<hsa.Signal closed>"
        return f"<hsa.Signal {self._hv:#x} value={self.load('relaxed')}>"

    # ---- use ------------------------------------------------------------------------

    def _use(self) -> Any:
        """The native handle; raises `ClosedError` once closed, `CallbackError` when pending."""
        h = self._h
        if h is None or self._bad:
            return self._slow_use()
        return h

    def _slow_use(self) -> Any:
        h = self._require_open()
        cb = self._cb
        self._bad = False
        if cb is not None:
            cb.check()
        return h

    def close(self, stream: Any = None) -> None:
        """Destroy the signal (hsa_signal_destroy); its pending `on` handlers are forgotten.

        Closed at once for every use; while other threads wait on it, the
        destroy waits for them to leave (within a wait slice, raising
        `ClosedError` there): the runtime never sees a destroyed signal waited on.
        """
        tokens, self._tokens = self._tokens, set()
        if tokens:
            d = dispatcher()
            for t in tokens:
                d.unregister(t)
        with _close_lock:
            super().close(stream)

    def _reached_zero(self) -> bool:
        """Keep-alive check (reaper thread): the value dropped to 0 or below, or the signal is gone."""
        with _close_lock:
            h = self._h
            return h is None or self._lib.hsa_signal_load_relaxed(h) <= 0

    # ---- loads and stores -------------------------------------------------------------

    def load(self, order: str = "scacquire") -> int:
        """The current value (hsa_signal_load_*)."""
        if self._h is None or self._bad:
            self._slow_use()
        try:
            fn = _by_int["load"][order]
        except KeyError:
            raise _order_error("load", order) from None
        result: int = fn(self._hv if _BY_INT else self._h)
        return result

    @property
    def value(self) -> int:
        """The current value, loaded with scacquire."""
        return self.load()

    def store(self, value: int, order: str = "screlease") -> None:
        """Set the value, waking waiters (hsa_signal_store_*)."""
        self._store("store", value, order)

    def silent_store(self, value: int, order: str = "screlease") -> None:
        """Set the value without waking waiters (hsa_signal_silent_store_*)."""
        self._store("silent_store", value, order)

    def _store(self, op: str, value: int, order: str) -> None:
        if self._h is None or self._bad:
            self._slow_use()
        try:
            fn = _by_int[op][order]
        except KeyError:
            raise _order_error(op, order) from None
        fn(self._hv if _BY_INT else self._h,
           value if type(value) is int and -(1 << 63) <= value < 1 << 63 else int64(value))

    # ---- read-modify-write ----------------------------------------------------------------

    def _rmw(self, op: str, value: int, order: str) -> Any:
        """``op`` (a store or read-modify-write of one value) in memory `order`."""
        h = self._use()
        try:
            fn = _ops[op][order]
        except KeyError:
            raise _order_error(op, order) from None
        return fn(h, int64(value))

    def exchange(self, value: int, order: str = "scacq_screl") -> int:
        """Set the value; return the previous one (hsa_signal_exchange_*)."""
        result: int = self._rmw("exchange", value, order)
        return result

    def cas(self, expected: int, value: int, order: str = "scacq_screl") -> int:
        """Set `value` if the value is `expected`; return the value observed (hsa_signal_cas_*)."""
        h = self._use()
        try:
            fn = _ops["cas"][order]
        except KeyError:
            raise _order_error("cas", order) from None
        result: int = fn(h, int64(expected, "expected"), int64(value))
        return result

    def add(self, value: int, order: str = "scacq_screl") -> None:
        """Add `value` (hsa_signal_add_*)."""
        self._rmw("add", value, order)

    def subtract(self, value: int, order: str = "scacq_screl") -> None:
        """Subtract `value` (hsa_signal_subtract_*)."""
        self._rmw("subtract", value, order)

    def and_(self, value: int, order: str = "scacq_screl") -> None:
        """Bitwise AND with `value` (hsa_signal_and_*)."""
        self._rmw("and", value, order)

    def or_(self, value: int, order: str = "scacq_screl") -> None:
        """Bitwise OR with `value` (hsa_signal_or_*)."""
        self._rmw("or", value, order)

    def xor(self, value: int, order: str = "scacq_screl") -> None:
        """Bitwise XOR with `value` (hsa_signal_xor_*)."""
        self._rmw("xor", value, order)

    # ---- waits ----------------------------------------------------------------------------

    def wait(self, condition: str = "eq", value: int = 0, timeout: float | None = None,
             wait_state: str = "blocked", *, order: str = "scacquire",
             raise_on_timeout: bool = False) -> int:
        """Block until the value meets `condition` against `value`; return the value observed.

        ``timeout`` in seconds (None: no limit).  On a timeout the value
        observed fails the condition, unless ``raise_on_timeout`` makes it a
        `WaitTimeout` (a `TimeoutError`).  ``wait_state`` is HSA's hint
        (``'blocked'`` or ``'active'``); ``order`` ``'scacquire'`` or ``'relaxed'``.

        Args:
            condition: ``'eq'``, ``'ne'``, ``'lt'`` or ``'gte'`` (HSA's conditions).
            value: The value compared against.
            timeout: Seconds to wait at most; None: no limit.
            wait_state: ``'blocked'`` or ``'active'``.
            order: The memory order of the load that satisfies the condition.
            raise_on_timeout: Raise instead of returning a failing value.

        Returns:
            The value observed (which meets the condition unless it timed out).

        Raises:
            WaitTimeout: the timeout passed and ``raise_on_timeout`` is set.
            ValueError: an unknown condition, wait state or order.
            rocpy.ClosedError: the signal was closed.
        """
        self._use()
        cond = condition_value(condition)
        state = wait_state_value(wait_state)
        target = int64(value)
        try:
            fn = _ops["wait"][order]
        except KeyError:
            raise _order_error("wait", order) from None
        limit = check_timeout(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        slice_ticks = ticks(_SLICE)
        h = self._pin()               # a close meanwhile destroys it after this wait
        try:
            while True:
                if deadline is None:
                    hint = slice_ticks
                else:
                    left = deadline - time.monotonic()
                    hint = ticks(min(left, _SLICE)) if left > 0 else 0
                if self._h is None:
                    raise ClosedError("hsa.Signal was closed while waited on")
                observed: int = fn(h, cond, target, hint, state)
                if satisfied(condition, observed, target):
                    return observed
                if deadline is not None and time.monotonic() >= deadline:
                    if raise_on_timeout:
                        raise WaitTimeout(f"signal {self._hv:#x}: value {observed} after {limit} s, "
                                          f"waiting for {condition} {target}", observed)
                    return observed
        finally:
            self._unpin()

    @staticmethod
    def wait_any(signals: Sequence[Signal], conditions: str | Sequence[str] = "eq",
                 values: int | Sequence[int] = 0, timeout: float | None = None,
                 wait_state: str = "blocked", *,
                 raise_on_timeout: bool = False) -> tuple[int | None, int | None]:
        """Block until one signal meets its condition (hsa_amd_signal_wait_any).

        ``conditions`` and ``values`` are one for all or one per signal.
        Returns ``(index, value)``; on a timeout ``(None, None)``, or a
        `WaitTimeout` with ``raise_on_timeout``.
        """
        signals = list(signals)
        if not signals:
            raise ValueError("wait_any needs at least one signal")
        n = len(signals)
        conds, vals, cs, vs = conditions_and_values(n, conditions, values)
        ffi, lib = api()
        hs = ffi.new("hsa_signal_t[]", n)
        for i, s in enumerate(signals):
            if not isinstance(s, Signal):
                raise TypeError(f"signals[{i}] must be an hsa.Signal, not {type(s).__name__}")
            s._use()
        state = wait_state_value(wait_state)
        out = ffi.new("hsa_signal_value_t *")
        limit = check_timeout(timeout)
        deadline = None if limit is None else time.monotonic() + limit
        slice_ticks = ticks(_SLICE)
        entered: list[Signal] = []
        try:
            for i, s in enumerate(signals):
                hs[i] = s._pin()
                entered.append(s)
            while True:
                if deadline is None:
                    hint = slice_ticks
                else:
                    left = deadline - time.monotonic()
                    hint = ticks(min(left, _SLICE)) if left > 0 else 0
                for i, s in enumerate(signals):
                    if s._h is None:
                        raise ClosedError(f"signals[{i}] was closed while waited on")
                index = lib.hsa_amd_signal_wait_any(n, hs, cs, vs, hint, state, out)
                if index != UINT32_MAX and index < n and satisfied(conds[index], out[0], vals[index]):
                    return index, out[0]
                if deadline is not None and time.monotonic() >= deadline:
                    if raise_on_timeout:
                        raise WaitTimeout(f"no signal met its condition within {limit} s", None)
                    return None, None
        finally:
            for s in entered:
                s._unpin()

    # ---- asynchronous handlers -----------------------------------------------------------------

    def on(self, condition: str, value: int, callback: Callable[[int], Any]) -> None:
        """Call ``callback(observed_value)`` once the value meets `condition` against `value`.

        Registered with hsa_amd_signal_async_handler through rocpy's C
        trampoline; the callback runs once, on rocpy's dispatcher thread.
        """
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        h = self._use()
        cond = condition_value(condition)
        target = int64(value)
        ffi, lib = api()
        if self._cb is None:
            self._cb = CallbackErrors()
        errors = self._cb
        box: list[int] = []

        # Holds the Signal: it stays alive while the handler is registered.
        def fire(observed: int, _unused: int, sig: Signal = self) -> None:
            if box:
                sig._tokens.discard(box[0])
            try:
                callback(observed)
            except BaseException as exc:
                report(callback, exc)   # warned before any use can raise it
                errors.add(exc)
                sig._bad = True

        d = dispatcher()
        token = d.register(fire, once=True)
        box.append(token)
        self._tokens.add(token)
        trampoline = ffi.cast("hsa_amd_signal_handler",
                              ffi.addressof(lib, "rocpy_callqueue_signal_handler"))
        st = lib.hsa_amd_signal_async_handler(h, cond, target, trampoline,
                                              ffi.cast("void *", token))
        if st:
            d.unregister(token)
            self._tokens.discard(token)
            raise hsa_error(st, "hsa_amd_signal_async_handler")

    @property
    def pending_handlers(self) -> int:
        """How many `on` handlers are registered and have not run yet."""
        return len(self._tokens)


#: the Python definitions of the methods `_install_methods` compiles
_PYTHON: dict[str, Any] = {op: Signal.__dict__[op] for op in _METHOD_KINDS}
