"""Every blocking HIP wait of rocpy, interruptible (the C side: ``_native/fast/wait.h``).

`wait` loops over `rocpy_wait` slices: a query spin first (short waits cost
what a plain synchronize costs), then the blocking call on a helper thread,
waited for ``SLICE`` seconds at a time with the GIL released.  Between
slices the interpreter runs signal handlers, so Ctrl-C raises
`KeyboardInterrupt` within a slice.  An interrupted wait leaves its job
behind: the stream or event it waits on stays pinned (its release held off)
until the helper's call returns, polled at the next wait and by
`rocpy.debug.collect`, so a close in between never destroys a handle a
helper still uses.
"""
from __future__ import annotations

import threading
from typing import Any

from ._api import api

# Query spin before the hand-off to a helper thread: waits that end within it cost
# what a plain (spinning) synchronize costs, no thread wake-up.  50 us made
# 256 MiB-1 GiB device copies 5-7 % slower than raw on the H200 (2026-12-01 run).
SPIN_NS = 2_000_000
# A wait still running after SPIN_NS is a long one: it keeps spinning (the query,
# yielding between queries) in slices of SPIN_SLICE_NS, back in Python between slices
# (Ctrl-C), up to LONG_SPIN_NS in all, and only then goes to the helper.  The
# hand-off cost 85-137 us at its end on the H200 (pinned 256 MiB-1 GiB copies 1.7 %
# slower than raw's hipStreamSynchronize, 2026-12-02 session 3), which past
# LONG_SPIN_NS is under 0.3 % of the wait.  Waits that ask to block (events made with
# blocking=True) go to the helper after SPIN_NS, as before.
LONG_SPIN_NS = 50_000_000
SPIN_SLICE_NS = 10_000_000
SLICE_NS = 20_000_000     # one slice: KeyboardInterrupt within ~20 ms

STREAM, EVENT, DEVICE, STREAM_POLL = 0, 1, 2, 3

#: captures rocpy has begun and not ended: HIP's capture rules depend on the waiting
#: thread (its mode, thread-local captures), so meanwhile waits block on the caller's
#: thread as the plain call would, not on a helper
captures = [0]

#: jobs of interrupted waits: (job pointer box, kind, handle, device, pinned object)
_abandoned: list[tuple[Any, int, Any, int, Any]] = []
_abandoned_lock = threading.Lock()


_tls = threading.local()


def wait(kind: int, handle: Any, device: int, pin: Any = None, long_spin: bool = True) -> int:
    """Wait for a stream (``handle`` a ``hipStream_t``, NULL: the legacy null
    stream of ``device``), an event, or ``device`` (handle NULL); the blocking
    call's status.  ``pin``: the `Handle` owning ``handle``, held while this
    wait or a helper uses it past the first spin.  ``long_spin`` False: to the
    helper right after `SPIN_NS` (a wait that asked to block)."""
    lib = api().lib
    if _abandoned:
        poll_abandoned()
    if captures[0]:
        return _blocking(kind, handle, device)
    # this thread's boxes, taken while in use (a signal handler may wait too)
    boxes = getattr(_tls, "boxes", None)
    if boxes is None:
        ffi = api().ffi
        boxes = (ffi.new("rocpy_wait_job **"), ffi.new("int *"))
    else:
        _tls.boxes = None
    job, status = boxes
    r = lib.rocpy_wait(job, kind, handle, device, SPIN_NS, SLICE_NS, status)
    if r == 0:
        _tls.boxes = boxes
        st: int = status[0]
        return st
    ffi = api().ffi
    pinned = None
    if pin is not None and kind in (STREAM, EVENT):
        pin._pin()                 # ClosedError if closed meanwhile: nothing started yet
        pinned = pin
    try:
        spun = SPIN_NS
        while long_spin and kind in (STREAM, EVENT) and spun < LONG_SPIN_NS:
            # the spin again (no job yet): 0 done, 1 not yet
            r = lib.rocpy_wait(job, kind, handle, device, SPIN_SLICE_NS, SLICE_NS, status)
            if r != 1:
                break
            spun += SPIN_SLICE_NS
        while r == 1:
            r = lib.rocpy_wait(job, kind, handle, device, 0, SLICE_NS, status)
    except BaseException:
        if job[0] != ffi.NULL:     # the job (and its box) stay with the helper's call
            with _abandoned_lock:
                _abandoned.append((job, kind, handle, device, pinned))
            pinned = None
        else:
            _tls.boxes = boxes
        raise
    finally:
        if pinned is not None:
            pinned._unpin()
    _tls.boxes = boxes
    if r < 0:                      # no helper thread: block here, as before
        return _blocking(kind, handle, device)
    last: int = status[0]
    return last


def wait_device(device: int, streams: Any) -> int:
    """`wait` for ``device`` (current on this thread), with a fast path: when the
    null stream and ``streams`` (the device's streams rocpy knows) are idle within
    the spin, ``hipDeviceSynchronize`` directly (no hand-off)."""
    a = api()
    handles = [s._h for s in streams if s._h is not None and s._kind == "owned"]
    arr = a.ffi.new("void *[]", handles) if handles else a.null
    if not captures[0] and a.lib.rocpy_wait_streams_idle(arr, len(handles), SPIN_NS):
        return a.lib.hipDeviceSynchronize()
    return wait(DEVICE, a.null, device)


def _blocking(kind: int, handle: Any, device: int) -> int:
    lib = api().lib
    if kind == DEVICE:
        from ._api import use_device
        use_device(device)
    if kind in (STREAM, STREAM_POLL):
        return lib.hipStreamSynchronize(handle)
    if kind == EVENT:
        return lib.hipEventSynchronize(handle)
    return lib.hipDeviceSynchronize()


def poll_abandoned() -> int:
    """Finish the jobs of interrupted waits whose call has returned; how many remain."""
    lib, ffi = api().lib, api().ffi
    status = ffi.new("int *")
    with _abandoned_lock:
        keep: list[tuple[Any, int, Any, int, Any]] = []
        done: list[tuple[Any, int, Any, int, Any]] = []
        for entry in _abandoned:
            job, kind, handle, device, _ = entry
            (keep if lib.rocpy_wait(job, kind, handle, device, 0, 0, status) else done).append(entry)
        _abandoned[:] = keep
    for entry in done:
        if entry[4] is not None:
            entry[4]._unpin()
    return len(keep)


def helpers() -> tuple[int, int]:
    """(helper threads started, helpers blocked in a call now): for tests."""
    a = api()
    busy = a.ffi.new("int *")
    return a.lib.rocpy_wait_helpers(busy), busy[0]
