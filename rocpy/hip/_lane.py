"""`Lane`: a stream's hot state, the one enqueue interface.

Everything that enqueues work on a `Stream` (kernel launches, copies, fills,
event records, graph launches) goes through the stream's lane, never through
the stream's other fields:

``addr``
    the ``hipStream_t`` as an int (what the compiled path passes to the runtime);
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

An enqueuer holds what its work uses by appending to ``box[0]`` and calling
``stream._fence()`` once ``len(box[0]) >= limit`` (`Stream._hold` does both).

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

    __slots__ = ("addr", "ready", "errors", "box", "limit")

    addr: int
    ready: int
    errors: Any
    box: list[Any]
    limit: int


def new_lane(addr: int, ready: int, errors: Any, box: list[Any], limit: int) -> Any:
    """A lane, compiled where `rocpy._hot` is in use."""
    hot = _hotpath.module()
    if hot is not None and not _methods._installed[0]:
        _methods.install()
    lane = hot.Lane() if hot is not None else PyLane()
    lane.addr = addr
    lane.ready = ready
    lane.errors = errors
    lane.box = box
    lane.limit = limit
    return lane
