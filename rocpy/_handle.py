"""The one ownership primitive: every object owning a native handle is a `Handle`.

Each handle has a record, made with it, holding everything its release needs:
the release recipe (a callable and its arguments, never the object itself),
the parents it depends on, and a weak reference whose callback posts the
release to the reaper thread when the object is collected.  One table holds
the records not yet released, in creation order.  The rules:

* release exactly once: a record is claimed (LIVE -> CLOSING) under a lock,
  by `close()`, the reaper, `invalidate()` or the exit hook, and only once;
* a parent outlives its children: children hold their parents, and a parent
  closed while children are unreleased is released right after the last one;
* borrowed handles (no release recipe) are never destroyed;
* closed objects refuse use: ``_h`` is None once closed (`_require_open`);
* at exit, `release_all` releases what is left, newest first; a forked child
  inherits the records but never releases them.
"""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from . import _reaper, _shutdown
from .errors import ClosedError, ReleaseWarning

LIVE, CLOSING, DONE = 0, 1, 2

Recipe = tuple[Callable[..., object], tuple[Any, ...]]

# A collection can run finalizers (a user's __del__ closing a handle) on a thread
# that is inside a critical section here.  The lock is re-entrant, so they do not
# deadlock, and what they ask for is deferred to the reaper (see _held_here),
# so a critical section never sees the table change under it.
_lock = threading.RLock()
_held_here: Callable[[], bool] = _lock._is_owned  # type: ignore[attr-defined]
_live: dict[int, _Record] = {}  # creation order; every record not yet DONE
_counts: dict[str, int] = {}
_next_seq = 0
_started = False
_exited = False
_finalizing = sys.is_finalizing


class _Record:
    """What a handle's release needs, kept apart from the object itself."""

    __slots__ = ("children", "counted", "early", "kind", "orphaned", "parent_recs", "parents", "ref",
                 "release", "release_async", "seq", "state", "survives", "why")

    # a bound builtin, usable from weakref callbacks during interpreter teardown
    _post = staticmethod(_reaper.post)

    def __init__(self, kind: str, release: Recipe | None, release_async: Recipe | None,
                 parents: tuple[Any, ...], parent_recs: tuple[_Record, ...]) -> None:
        self.seq = -1
        self.kind = kind
        self.early = False      # released before the others at exit (see release_all)
        self.survives = False   # the runtime keeps it across a reset (invalidate_descendants)
        self.release = release
        self.release_async = release_async
        self.counted = release is not None
        self.parents = parents
        self.parent_recs = parent_recs
        self.children = 0
        self.orphaned = False  # closed while children lived: released after the last one
        self.state = LIVE
        self.ref: weakref.ref[Any] | None = None
        self.why: str | None = None

    def __call__(self, _ref: weakref.ref[Any]) -> None:
        # weakref callback: may run on any thread, inside any allocation
        self._post(self.reap)

    def reap(self) -> None:
        """On the reaper: release what the collected object owned, unless done already."""
        if _claim(self):
            _release(self, False)

    def finalize(self) -> None:
        """On the reaper: release a record claimed earlier (deferred by `close(stream=)`)."""
        _release(self, False)


class _Deferred:
    """A release ordered after a stream's or queue's work (`Handle.close(stream=)`):
    held through its `rocpy._keepalive.Timeline`; when dropped, the release goes
    to the reaper."""

    __slots__ = ("rec",)
    _post = staticmethod(_reaper.post)

    def __init__(self, rec: _Record) -> None:
        self.rec = rec

    def __del__(self) -> None:
        self._post(self.rec.finalize)


# Backpressure: releases are posted to one reaper thread, and some are slow
# (hipFree waits for the device's work).  Threads that keep dropping objects
# faster than it releases them would grow the backlog, and the native resources
# it holds (a stream is a thread in the stub), without bound; so making a new
# object waits (bounded) while more than BACKLOG_HIGH releases are queued.
BACKLOG_HIGH = 2000
BACKLOG_LOW = 500
THROTTLE_LIMIT = 2.0  # seconds; then it goes on anyway (never a deadlock)
_backlog: Callable[[], int] = _reaper._queue.qsize


def _throttle() -> None:
    if _held_here() or _reaper.is_reaper_thread() or not _reaper.running():
        return
    deadline = time.monotonic() + THROTTLE_LIMIT
    while _backlog() > BACKLOG_LOW and time.monotonic() < deadline:
        time.sleep(0.0005)


def _claim(rec: _Record) -> bool:
    with _lock:
        if rec.state != LIVE:
            return False
        rec.state = CLOSING
        return True


def _release(rec: _Record, raise_errors: bool, stream: Any = None) -> None:
    """Run a claimed record's release (or defer it), then retire the record."""
    with _lock:
        if rec.state == DONE:
            return
        if rec.children:
            rec.orphaned = True
            return
        recipe = rec.release
    if recipe is not None and stream is not None:
        if rec.release_async is None:
            stream._keep_alive(_Deferred(rec))
            return
        recipe = (rec.release_async[0], rec.release_async[1] + (stream,))
    try:
        if recipe is not None and not _finalizing():
            recipe[0](*recipe[1])
    except Exception as exc:
        if raise_errors:
            raise
        _warn(rec, exc)
    finally:
        _finish(rec)


def _finish(rec: _Record) -> None:
    """Retire a record: counts, parents' child counts, orphaned parents released."""
    ready: list[_Record] = []
    with _lock:
        if rec.state == DONE:
            return
        rec.state = DONE
        _live.pop(rec.seq, None)
        if rec.counted:
            left = _counts[rec.kind] - 1
            if left:
                _counts[rec.kind] = left
            else:
                del _counts[rec.kind]
        for parent in rec.parent_recs:
            parent.children -= 1
            if not parent.children and parent.orphaned:
                parent.orphaned = False
                ready.append(parent)
        parents = rec.parents
        rec.parents = rec.parent_recs = ()
        rec.ref = None
    del parents  # outside the lock: dropping a parent may run its weakref callback
    for parent in ready:
        _release(parent, False)


def _warn(rec: _Record, exc: Exception) -> None:
    try:
        warnings.warn(ReleaseWarning(f"releasing {rec.kind} failed: {exc}"))
    except Exception:
        pass  # warnings turned into errors where nothing can catch them


def _start() -> None:
    global _started
    with _lock:
        if _started or _exited:
            return
        _started = True
    _reaper.start()
    _shutdown.register()


_H = TypeVar("_H", bound="Handle")   # `with` gives back the handle's own class

class Handle:
    """Base of every object that owns (or borrows) a native handle.

    Subclasses create the native object, then call
    ``super().__init__(handle, (destroy_fn, arg, ...), parents=(...))``.
    The recipe must not reference the new object; ``destroy_fn`` raises on
    failure.  ``release=None`` makes a borrowed handle, never destroyed.
    ``release_async=(fn, arg, ...)`` lets ``close(stream=s)`` release in stream
    order by calling ``fn(arg, ..., s)``.

    Parents are held until the release has run; read them from ``_parents``
    (emptied by `close`).  Hot paths test ``self._h is None`` or call
    `_require_open`.
    """

    __slots__ = ("__weakref__", "_h", "_parents", "_rec")
    #: Objects that run work (streams, queues) set this: at exit they are released
    #: before everything else, so no work still queued on them can run on memory,
    #: signals or code the exit hook already released.
    _release_first_at_exit: bool = False
    #: Objects the runtime keeps across a device reset (hipamd: modules, events) set
    #: this: `invalidate_descendants` releases them, when asked, instead of
    #: abandoning them, since nothing else would.
    _survives_reset: bool = False
    _h: Any
    _rec: _Record
    _parents: tuple[Any, ...]

    def __init__(self, handle: Any, release: tuple[Any, ...] | None = None, *,
                 release_async: tuple[Any, ...] | None = None,
                 parents: tuple[Any, ...] = ()) -> None:
        global _next_seq
        if handle is None:
            raise ValueError("a native handle cannot be None")
        if _held_here():
            raise RuntimeError("rocpy objects cannot be made by a finalizer that "
                               "interrupted rocpy's bookkeeping")
        parents = tuple(parents)
        handles = [p for p in parents if isinstance(p, Handle)]
        rec = _Record(type(self).__name__,
                      None if release is None else (release[0], tuple(release[1:])),
                      None if release_async is None else (release_async[0], tuple(release_async[1:])),
                      parents, tuple(p._rec for p in handles))
        with _lock:
            closed = next((p for p in handles if p._rec.state != LIVE), None)
            if closed is None:
                rec.seq = _next_seq
                _next_seq += 1
                _live[rec.seq] = rec
                for parent in rec.parent_recs:
                    parent.children += 1
                if rec.counted:
                    _counts[rec.kind] = _counts.get(rec.kind, 0) + 1
        if closed is not None:
            if rec.release is not None:
                rec.release[0](*rec.release[1])
            raise closed._closed_error()
        rec.ref = weakref.ref(self, rec)
        rec.early = self._release_first_at_exit
        rec.survives = self._survives_reset
        self._h = handle
        self._rec = rec
        self._parents = parents
        if not _started:
            _start()
        elif _backlog() > BACKLOG_HIGH:
            _throttle()

    def _require_open(self) -> Any:
        """The native handle; raises `ClosedError` once closed or invalidated."""
        h = self._h
        if h is None:
            raise self._closed_error()
        return h

    def _pin(self) -> Any:
        """The native handle, its release held off until `_unpin`: for a call another
        thread's ``close()`` must not destroy the handle under (a wait).  A close
        meanwhile marks it closed at once and releases it at the last `_unpin`."""
        with _lock:
            h = self._h
            if h is None:
                raise self._closed_error()
            self._rec.children += 1
        return h

    def _unpin(self) -> None:
        _unpin(self._rec)

    def _closed_error(self) -> ClosedError:
        why = self._rec.why
        name = type(self).__name__
        return ClosedError(f"{name} is closed" if why is None else f"{name} is no longer valid: {why}")

    @property
    def handle(self) -> Any:
        """The native handle (raises `ClosedError` once closed)."""
        return self._require_open()

    @property
    def closed(self) -> bool:
        """Whether `close()` ran or a parent invalidated this object."""
        return self._h is None

    @property
    def owned(self) -> bool:
        """False for a borrowed handle, which rocpy never destroys."""
        return self._rec.counted

    def close(self, stream: Any = None) -> None:
        """Release the native handle now; later calls do nothing.

        With `stream` (a HIP `Stream` or an HSA `Queue`), the release is ordered
        after the work already enqueued there: by the ``release_async`` recipe,
        else by handing the release to ``stream._keep_alive(obj)`` (the
        `rocpy._keepalive.Timeline` interface), which keeps `obj` until that
        work is done.
        A parent with live children is released right after its last child.
        Release failures raise, and the object is closed regardless.
        """
        rec = self._rec
        if _held_here():
            # a finalizer interrupting rocpy on this thread: let the reaper do it
            self._h = None
            self._parents = ()
            rec._post(rec.reap)
            return
        if not _claim(rec):
            return
        self._h = None
        self._parents = ()
        _release(rec, True, stream)

    def invalidate(self, reason: str) -> None:
        """Mark this object and its descendants dead without releasing them.

        For handles the runtime already destroyed (e.g. by a device reset);
        using them raises `ClosedError` mentioning `reason`.
        """
        _invalidate(self._rec, True, reason)

    def invalidate_descendants(self, reason: str, release_survivors: bool = False) -> None:
        """Mark every descendant dead without releasing it; this object stays usable.

        With `release_survivors`, descendants whose class sets `_survives_reset`
        are released as they are marked (children first): what the runtime did
        not destroy along with the rest (hipamd keeps modules and events across
        a device reset).
        """
        _invalidate(self._rec, False, reason, release_survivors)

    def __enter__(self: _H) -> _H:
        self._require_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self) -> Any:
        # a copy would be a second owner of the same native handle
        raise TypeError(f"{type(self).__name__} objects cannot be copied or pickled")

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"handle={self._h!r}"
        return f"<{type(self).__name__} {state}>"


def _unpin(rec: _Record) -> None:
    with _lock:
        rec.children -= 1
        ready = not rec.children and rec.orphaned
        if ready:
            rec.orphaned = False
    if ready:
        _release(rec, False)


class Borrow:
    """A pin (`Handle._pin`) held by work the runtime may still run: queued copies,
    packets, graph nodes.  While it lives, ``close()`` of the object only marks it
    closed; the release runs once the last borrow is dropped.  Dropping it
    (normally when the work is known complete) posts the unpin to the reaper,
    so it is safe from any finalizer.
    """

    __slots__ = ("_rec",)
    _post = staticmethod(_reaper.post)

    def __init__(self, obj: Handle) -> None:
        obj._pin()            # ClosedError if it is closed already
        self._rec: _Record | None = obj._rec

    def __del__(self) -> None:
        rec = self._rec
        if rec is not None:
            self._rec = None
            self._post(lambda: _unpin(rec))


def borrow_all(objs: Any) -> list[Borrow]:
    """A `Borrow` of every `Handle` in ``objs`` (others are skipped)."""
    return [Borrow(o) for o in objs if isinstance(o, Handle)]


def _invalidate(root: _Record, include_root: bool, reason: str,
                release_survivors: bool = False) -> None:
    if _held_here():
        _reaper.post(lambda: _invalidate(root, include_root, reason, release_survivors))
        return
    kept: dict[_Record, Recipe] = {}
    with _lock:
        dead = {root.seq}
        victims = [root] if include_root and root.state != DONE else []
        for rec in _live.values():  # parents come before their children
            if rec is not root and any(p.seq in dead for p in rec.parent_recs):
                dead.add(rec.seq)
                victims.append(rec)
        for rec in victims:
            if release_survivors and rec.survives and rec.release is not None and \
                    rec.state == LIVE:
                kept[rec] = rec.release
            rec.release = rec.release_async = None
            rec.why = reason
            if rec in kept:
                rec.state = CLOSING   # claimed here: released below, never by anyone else
    for rec in reversed(victims):
        ref = rec.ref
        obj = ref() if ref is not None else None
        if obj is not None:
            obj._h = None
            obj._parents = ()
        recipe = kept.get(rec)
        if recipe is not None and not _finalizing():
            try:
                recipe[0](*recipe[1])
            except Exception as exc:
                _warn(rec, exc)
        _finish(rec)


def live_descendants(root: Handle, kind: str, parent_kinds: frozenset[str]) -> int:
    """How many live descendants of ``root`` are of type ``kind`` with a parent of
    a type in ``parent_kinds`` (the views of its device memory, for `Device.reset`)."""
    with _lock:
        found, n = {root._rec.seq}, 0
        for rec in _live.values():  # parents come before their children
            if any(p.seq in found for p in rec.parent_recs):
                found.add(rec.seq)
                if rec.kind == kind and rec.state == LIVE and \
                        any(p.kind in parent_kinds for p in rec.parent_recs):
                    n += 1
        return n


def live_objects() -> dict[str, int]:
    """Owned handles not yet released, counted per type name."""
    with _lock:
        return dict(_counts)


def release_all() -> None:
    """At exit: release every live handle, newest first; later ones are leaked.

    What runs work (``_release_first_at_exit``: streams, queues) goes first:
    destroying it stops work that could otherwise still run on what is
    released after (an HSA queue blocked on a signal would start when the
    signal is destroyed, on buffers already freed).
    """
    global _exited
    with _lock:
        _exited = True
        records = list(_live.values())
    records = [r for r in records if not r.early] + [r for r in records if r.early]
    for rec in reversed(records):
        if _claim(rec):
            # a daemon thread still running may use it: say why it is closed
            rec.why = "rocpy released it at interpreter exit"
            ref = rec.ref
            obj = ref() if ref is not None else None
            if obj is not None:
                obj._h = None
                obj._parents = ()
            _release(rec, False)


def _after_fork_in_child() -> None:
    # The native handles belong to the parent process: a child never releases them,
    # and, once the runtime was loaded, never uses them either (they refuse, naming
    # the fork).  Another thread may have held the lock at the fork: a fresh one.
    global _started, _lock, _held_here
    _lock = threading.RLock()
    _held_here = _lock._is_owned  # type: ignore[attr-defined]
    from . import _backend
    why = None
    if _backend._current is not None:
        from .errors import fork_message
        why = fork_message(_backend._owner_pid)
    for rec in _live.values():
        rec.release = rec.release_async = None
        rec.counted = False
        if why is not None:
            rec.why = why
            obj = rec.ref() if rec.ref is not None else None
            if obj is not None:
                obj._h = None
    _counts.clear()
    _started = False


os.register_at_fork(after_in_child=_after_fork_in_child)
