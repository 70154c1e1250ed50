"""`Event.record`, `Event.query`, `Event.sync`, `Stream.query`, `Stream.sync`,
`Buffer.copy_from`, `Buffer.copy_to` and `Kernel.launch` in compiled code, with no
Python frame.

Where `rocpy._hot` is in use, `install` (called when the first stream or event
is made) replaces these methods on their classes with
``rocpy._hot.method`` descriptors (rocpy/_native/hot/hot_method.c): the call
does the common case in C (an open object, a `Stream` whose lane is ready, a
status of success or not-ready; for copies, what ``rocpy._hot.copy_async``
takes: an async copy on a `Stream` between rocpy buffers or with a host array,
or a synchronous one on an idle device; for launches, the kernel's compiled
``Launcher``, which itself hands what it does not take to ``Kernel._launch_py``)
and passes every other case, unchanged, to the
Python definition, which stays the one place where checks and messages live.
`PYTHON` keeps those definitions (the differential tests call them directly);
read from the class, the descriptor also gives the Python function.

Unlike kernels and streams, these choose once per process, not per object:
objects made inside `rocpy._hotpath.disabled` still use the compiled methods
once they are installed.
"""
from __future__ import annotations

import threading
from typing import Any

from .. import _hotpath

#: the Python definitions, by "Class.method"
PYTHON: dict[str, Any] = {}
_installed = [False]
_lock = threading.RLock()


def install() -> None:
    """Put the compiled methods on `Event`, `Stream` and `Buffer` (once, where `rocpy._hot`
    is in use)."""
    hot = _hotpath.module()
    if hot is None:
        return
    with _lock:                  # two threads making their first streams: one installs
        if not _installed[0]:
            _installed[0] = True  # first: a stream made meanwhile (imports) does not recurse
            _install(hot)


def _install(hot: Any) -> None:
    """Replace the methods (their Python definitions kept in `PYTHON`)."""
    from .._keepalive import PendingList
    from ._api import api
    from ._calls import _address
    from ._stream_order import _OrderedHandle
    from . import _copy, memory
    from .event import Event
    from .stream import Stream
    not_ready = api().not_ready
    addr = Event.__dict__["_addr"]
    PYTHON.update({"Event.query": Event.__dict__["query"],
                   "Event.record": Event.__dict__["record"],
                   "Stream.query": Stream.__dict__["query"]})
    # the C methods replace the Python ones on the classes (the point of this module;
    # setattr: a type checker refuses assigning to a method)
    setattr(Event, "query", hot.method(0, _address("hipEventQuery"), PYTHON["Event.query"],
                                       not_ready, addr, None, Event))
    setattr(Event, "record", hot.method(1, _address("hipEventRecord"), PYTHON["Event.record"],
                                        not_ready, addr, Stream, Event))
    setattr(Stream, "query", hot.method(2, _address("hipStreamQuery"), PYTHON["Stream.query"],
                                        not_ready, _OrderedHandle.__dict__["_pending"],
                                        PendingList.__dict__["_entries"], Stream))
    from . import _wait
    from .device import Device
    # the two waits: rocpy_wait's first spin in C, with the same view of _wait's state
    wait, wait_state = _address("rocpy_wait"), (_wait.captures, _wait._abandoned,
                                                _wait.SPIN_NS, _wait.SLICE_NS)
    PYTHON["Stream.sync"] = Stream.__dict__["sync"]
    setattr(Stream, "sync", hot.method(
        9, wait, PYTHON["Stream.sync"], not_ready,
        (_OrderedHandle.__dict__["_pending"], PendingList.__dict__["_entries"],
         Stream.__dict__["_cb_seen"], Stream.__dict__["_more_errors"]), wait_state, Stream))
    PYTHON["Event.sync"] = Event.__dict__["sync"]
    setattr(Event, "sync", hot.method(
        10, wait, PYTHON["Event.sync"], not_ready,
        (addr, Event.__dict__["_dev"], Device.__dict__["_index"]), wait_state, Event))
    _copy.bind_copy_async()               # registers the types the compiled copy takes
    buffer = memory.Buffer
    memcpy = _address("hipMemcpyAsync")
    for kind, name in ((3, "copy_from"), (4, "copy_to")):
        PYTHON[f"Buffer.{name}"] = buffer.__dict__[name]
        setattr(buffer, name, hot.method(kind, memcpy, PYTHON[f"Buffer.{name}"], not_ready,
                                         None, None, buffer))
    from .._dispatcher import CallbackErrors
    hot.register_members(buffer.__dict__["_nbytes"], buffer.__dict__["_last"],
                         Stream.__dict__["_weak"], CallbackErrors.__dict__["pending"],
                         buffer.__dict__["_dev_index"])
    from .module import Kernel
    PYTHON["Kernel.launch"] = Kernel.__dict__["launch"]
    setattr(Kernel, "launch", hot.method(5, 0, PYTHON["Kernel.launch"], not_ready,
                                         Kernel.__dict__["_launcher"], None, Kernel))
