"""Shared by the suites of the Pythonic layers: is HIP usable, and what is
still alive once every device's work has completed."""
from __future__ import annotations

import importlib
import time

import numpy as np

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


def spin_fill(load, dev):
    """Body of the ``spin`` fixtures: ``spin(buf, value, ms, stream=None)``
    enqueues a fill taking about ``ms`` (a sleeping emulation on the stub)."""
    held = [load("spin_fill")]  # emptied at teardown: pytest keeps fixture values until later
    params = held[0].params
    khz = dev.clock_rate_khz
    stub = importlib.import_module("rocpy.stub") if rocpy.backend().is_stub else None
    if stub:
        def emulate(d):
            p, value, n, cycles = (d.arg(a.offset, f) for a, f in zip(params, "QIiq"))
            time.sleep(cycles / (khz * 1000.0))
            d.array(p, np.uint32, n)[:] = value
        stub.register_kernel("spin_fill", emulate)

    def run(buf, value, ms, stream=None):
        n = buf.nbytes // 4
        held[0].launch((n + 255) // 256, 256, (buf, np.uint32(value), np.int32(n),
                                                np.int64(int(khz * ms))), stream=stream)
    yield run
    held.clear()
    if stub:
        stub.unregister_kernel("spin_fill")
