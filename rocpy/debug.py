"""Debugging aids: what rocpy still holds, for leak checks in tests.

    rocpy.debug.collect()
    assert rocpy.debug.live_objects() == {}
"""
from __future__ import annotations

import gc
import time

from . import _handle, _reaper


def _hip_settle() -> None:
    """DLPack deleter calls queued for the dispatcher run, and interrupted waits whose
    helper call returned unpin their handles (only where the HIP layer was used)."""
    import sys
    dl = sys.modules.get("rocpy.hip._dlpack")
    if dl is not None:
        dl.flush_drops()
    w = sys.modules.get("rocpy.hip._wait")
    if w is not None and w._abandoned:
        w.poll_abandoned()


def live_objects() -> dict[str, int]:
    """Owned native handles not yet released, per type name; empty when none."""
    return _handle.live_objects()


def collect(timeout: float = 5.0) -> bool:
    """Collect garbage and wait until the reaper has released what it freed.

    Each round also polls every stream's keep-alive list now (not at the
    reaper's next sweep), so after a synchronize what completed work held is
    gone.  Repeats while releases free more (a child's release drops its
    parents).  DLPack deleter calls queued so far run, and interrupted waits
    whose helper returned let go of their handles.  Work still pending on a
    stream keeps its objects: synchronize first.  Returns False if `timeout` passed first.
    """
    deadline = time.monotonic() + timeout
    while True:
        before = live_objects()
        _reaper.sweep()
        gc.collect()
        _hip_settle()
        if not _reaper.flush(max(0.0, deadline - time.monotonic())):
            return False
        if live_objects() == before:
            return True
