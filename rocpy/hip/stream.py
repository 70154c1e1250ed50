"""`Stream`: an in-order queue of device work (HIP's ``hip::Stream``).

::

    s = dev.create_stream(priority="high", non_blocking=True)
    buf.copy_from(host, stream=s)
    k.launch(grid, block, args, stream=s)
    s.add_callback(print, "done")          # runs on rocpy's dispatcher thread
    ev = s.record()
    s.sync()                        # callbacks' exceptions raise here
    with s.capture(mode="thread_local") as g:
        k.launch(grid, block, args, stream=s)
    g.instantiate().launch(s)

Kinds of stream:

* ``dev.create_stream(priority=, non_blocking=, cu_mask=)``: owned; destroyed
  by `close` (or ``with``, which synchronizes first);
* `Device.default_stream`: the legacy null stream, borrowed; work on it waits for
  the device's blocking streams and they wait for it (``non_blocking``
  streams do not);
* `Stream.per_thread(dev)`: the calling thread's default stream
  (``hipStreamPerThread``), borrowed;
* `Stream.from_handle(ptr, owner=obj)`: another library's stream, borrowed;
  ``owner`` is kept alive as long as the wrapper.

Everywhere rocpy takes a stream it also takes ``None`` (the null stream of
the device concerned) and any object with a ``__hip_stream__()`` or
``__cuda_stream__()`` method returning ``(version, handle_int)`` (CuPy, AMD's
HIP bindings and cuda.core use the CUDA name on ROCm too), on every backend;
`stream_handle` is the one place that reads them.  Streams export both.

Stream-ordered lifetime: what enqueued work uses (buffers, pageable host
arrays, kernel arguments) is held by the stream until that work completes.
The stream records a private event (a fence) every few hundred items, or at
once where a release waits on it; `sync` and `query` drop what is
complete.  A stream closed or collected with work in flight hands what that
work uses to rocpy's reaper, which drops it when the work completes.  That
machinery is `_stream_order` (the base class `_OrderedHandle`).
"""
from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _args
from .._dispatcher import CallbackErrors
from .._handle import Handle
from .._keepalive import PendingList
from ..errors import NotSupportedError, hip_error
from . import _api, _calls, _wait
from ._api import api, use_device
from ._callbacks import (_callback_trampolines, _dispatcher_barrier, forget_host_callback,
                         register_host_callback)
from . import _lane
from ._lane import new_lane
from ._stream_options import cu_mask_words, priority_value
from ._stream_order import FENCE_EVERY, StreamNative, _destroy_stream, _OrderedHandle
from ._stream_protocol import stream_device, stream_handle
from .device import Device, as_device
from .event import Event

if TYPE_CHECKING:
    from .context import Context

_OWNED, _NULL, _PER_THREAD, _FOREIGN = "owned", "null", "per_thread", "foreign"
_per_thread = threading.local()


_NOT_READY = -1   # hipErrorNotReady, set with the first bind


def _stream_query(stream: int) -> int:
    """``hipStreamQuery`` by address (bound at the first call, `_calls`)."""
    global _stream_query, _NOT_READY
    _NOT_READY = api().not_ready
    # rebinds itself at the first call
    _stream_query = _calls.bind_p("hipStreamQuery", "hipStream_t")  # type: ignore[assignment]
    return _stream_query(stream)


def _wait_event(stream: int, event: int, flags: int) -> int:
    """``hipStreamWaitEvent`` by addresses (bound at the first call, `_calls`)."""
    global _wait_event
    # rebinds itself at the first call
    _wait_event = _calls.bind_ppu("hipStreamWaitEvent", "hipStream_t", "hipEvent_t")  # type: ignore[assignment]
    return _wait_event(stream, event, flags)


class Stream(_OrderedHandle):
    """A HIP stream; see the module docstring.  Make one with `Device.create_stream`."""

    __slots__ = ("_dev", "_dev_index", "_ctx", "_bind", "_errors", "_kind", "_capture",
                 "_priority", "_flags", "_cb_seen", "_more_errors", "_weak", "_thread")

    _dev: Device
    _dev_index: int
    _ctx: Any
    _bind: int
    _errors: CallbackErrors
    _kind: str
    _capture: Any
    _priority: int | None
    _flags: int | None
    _cb_seen: bool
    _more_errors: list[CallbackErrors]
    _weak: weakref.ref[Stream]
    _thread: int
    _release_first_at_exit = True    # destroyed before what its work uses (see _handle)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make a Stream with Device.create_stream(), Device.default_stream, "
                        "Stream.per_thread() or Stream.from_handle()")

    # ---- construction -----------------------------------------------------------

    @classmethod
    def _new(cls, dev: Device, handle: Any, kind: str, release: bool,
             extra_parents: tuple[Any, ...] = ()) -> Stream:
        s = cls.__new__(cls)
        box: list[Any] = [[]]
        pending = PendingList(ordered=True)
        ctx = dev.context
        recipe = ((_destroy_stream, StreamNative(handle, dev._index, ctx, box, pending))
                  if release else None)
        Handle.__init__(s, handle, recipe, parents=(ctx,) + extra_parents)
        s._dev = dev
        s._dev_index = dev._index
        s._ctx = ctx
        s._bind = dev._index if kind in (_NULL, _PER_THREAD) else -1
        # per-thread and foreign wrappers fence at once: they may not outlive the thread
        # (or the other library's handle), so nothing waits in them for a later fence
        s._errors = CallbackErrors()
        # ready: the device index when nothing needs doing before enqueueing (no current
        # device to set, no capture), else -1: one comparison in Kernel.launch
        lane = new_lane(_api.address(handle), dev._index, dev._index if s._bind < 0 else -1,
                        s._errors, box,
                        FENCE_EVERY if kind in (_OWNED, _NULL) else 1)
        s._init_order(lane, pending)
        s._kind = kind
        s._capture = None
        s._priority = None
        s._flags = None
        s._cb_seen = False
        s._more_errors = []
        s._weak = weakref.ref(s)   # what buffers remember (Buffer._last): never a strong cycle
        # hipStreamPerThread names the calling thread's stream: the wrapper is its maker's
        s._thread = threading.get_ident() if kind == _PER_THREAD else 0
        dev._streams.add(s)
        return s

    @classmethod
    def _create(cls, dev: Device, priority: Any, non_blocking: bool, cu_mask: Any) -> Stream:
        a = api()
        ffi, lib = a.ffi, a.lib
        prio = priority_value(dev, priority)
        flags = lib.hipStreamNonBlocking if non_blocking else lib.hipStreamDefault
        out = ffi.new("hipStream_t *")
        if cu_mask is not None:
            words = cu_mask_words(cu_mask)
            if a.name == "nvidia" or not a.has("hipExtStreamCreateWithCUMask"):
                raise NotSupportedError("CU masks are an AMD extension "
                                        "(hipExtStreamCreateWithCUMask), not available here")
            if non_blocking or priority not in ("normal", 0):
                raise _api.invalid("Device.create_stream", "HIP cannot combine a CU mask with "
                                                           "non_blocking or a priority")
            use_device(dev._index)
            st = lib.hipExtStreamCreateWithCUMask(out, len(words), ffi.new("uint32_t[]", words))
            call = "hipExtStreamCreateWithCUMask"
        else:
            use_device(dev._index)
            st = lib.hipStreamCreateWithPriority(out, flags, prio)
            call = "hipStreamCreateWithPriority"
        if st:
            raise hip_error(st, call)
        h = out[0]
        try:
            s = cls._new(dev, h, _OWNED, True)
        except BaseException:
            lib.hipStreamDestroy(h)
            raise
        s._flags = flags
        return s

    @classmethod
    def _null(cls, device: Any = None) -> Stream:
        """The legacy null stream of ``device`` (default: the current device), borrowed
        (public as `Device.default_stream`).

        The same object every time (until a device reset).  Work on it runs
        after the device's blocking streams' earlier work and before their
        later work; non-blocking streams are not ordered with it.
        """
        dev = as_device(device)
        s = dev._null
        if s is None or s._h is None:
            with dev._dev_lock:
                s = dev._null
                if s is None or s._h is None:
                    s = dev._null = cls._new(dev, api().ffi.NULL, _NULL, False)
                    s._flags = api().lib.hipStreamDefault
                    s._priority = 0
        result: Stream = s
        return result

    @classmethod
    def per_thread(cls, device: Any = None) -> Stream:
        """The calling thread's default stream on ``device`` (``hipStreamPerThread``), borrowed.

        One object per thread and device; it is ordered with the null stream
        like a blocking stream.
        """
        dev = as_device(device)
        streams = getattr(_per_thread, "streams", None)
        if streams is None:
            streams = _per_thread.streams = {}
        s = streams.get(dev._index)
        if s is None or s._h is None:
            a = api()
            s = streams[dev._index] = cls._new(dev, a.ffi.cast("hipStream_t", 2), _PER_THREAD,
                                               False)
        return s

    @classmethod
    def from_handle(cls, handle: Any, *, owner: Any = None, device: Any = None) -> Stream:
        """Wrap another library's stream without owning it.

        ``handle``: an int or a cffi pointer, or an object with
        ``__hip_stream__`` (or ``__cuda_stream__`` on nvidia).  ``owner`` is
        kept alive while the wrapper lives.  ``device`` defaults to the
        stream's own (``hipGetStreamDeviceId`` where the runtime has it), else
        the current device.  0 is the null stream and 2 the per-thread stream.
        """
        a = api()
        ffi = a.ffi
        if isinstance(handle, Stream):
            return handle
        proto = stream_handle(handle)
        if proto is not None:
            if owner is None:
                owner = handle
            handle = proto
        if hasattr(type(handle), "__index__") and not isinstance(handle, bool):
            value = _args.integer(handle, "handle")
        elif isinstance(handle, ffi.CData):
            value = _api.address(handle)
        else:
            raise TypeError(f"a stream handle is an int, a cffi pointer or an object with "
                            f"__hip_stream__, not {type(handle).__name__}")
        if not 0 <= value < 1 << (8 * ffi.sizeof("void *")):
            # a cast would silently keep the low bits (2**64 became the null stream)
            raise _api.invalid("Stream.from_handle", f"{value} is not a stream handle")
        if device is None:
            device = stream_device(value)
        dev = as_device(device)
        if value == 0:
            return cls._null(dev)
        if value == 2:
            return cls.per_thread(dev)
        h = ffi.cast("hipStream_t", value)
        kind = _NULL if value == 1 and a.name == "nvidia" else _FOREIGN  # cudaStreamLegacy
        parents = () if owner is None else (owner,)
        s = cls._new(dev, h, kind, False, parents)
        s._lane.limit = 1     # a borrowed handle may not outlive the owner: fence every item
        return s

    # ---- what it is -------------------------------------------------------------

    @property
    def device(self) -> Device:
        """The device the stream runs work on."""
        return self._dev

    @property
    def context(self) -> Context:
        """The device's primary `Context`."""
        result: Context = self._ctx
        return result

    @property
    def kind(self) -> str:
        """``'owned'``, ``'null'``, ``'per_thread'`` or ``'foreign'``."""
        return self._kind

    @property
    def priority(self) -> int:
        """The priority (smaller is higher; see `Device.stream_priority_range`)."""
        p = self._priority
        if p is None:
            p = self._get("hipStreamGetPriority", "int *")
            if self._kind == _OWNED:
                self._priority = p
        return p

    @property
    def flags(self) -> int:
        """``hipStreamDefault`` (0) or ``hipStreamNonBlocking`` (1)."""
        f = self._flags
        if f is None:
            f = self._get("hipStreamGetFlags", "unsigned int *")
        return f

    def _get(self, call: str, ctype: str) -> int:
        """``call(stream, &out)`` (``hipStreamGetPriority``, ``hipStreamGetFlags``): out."""
        a = api()
        h = self._require_open()
        if self._bind >= 0:
            use_device(self._bind)
        out = a.ffi.new(ctype)
        st = getattr(a.lib, call)(h, out)
        if st:
            raise hip_error(st, call)
        result: int = out[0]
        return result

    @property
    def non_blocking(self) -> bool:
        """Whether the stream is exempt from the null stream's implicit ordering."""
        return bool(self.flags & api().lib.hipStreamNonBlocking)

    def _stream_int(self) -> int:
        h = self._require_open()
        return _api.address(h)

    def __hip_stream__(self) -> tuple[int, int]:
        """The stream protocol: ``(0, handle as int)`` (0 is the null stream)."""
        return 0, self._stream_int()

    def __cuda_stream__(self) -> tuple[int, int]:
        """The same protocol under the CUDA name (cuda.core, CuPy), on every backend."""
        return self.__hip_stream__()

    def __repr__(self) -> str:
        if self._h is None:
            return f"<Stream {self._kind} closed>"
        return f"<Stream {self._kind} {self._stream_int():#x} on Device {self._dev_index}>"

    # ---- work -------------------------------------------------------------------

    def _enter(self) -> Any:
        """Checks before enqueueing: open, callback errors, current device (what an
        enqueuer does when its lane's ``ready`` is not its device); the handle."""
        h = self._h
        if h is None:
            raise self._closed_error()
        if self._errors.pending:
            self._errors.check()
        self._use_device()
        return h

    def _open_bound(self) -> Any:
        """`_enter` without the callback errors (records, stream-ordered frees); the handle."""
        h = self._h
        if h is None:
            raise self._closed_error()
        self._use_device()
        return h

    def _use_device(self) -> None:
        """Make the stream's device current where its kind needs it (null, per-thread);
        a per-thread wrapper refuses other threads (there the name means their stream)."""
        if self._bind >= 0:
            if self._thread and self._thread != threading.get_ident():
                raise self._other_thread()
            use_device(self._bind)

    def _other_thread(self) -> Exception:
        return _api.fail("hipErrorInvalidHandle", "Stream.per_thread",
                         "this per-thread stream belongs to the thread that made it "
                         f"(ident {self._thread}); here hipStreamPerThread would name this "
                         "thread's own stream: call Stream.per_thread() in this thread")

    def sync(self) -> None:
        """Wait until all work enqueued so far is complete, host callbacks included.

        Raises `rocpy.CallbackError` if a callback added with `add_callback`
        (or a host node of a graph launched here) raised.
        """
        h = self._enter()
        taken = self._take()
        if self._kind == _PER_THREAD:   # a helper thread's hipStreamPerThread is its own
            st = _wait.wait(_wait.STREAM_POLL, h, self._dev_index)
        else:
            st = _wait.wait(_wait.STREAM, h, self._dev_index, self)
        if st:
            self._restore(taken)
            raise hip_error(st, "hipStreamSynchronize")
        del taken
        self._pending.poll()
        if self._cb_seen:
            self._cb_seen = False
            _dispatcher_barrier(call="Stream.sync")
        self._check_callbacks()

    def _check_callbacks(self) -> None:
        self._errors.check()
        more = self._more_errors
        if more:
            self._more_errors = []
            for errors in more:
                errors.check()

    def _watch_callbacks(self, errors: CallbackErrors) -> None:
        """Report ``errors`` (a graph's host nodes) at this stream's next synchronize."""
        self._cb_seen = True
        if not any(e is errors for e in self._more_errors):
            self._more_errors.append(errors)

    def query(self) -> bool:
        """Whether all work enqueued so far is complete (``hipStreamQuery``; not
        ready is False, not an error).  Host callbacks may still be running
        on rocpy's dispatcher thread; `sync` waits for them too."""
        lane = self._lane
        if lane.ready < 0 or self._h is None or lane.errors.pending:
            self._enter()
        # what is held before the query is complete if the query says so; what other
        # threads add meanwhile stays (a fence moving the batch leaves ``held`` alone)
        held = lane.box[0]
        n = len(held)
        with self._lock:        # meanwhile launches hold again what they use (Kernel._hold_launch)
            lane.querying += 1
        try:
            st = _stream_query(lane.addr)
        finally:
            with self._lock:
                lane.querying -= 1
        pending = self._pending
        if st:
            pending.poll()
            if st == _NOT_READY:
                return False
            raise hip_error(st, "hipStreamQuery")
        if n and self._capture is None:
            del held[:n]
        pending.poll()
        return True

    def wait(self, what: Any) -> None:
        """Make later work on this stream wait for ``what``: an `Event`, or
        another stream's work enqueued so far (``hipStreamWaitEvent``).

        Args:
            what: An `Event`, a `Stream`, or any object with ``__hip_stream__``
                or ``__cuda_stream__``.

        Raises:
            rocpy.ClosedError: this stream or ``what`` was closed.
            rocpy.HipError: the runtime refused (its status).
        """
        h = self._enter()
        _lane.mark(self._dev_index)   # later work here may wait long: null copies wait first
        if isinstance(what, Event):
            what._require_open()
            st = _wait_event(self._lane.addr, what._addr, 0)
            if st:
                raise hip_error(st, "hipStreamWaitEvent")
            return
        other = what if isinstance(what, Stream) else as_stream(what)
        marker = other.record(timing=False)
        try:
            if self._bind >= 0:
                use_device(self._bind)
            st = api().lib.hipStreamWaitEvent(h, marker._h, 0)
            if st:
                raise hip_error(st, "hipStreamWaitEvent")
        finally:
            marker.close()  # the runtime keeps the wait's dependency itself

    def record(self, event: Event | None = None, *, timing: bool = True) -> Event:
        """Record ``event`` (default: a new one, with ``timing``) here and return it.

        Args:
            event: An `Event` of this stream's device to record again; None makes one.
            timing: Whether the new event records time (for ``end - start``).

        Returns:
            The recorded `Event`.

        Raises:
            TypeError: ``event`` is not an `Event`.
            rocpy.ClosedError: the stream was closed.
        """
        self._enter()
        if event is None:
            event = Event(self._dev, timing=timing)
        elif not isinstance(event, Event):
            raise TypeError(f"record() takes an Event or None, not {type(event).__name__}")
        return event.record(self)

    def add_callback(self, fn: Callable[..., object], *args: Any) -> None:
        """Call ``fn(*args)`` on rocpy's dispatcher thread once the work before it completes.

        Never on the runtime's thread.  Later work on the stream does not wait
        for ``fn`` to return.  If ``fn`` raises, the exception is reported as
        `rocpy.CallbackError` by the next use of this stream (at the latest
        `sync`, which also waits for the callbacks before it).  In a
        capture it becomes a host node of the graph (running at each launch).
        Uses ``hipLaunchHostFunc``, or ``hipStreamAddCallback`` where the
        runtime lacks it.
        """
        if not callable(fn):
            raise TypeError(f"add_callback takes a callable, not {type(fn).__name__}")
        h = self._enter()
        a = api()
        graph = self._capture
        if graph is not None:
            token = graph._register_host_fn(fn, args)
        else:
            token = register_host_callback(fn, args, self._errors)
        host_fn, stream_cb = _callback_trampolines()
        user = a.ffi.cast("void *", token)
        if a.has("hipLaunchHostFunc"):
            st, call = a.lib.hipLaunchHostFunc(h, host_fn, user), "hipLaunchHostFunc"
        else:
            st, call = a.lib.hipStreamAddCallback(h, stream_cb, user, 0), "hipStreamAddCallback"
        if st:
            forget_host_callback(token)
            if graph is not None:
                graph._forget_host_fn(token)
            raise hip_error(st, call)
        self._cb_seen = True

    def capture(self, mode: str = "global") -> contextlib.AbstractContextManager[Any]:
        """Capture the work enqueued in the ``with`` block into a `Graph` (yielded, filled at exit).

        ``mode``: ``"global"`` (unsafe calls such as allocations and
        synchronizations anywhere in the process, except from threads in
        relaxed mode, invalidate the capture), ``"thread_local"`` (only from
        this thread), ``"relaxed"`` (none do).  An invalidated capture raises
        the runtime's error at the end of the block
        (``hipErrorStreamCaptureInvalidated``) and leaves the graph unusable.
        Nothing runs while capturing; what the captured work uses is kept
        alive by the graph (and by its executable graphs).
        """
        from .graph import capture
        return capture(self, mode)

    @property
    def is_capturing(self) -> bool:
        """Whether the stream is capturing now (``hipStreamIsCapturing``)."""
        h = self._require_open()
        a = api()
        if not a.has("hipStreamIsCapturing"):
            return False
        st, status = self._capture_status(h)
        if st:
            raise hip_error(st, "hipStreamIsCapturing")
        return bool(status == a.lib.hipStreamCaptureStatusActive)

    def _capturing_elsewhere(self) -> bool:
        """True when the stream takes part in a capture rocpy did not begin (a fork)."""
        a = api()
        if self._kind == _PER_THREAD or not a.has("hipStreamIsCapturing"):
            return False
        st, status = self._capture_status(self._h)
        return bool(st) or status != a.lib.hipStreamCaptureStatusNone

    def _capture_status(self, h: Any) -> tuple[int, int]:
        """``hipStreamIsCapturing`` on the stream's device: (its status, the capture status)."""
        a = api()
        if self._bind >= 0:
            use_device(self._bind)
        out = a.ffi.new("hipStreamCaptureStatus *")
        return a.lib.hipStreamIsCapturing(h, out), out[0]

    # ---- lifetime ---------------------------------------------------------------

    def close(self, stream: Any = None) -> None:
        """Destroy an owned stream (after handing what its in-flight work uses to
        the reaper); a borrowed one only stops being usable through this wrapper."""
        if self._capture is not None:
            raise _api.fail("hipErrorStreamCaptureUnsupported", "Stream.close",
                            "the stream is capturing: leave its `with stream.capture()` "
                            "block before closing it")
        if self._kind != _OWNED and self._h is not None and not self._release_held():
            self.sync()
        super().close(stream)

    def __enter__(self) -> Stream:
        self._require_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Synchronize, then close (an owned stream is destroyed)."""
        try:
            if self._h is not None:
                self.sync()
        finally:
            self.close()


def as_stream(obj: Any, device: Any = None) -> Stream:
    """``obj`` as a `Stream`: a Stream, None (the null stream of ``device``, default
    the current device), or an object with the stream protocol."""
    if type(obj) is Stream:
        return obj
    if obj is None:
        return Stream._null(device)
    if isinstance(obj, Stream):
        return obj
    handle = stream_handle(obj)
    if handle is None:
        raise TypeError(f"expected a Stream, None or an object with __hip_stream__, "
                        f"not {type(obj).__name__}")
    return Stream.from_handle(handle, owner=obj, device=device)

