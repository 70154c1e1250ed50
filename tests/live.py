"""Shared by the suites of the Pythonic layers: is HIP usable, and what is
still alive once every device's work has completed."""
from __future__ import annotations

import time

import rocpy


def hip_runtime_works() -> bool:
    """False on a stub built without its HIP half (streams and events unimplemented)."""
    from rocpy.hip import ffi, lib
    ev = ffi.new("hipEvent_t *")
    if lib.hipEventCreate(ev):
        return False
    lib.hipEventDestroy(ev[0])
    return True


def settle(timeout: float = 5.0) -> dict:
    """Synchronize every device, collect, and return what is still alive."""
    from rocpy import hip
    for i in range(hip.device_count()):
        hip.Device(i).synchronize()
    deadline = time.monotonic() + timeout
    while True:
        rocpy.debug.collect()
        live = rocpy.debug.live_objects()
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(0.02)
