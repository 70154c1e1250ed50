"""Stream-ordered lifetime: what work enqueued on a stream uses (buffers,
pageable host arrays, kernel arguments) is held until that work completes.

What enqueued work uses gathers in the stream's unfenced batch (a one-item
box, so the release recipe shares it without holding the stream).  Every
`FENCE_EVERY` items (every item on per-thread and foreign streams, and at
once where a release waits on it) a private event, a `_Fence`, is recorded
after the batch, which moves to the stream's ordered `PendingList`; `poll`
(``sync``, ``query``, the reaper's sweep) drops what the passed fences
cover.  A stream closed or collected with work in flight hands its batch to
rocpy's reaper, which drops it when the work completes.  While rocpy captures
on the stream, nothing is fenced: the graph keeps what the captured work uses.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from .. import _keepalive, _reaper
from .._handle import Handle
from .._keepalive import PendingList
from ..errors import hip_error
from ._api import api
from ._lane import mark as _mark
from .event import _Fence

#: Items held before a fence is recorded (amortizes one event over many launches).
FENCE_EVERY = 256


def _hand_to_reaper(h: Any, dev_index: int, ctx: Any, objs: list[Any]) -> bool:
    """Keep ``objs`` until the work enqueued on ``h`` so far completes (a fence
    recorded now, polled by the reaper); False when no fence could be recorded."""
    try:
        fence = _Fence.record(h, dev_index, ctx)
    except Exception:
        return False
    _keepalive.keep_alive_until(fence.done, fence, objs)
    return True


class StreamNative:
    """What an owned stream's release needs, by name (its recipe is
    ``(_destroy_stream, StreamNative)``).  It must not hold the `Stream`: the
    batch is the lane's one-item ``box``, shared, so the recipe sees what the
    stream held last without holding the stream."""

    __slots__ = ("box", "ctx", "dev_index", "handle", "pending")

    def __init__(self, handle: Any, dev_index: int, ctx: Any, box: list[Any],
                 pending: PendingList) -> None:
        self.handle = handle            # hipStream_t
        self.dev_index = dev_index
        self.ctx = ctx                  # the device's primary context (the fence's parent)
        self.box = box                  # [the unfenced batch]
        self.pending = pending          # the stream's ordered keep-alive list

    def __repr__(self) -> str:
        return f"<StreamNative of Device {self.dev_index}, {len(self.box[0])} held>"


def _destroy_stream(native: StreamNative) -> None:
    """Release recipe: hand in-flight keep-alives to the reaper, then ``hipStreamDestroy``."""
    lib = api().lib
    h, box = native.handle, native.box
    objs = box[0]
    if objs:
        box[0] = []
        if not (_reaper.running() and _hand_to_reaper(h, native.dev_index, native.ctx, objs)):
            lib.hipStreamSynchronize(h)
        del objs
    st = lib.hipStreamDestroy(h)
    if st:
        raise hip_error(st, "hipStreamDestroy")


#: `_OrderedHandle._hold_once` without a second object: the first is held alone
_ALONE: Any = object()


class _OrderedHandle(Handle):
    """The stream-ordered keep-alive half of `Stream`: its `rocpy._keepalive.Timeline`
    (see the module docstring).

    The subclass sets ``_capture`` (the graph rocpy captures into, or None),
    ``_dev_index``, ``_ctx`` and ``_capturing_elsewhere()``.
    """

    __slots__ = ("_pending", "_lane", "_lock")

    _pending: PendingList
    _lane: Any
    _capture: Any
    _dev_index: int
    _ctx: Any

    def _init_order(self, lane: Any, pending: PendingList) -> None:
        """``lane``: the stream's `rocpy.hip._lane` (its ``box`` and ``limit`` are used here)."""
        self._pending = pending
        self._lane = lane
        self._lock = threading.Lock()

    def _capturing_elsewhere(self) -> bool:
        raise NotImplementedError

    def _hold(self, obj: Any) -> None:
        """Keep ``obj`` until the work enqueued so far completes (batched fences)."""
        lane = self._lane
        _mark(lane.dev)             # a null-stream copy now waits first (rocpy/hip/_lane.py)
        u = lane.box[0]
        u.append(obj)
        if len(u) >= lane.limit:
            self._fence()

    def _hold_once(self, a: Any, b: Any = _ALONE) -> None:
        """`_hold` of ``a`` (or of the pair ``(a, b)``); nothing new when the unfenced
        batch's last item already is that (the same objects: the repeated copy or launch
        of a loop), which stays held until a fence recorded after this work too.  Not
        while a query runs (``lane.querying``): one that finds the stream complete drops
        what was held when it began, that item included.  The one rule for copies
        (`_copy`) and launches (`Kernel._hold_launch`); the compiled twin is
        ``lane_hold_once`` in rocpy/_native/hot/hot_lane.c."""
        lane = self._lane
        u = lane.box[0]
        if u and not lane.querying:
            last = u[-1]
            if (last is a) if b is _ALONE else (type(last) is tuple and len(last) == 2
                                                and last[0] is a and last[1] is b):
                _mark(lane.dev)
                return
        self._hold(a if b is _ALONE else (a, b))

    def _keep_alive(self, *objs: Any) -> None:
        """The `rocpy._keepalive.Timeline` contract: keep ``objs`` until the enqueued
        work completes, fencing now (what `Handle.close(stream=)` uses)."""
        _mark(self._lane.dev)
        self._lane.box[0].append(objs)
        self._fence()

    def _fence(self) -> None:
        """Record a fence after what is held and move it to the ordered keep-alive list."""
        if self._capture is not None or self._h is None:
            return
        box = self._lane.box
        with self._lock:
            objs = box[0]
            if not objs or self._capturing_elsewhere():
                return
            box[0] = []
        try:
            fence = _Fence.record(self._h, self._dev_index, self._ctx)
        except BaseException:
            box[0].extend(objs)
            raise
        self._pending.keep_alive(fence.done, fence, objs)

    def _take(self) -> list[Any] | None:
        """Detach what is held so far (before a wait that completes it)."""
        if self._capture is not None:
            return None
        box = self._lane.box
        objs, box[0] = box[0], []
        result: list[Any] | None = objs
        return result

    def _restore(self, taken: list[Any] | None) -> None:
        """After a wait that failed: hold again what `_take` detached."""
        if taken:
            self._lane.box[0].extend(taken)

    def _divert(self, graph: Any) -> tuple[Any, ...]:
        """While rocpy captures into ``graph``: what enqueuers hold goes to the graph's
        keep list, nothing is fenced, and every enqueue takes the full path.  Returns
        what `_undivert` restores."""
        lane = self._lane
        box = lane.box
        saved = (box[0], lane.limit, lane.ready)
        box[0] = graph._keep
        lane.limit = sys.maxsize
        lane.ready = -1
        self._capture = graph
        return saved

    def _undivert(self, saved: tuple[Any, ...]) -> None:
        """End of a capture: the state `_divert` saved."""
        lane = self._lane
        self._capture = None
        lane.box[0], lane.limit, lane.ready = saved

    def _completed(self, taken: list[Any] | None = None) -> None:
        """After a wait that completed this stream's work: drop what it held."""
        del taken
        self._pending.poll()

    def _release_held(self) -> bool:
        """Before a borrowed wrapper closes: hand what is held to the reaper.
        False when no fence could be recorded: what is held stays, and the
        caller synchronizes instead."""
        objs = self._take()
        if not objs or _hand_to_reaper(self._h, self._dev_index, self._ctx, objs):
            return True
        self._restore(objs)
        return False


def _register_slots() -> None:
    """Give the compiled path the member descriptors it reads (``Handle._h``, the
    lane): their ``__get__`` directly, without the generic attribute lookup."""
    from .. import _hotpath
    hot = _hotpath.compiled()
    if hot is not None:
        hot.register_slots(Handle.__dict__["_h"], _OrderedHandle.__dict__["_lane"])


_register_slots()
