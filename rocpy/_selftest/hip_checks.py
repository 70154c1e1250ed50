"""The selftest's HIP checks (AMD and NVIDIA; the kernel checks need hipcc for AMD).

Each check takes the `HipContext` and returns a line of detail, or raises.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import hip


class HipContext:
    """Device 0, a stream, and (on AMD, with hipcc) the selftest kernels."""

    def __init__(self, stack: Any) -> None:
        from .. import backend
        if hip.device_count() == 0:
            raise LookupError("no HIP device")
        self.dev = hip.Device(0)
        self.stream = stack.enter_context(self.dev.create_stream())
        self.module = None
        self.kernels_error = None
        if backend().name == "nvidia":
            self.kernels_error = "the kernel checks build AMD code objects"
            return
        from . import kernels
        try:
            path = kernels.build(self.dev.target_id)
        except (FileNotFoundError, OSError) as e:
            self.kernels_error = str(e)
            return
        kernels.register_emulations()
        self.module = stack.enter_context(hip.Module.load(path, self.dev))

    def kernel(self, name: str) -> Any:
        if self.module is None:
            raise LookupError(f"skipped: {self.kernels_error}")
        return self.module[name]


def copies(c: HipContext) -> str:
    n = 1 << 16
    data = np.arange(n, dtype=np.uint32)
    ctx = c.dev.context
    a, b = ctx.alloc(4 * n), ctx.alloc(4 * n)
    a.copy_from(data)                                   # H->D (pageable)
    b.copy_from(a)                                      # D->D
    back = np.zeros(n, dtype=np.uint32)
    b.copy_to(back)                                     # D->H
    assert (back == data).all(), "H->D->D->H lost data"
    pinned = ctx.alloc_host(4 * n)
    pinned.numpy(np.uint32)[:] = data[::-1]
    a.copy_from(pinned, stream=c.stream)                # pinned H->D, async
    a.copy_to(back, stream=c.stream)
    c.stream.sync()
    assert (back == data[::-1]).all(), "pinned async copies lost data"
    return "H->D, D->D, D->H, pinned async: correct"


def launch(c: HipContext) -> str:
    probe = c.kernel("st_probe")
    ctx = c.dev.context
    out = ctx.alloc(4 * 9 * 64)
    probe.launch((2, 3), (4, 2), (out, np.int32(48)), stream=c.stream)
    rec = np.zeros(9 * 64, dtype=np.int32)
    out.copy_to(rec, stream=c.stream)
    c.stream.sync()
    assert tuple(rec[:6]) == (4, 2, 1, 2, 3, 1), f"blockDim/gridDim read back {tuple(rec[:6])}"
    return "blockDim/gridDim read back as launched"


def event_timing(c: HipContext) -> str:
    spin = c.kernel("st_spin")
    ns = 20_000_000
    start, end = hip.Event(), hip.Event()
    start.record(c.stream)
    spin.launch(1, 1, (np.int64(ns),), stream=c.stream)
    end.record(c.stream)
    end.sync()
    ms = end - start
    assert 10 <= ms <= 80, f"a 20 ms kernel took {ms:.2f} ms by HIP events"
    start.close()
    end.close()
    return f"a 20 ms kernel: {ms:.2f} ms by HIP events"


CHECKS: dict[str, Callable[[HipContext], str]] = {
    "hip.copies": copies,
    "hip.launch": launch,
    "hip.event_timing": event_timing,
}
