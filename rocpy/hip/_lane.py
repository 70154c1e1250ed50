"""`Lane`: a stream's hot state, the one enqueue interface.

Everything that enqueues work on a `Stream` (kernel launches, copies, fills,
event records, graph launches) goes through the stream's lane, never through
the stream's other fields:

``addr``
    the ``hipStream_t`` as an int (what the compiled path passes to the runtime);
``dev``
    the stream's device index: what an enqueue marks (`mark`, below);
``ready``
    the stream's device index when an enqueue needs nothing first, else -1:
    the legacy null and per-thread streams (the current device must be set),
    a capture by rocpy (the graph keeps what captured work uses); an enqueuer
    compares it with its own device index, and anything but equality takes
    the full path (`Stream._enter`, which also raises callback errors);
``errors``
    the stream's `CallbackErrors`: an enqueue with ``errors.pending`` takes the
    full path, which raises them;
``box``
    a one-item list holding the list of what unfenced work uses (shared with
    the stream's release recipe);
``limit``
    items held before a fence is recorded (`Stream._fence`).
``querying``
    queries of the stream in progress (`Stream.query`, which drops what was held
    when it began if it finds the stream complete): while it is not 0 an enqueuer
    holds what it uses even where the batch's last item is the same objects (kernel
    launches skip that hold otherwise: `rocpy.hip.module.Kernel._hold_launch`).

An enqueuer holds what its work uses by appending to ``box[0]`` and calling
``stream._fence()`` once ``len(box[0]) >= limit`` (`Stream._hold` does both),
and marks the device (`mark`; `Stream._hold` and the compiled hold do).

Null-stream idle state (`mark`, `marks`, `cover`, `idle`): per device, the
enqueues rocpy made and the count a completed null-stream wait covered.  A
synchronous copy or fill (`rocpy.hip._copy.on_null`) waits first,
interruptibly, only where they differ; see rocpy/_native/hot/hot_idle.c.  The
compiled counters serve every path wherever `rocpy._hot` is built (in use or
not), so streams made under `rocpy._hotpath.disabled` mark the same counters.

Where the compiled extension `rocpy._hot` is built, `Lane` is its C type (the
compiled launch path reads the fields as C struct members); otherwise the
Python class below, with the same attributes.  `rocpy._hotpath` chooses.
"""
from __future__ import annotations

from typing import Any

from .. import _hotpath
from . import _methods


class PyLane:
    """The pure-Python `Lane` (same attributes as ``rocpy._hot.Lane``)."""

    __slots__ = ("addr", "dev", "ready", "errors", "box", "limit", "querying")

    addr: int
    dev: int
    ready: int
    errors: Any
    box: list[Any]
    limit: int
    querying: int


def new_lane(addr: int, dev: int, ready: int, errors: Any, box: list[Any], limit: int) -> Any:
    """A lane, compiled where `rocpy._hot` is in use."""
    hot = _hotpath.module()
    if hot is not None and not _methods._installed[0]:
        _methods.install()
    lane = hot.Lane() if hot is not None else PyLane()
    lane.addr = addr
    lane.dev = dev
    lane.ready = ready
    lane.errors = errors
    lane.box = box
    lane.limit = limit
    lane.querying = 0
    return lane


class _PyIdle:
    """The null-stream idle counters where `rocpy._hot` is not built (hot_idle.c's rule)."""

    MAX_DEV = 64

    def __init__(self) -> None:
        self.marked = [0] * self.MAX_DEV
        self.covered = [0] * self.MAX_DEV

    def mark(self, dev: int) -> None:
        if 0 <= dev < self.MAX_DEV:
            self.marked[dev] += 1

    def marks(self, dev: int) -> int:
        return self.marked[dev] if 0 <= dev < self.MAX_DEV else 0

    def cover(self, dev: int, n: int) -> None:
        if 0 <= dev < self.MAX_DEV and self.covered[dev] < n <= self.marked[dev]:
            self.covered[dev] = n

    def idle(self, dev: int) -> bool:
        return 0 <= dev < self.MAX_DEV and self.marked[dev] == self.covered[dev]


_idle: Any = _hotpath.compiled() or _PyIdle()
#: ``mark(dev)``: rocpy enqueued work on a stream of device ``dev``
mark = _idle.mark
#: ``marks(dev)``: the enqueues counted so far (what a null-stream wait beginning now covers)
marks = _idle.marks
#: ``cover(dev, n)``: a null-stream wait begun when ``marks(dev)`` was ``n`` completed
cover = _idle.cover
#: ``idle(dev)``: nothing rocpy enqueued on device ``dev`` is pending
idle = _idle.idle
