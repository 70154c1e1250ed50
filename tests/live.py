"""Shared by the suites of the Pythonic layers: is HIP usable, what is still
alive once every device's work has completed, and the bodies of the kernel
fixtures (``load``, ``spin``).  Plain Python, no pytest: the standalone
``conformance/multi_device_checks.py`` imports it too."""
from __future__ import annotations

import importlib
import time

import numpy as np

import rocpy
import rocpy.debug


def hip_runtime_works() -> bool:
    """False on a stub built without its HIP half (streams and events unimplemented)."""
    from rocpy.hip import ffi, lib
    ev = ffi.new("hipEvent_t *")
    if lib.hipEventCreate(ev):
        return False
    lib.hipEventDestroy(ev[0])
    return True


def settle(timeout: float = 5.0, poll: float = 0.02) -> dict:
    """Synchronize every device, then collect every ``poll`` seconds until nothing
    is alive (releases may trail the work by a few ms) or ``timeout`` passes;
    return what is still alive."""
    from rocpy import hip
    for i in range(hip.device_count()):
        hip.Device(i).sync()
    deadline = time.monotonic() + timeout
    while True:
        rocpy.debug.collect()
        live = rocpy.debug.live_objects()
        if not live or time.monotonic() > deadline:
            return live
        time.sleep(poll)


def kernel_loader(kernel_file, dev):
    """Body of the ``load`` fixtures: ``load("vadd")`` -> the kernel, from a
    module loaded for this test (``kernel_file(name)`` gives the compiled file),
    its parameter types declared from the source (``kernels.compile.declared_types``;
    ``typed=False``: none, as for an extern "C" kernel loaded from a file alone)."""
    from rocpy import hip
    from kernels.compile import declared_types

    def get(name: str, typed: bool = True):
        types = declared_types(name) if typed else None
        return hip.Module.load(kernel_file(name), dev, param_types=types)[name]
    return get


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
