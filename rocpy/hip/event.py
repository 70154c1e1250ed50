"""`Event`: a marker in a stream; completion queries, host waits and timing.

::

    start = s.record()                 # an Event with timing, recorded on s
    ...
    stop = s.record()
    stop.sync()
    ms = stop - start                  # milliseconds between the two records

Errors are the runtime's, as `HipError` subclasses, with a note saying why:
an event made with ``timing=False`` or never recorded gives
``hipErrorInvalidHandle`` (`rocpy.InvalidHandleError`) from ``end - start``, an
event not yet complete ``hipErrorNotReady`` (`rocpy.NotReadyError`).
`query` reports completion as a bool: not ready is an answer there,
not an error.
"""
from __future__ import annotations

from typing import Any

from .._handle import Handle
from ..errors import hip_error
from . import _api, _calls, _methods, _wait
from ._api import api, use_device
from .device import Device, as_device


# rocpy.hip.stream imports this module: its names are bound here by `_as_stream` at the
# first use (the import-cycle rule, ARCHITECTURE.md); until then `type(s) is Stream`
# fails and the slow path binds them.
Stream: Any = None
as_stream: Any = None


def _as_stream(obj: Any, device: Any) -> Any:
    """`rocpy.hip.stream.as_stream`; binds this module's ``Stream``/``as_stream`` first."""
    global Stream, as_stream
    from .stream import Stream, as_stream
    return as_stream(obj, device)


def _record(ev: int, stream: int) -> int:
    """``hipEventRecord`` by addresses (bound at the first call, `_calls`)."""
    global _record
    # rebinds itself at the first call
    _record = _calls.bind_pp("hipEventRecord", "hipEvent_t", "hipStream_t")  # type: ignore[assignment]
    return _record(ev, stream)


def _query(ev: int) -> int:
    """``hipEventQuery`` by address (bound at the first call)."""
    global _query
    # rebinds itself at the first call
    _query = _calls.bind_p("hipEventQuery", "hipEvent_t")  # type: ignore[assignment]
    return _query(ev)


def _destroy_event(h: Any) -> None:
    """Release recipe: ``hipEventDestroy``; raises on failure."""
    st = api().lib.hipEventDestroy(h)
    if st:
        raise hip_error(st, "hipEventDestroy")


class Event(Handle):
    """A HIP event on a device (default: the current device).

    ``timing=False`` makes a lighter event that cannot be timed
    (``hipEventDisableTiming``); ``blocking=True`` makes `sync` block
    the thread instead of spinning (``hipEventBlockingSync``);
    ``interprocess=True`` makes an event shareable between processes
    (``hipEventInterprocess``; requires ``timing=False``).
    """

    __slots__ = ("_dev", "_flags", "_addr")
    _survives_reset = True    # hipamd keeps events across hipDeviceReset (Device.reset)

    _dev: Device
    _flags: int

    def __init__(self, device: Any = None, *, timing: bool = True, blocking: bool = False,
                 interprocess: bool = False) -> None:
        a = api()
        lib = a.lib
        dev = as_device(device)
        if interprocess and timing:
            raise _api.invalid("Event", "an interprocess event cannot record timing: "
                                        "pass timing=False with interprocess=True")
        flags = lib.hipEventDefault
        if not timing:
            flags |= lib.hipEventDisableTiming
        if blocking:
            flags |= lib.hipEventBlockingSync
        if interprocess:
            flags |= lib.hipEventInterprocess
        use_device(dev._index)
        out = a.ffi.new("hipEvent_t *")
        st = lib.hipEventCreateWithFlags(out, flags)
        if st:
            raise hip_error(st, "hipEventCreateWithFlags")
        h = out[0]
        super().__init__(h, (_destroy_event, h), parents=(dev.context,))
        self._dev = dev
        self._flags = flags
        self._addr = _calls.address_of(h)
        if not _methods._installed[0]:
            _methods.install()

    @property
    def device(self) -> Device:
        """The device the event belongs to."""
        return self._dev

    @property
    def timing(self) -> bool:
        """Whether the event records time (not made with ``timing=False``)."""
        return not self._flags & api().lib.hipEventDisableTiming

    @property
    def blocking(self) -> bool:
        """Whether `sync` blocks rather than spins."""
        return bool(self._flags & api().lib.hipEventBlockingSync)

    @property
    def interprocess(self) -> bool:
        """Whether the event can be shared with other processes."""
        return bool(self._flags & api().lib.hipEventInterprocess)

    def __repr__(self) -> str:
        if self._h is None:
            return "<Event closed>"
        kind = "timing" if self.timing else "no timing"
        return f"<Event on Device {self._dev._index} ({kind})>"

    def record(self, stream: Any = None) -> Event:
        """Record on ``stream`` (default: the device's null stream); returns self.

        The event completes when the work enqueued on the stream before it
        does.  Recording again moves the marker.
        """
        h = self._h
        if h is None:
            raise self._closed_error()
        s = stream if type(stream) is Stream else _as_stream(stream, self._dev)
        lane = s._lane
        if lane.ready < 0 or s._h is None:
            s._open_bound()
        st = _record(self._addr, lane.addr)
        if st:
            raise hip_error(st, "hipEventRecord")
        return self

    def query(self) -> bool:
        """True once the recorded work is complete (an event never recorded is complete)."""
        h = self._h
        if h is None:
            raise self._closed_error()
        st = _query(self._addr)
        if not st:
            return True
        if st == api().not_ready:
            return False
        raise hip_error(st, "hipEventQuery")

    def sync(self) -> None:
        """Block until the recorded work is complete."""
        h = self._h
        if h is None:
            raise self._closed_error()
        blocking = self._flags & api().lib.hipEventBlockingSync
        st = _wait.wait(_wait.EVENT, h, self._dev._index, self, long_spin=not blocking)
        if st:
            raise hip_error(st, "hipEventSynchronize")

    def __sub__(self, start: object) -> float:
        """``end - start``: milliseconds from ``start`` to this event (``hipEventElapsedTime``).

        Both must have timing, have been recorded, be complete and be on the
        same device; otherwise the runtime's error is raised with a note.

        Args:
            start: The earlier `Event`.

        Returns:
            The time between the two, in milliseconds.

        Raises:
            TypeError: ``start`` is not an `Event` (Python's operator error).
            rocpy.NotReadyError: an event has not completed yet.
            rocpy.HipError: an event has no timing or was not recorded
                (``hipErrorInvalidHandle``).
        """
        if not isinstance(start, Event):
            return NotImplemented
        sh = start._require_open()
        eh = self._require_open()
        a = api()
        out = a.ffi.new("float *")
        st = a.lib.hipEventElapsedTime(out, sh, eh)
        if st:
            note = None
            if st == a.not_ready:
                note = "an event has not completed yet: sync() the later one first"
            elif not (start.timing and self.timing):
                note = "an event made with timing=False has no time"
            elif st == a.lib.hipErrorInvalidHandle:
                note = ("both events must have been recorded, on streams of the same device "
                        f"(Device {start._dev._index} and Device {self._dev._index})")
            _api.raise_status(st, "hipEventElapsedTime", note)
        return float(out[0])


#: events of released fences, per device index, reused by the next fence there (a fence
#: per batch of held work would otherwise cost a hipEventCreate and a hipEventDestroy);
#: at most FENCE_POOL_MAX each, the rest destroyed
_fence_pool: dict[int, list[Any]] = {}
FENCE_POOL_MAX = 64


def _recycle_fence(dev_index: int, ev: Any) -> None:
    """Release recipe of a fence: its event back to the device's pool (or destroyed when
    the pool is full).  Reusing it is safe: a fence is private, nothing else waits on it,
    and re-recording an event replaces its earlier record (hipEventRecord)."""
    pool = _fence_pool.setdefault(dev_index, [])
    if len(pool) < FENCE_POOL_MAX:
        pool.append(ev)
    else:
        _destroy_event(ev)


def drain_fence_pool(dev_index: int, destroy: bool) -> int:
    """Empty device ``dev_index``'s fence pool (a device reset): destroy the events, or
    abandon them where the runtime destroyed them itself (CUDA); how many there were."""
    pool = _fence_pool.pop(dev_index, [])
    if destroy:
        lib = api().lib
        for ev in pool:
            lib.hipEventDestroy(ev)
    return len(pool)


class _Fence(Handle):
    """A private, untimed event recorded on a stream: the completion check of
    a keep-alive entry.  Never exposed; its event goes back to a per-device pool
    when the fence is released (`_recycle_fence`)."""

    __slots__ = ()
    _survives_reset = True    # an event (Device.reset)

    @classmethod
    def record(cls, handle: Any, dev_index: int, ctx: Any) -> _Fence:
        a = api()
        lib = a.lib
        use_device(dev_index)
        pool = _fence_pool.get(dev_index)
        if pool:
            ev = pool.pop()
        else:
            out = a.ffi.new("hipEvent_t *")
            st = lib.hipEventCreateWithFlags(out, lib.hipEventDisableTiming)
            if st:
                raise hip_error(st, "hipEventCreateWithFlags")
            ev = out[0]
        st = lib.hipEventRecord(ev, handle)
        if st:
            lib.hipEventDestroy(ev)
            raise hip_error(st, "hipEventRecord")
        fence = cls.__new__(cls)
        Handle.__init__(fence, ev, (_recycle_fence, dev_index, ev), parents=(ctx,))
        return fence

    def done(self) -> bool:
        """True once the work before the fence completed (or the fence is gone)."""
        h = self._h
        if h is None:
            return True
        a = api()
        return a.lib.hipEventQuery(h) != a.not_ready
