"""Peer copy bandwidth between two devices: rocpy against raw ``rocpy.hip.lib`` calls.

For each size, three cases, their two variants timed interleaved:

* ``dev0->dev1``: device 0 memory into device 1 memory, on a stream of device 0;
* ``dev1->dev0``: the other way, on a stream of device 1;
* ``bidirectional``: both at once, each on its source device's stream, then both
  synchronized (bandwidth counts the bytes of both copies).

``raw`` calls ``hipMemcpyPeerAsync`` + ``hipStreamSynchronize`` with arguments
made beforehand; ``rocpy`` calls ``DeviceBuffer.copy_from(src, stream=s)`` +
``s.sync()`` (``hipMemcpyAsync``, hipMemcpyDefault).  Peer access is
enabled both ways first where the devices allow it (the copies also work
without it, staged).  Before timing, each variant's result is checked against
random data.  Needs two devices (the stub: ``ROCPY_STUB_DEVICES=2``, which
``benchmarks/bench_peer.py`` sets); otherwise the family is skipped.

On the stub this is a CPU simulation (memcpy in the stub's worker threads): the
figures say what the Python layer and the stub cost, not what a GPU link does.
"""
from __future__ import annotations

from typing import Any

from ...errors import hip_error
from ..harness import Case
from . import Bench, Env, Unavailable
from .copy import size_label

DEFAULT_SIZES = (4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20)
QUICK_SIZES = (64 << 10, 1 << 20)


def _check(status: int, call: str) -> None:
    if status:
        raise hip_error(status, call)


def cases_for(size: int, d0: Any, d1: Any, s0: Any, s1: Any, keep: list[Any]) -> list[Case]:
    """The three cases of one size; the buffers they copy between go to ``keep``."""
    import numpy as np

    from rocpy import hip
    lib, ffi = hip.lib, hip.ffi
    a0, b0 = d0.context.alloc(size), d0.context.alloc(size)     # a: sources, b: destinations
    a1, b1 = d1.context.alloc(size), d1.context.alloc(size)
    keep += [a0, b0, a1, b1]
    rng = np.random.default_rng(size)
    p = {name: ffi.cast("void *", buf.ptr) for name, buf in
         (("a0", a0), ("b0", b0), ("a1", a1), ("b1", b1))}
    h0, h1 = s0.handle, s1.handle
    i0, i1 = d0.index, d1.index
    peer = lib.hipMemcpyPeerAsync
    sync = lib.hipStreamSynchronize

    def raw_01() -> None:
        _check(peer(p["b1"], i1, p["a0"], i0, size, h0), "hipMemcpyPeerAsync")
        _check(sync(h0), "hipStreamSynchronize")

    def raw_10() -> None:
        _check(peer(p["b0"], i0, p["a1"], i1, size, h1), "hipMemcpyPeerAsync")
        _check(sync(h1), "hipStreamSynchronize")

    def raw_bi() -> None:
        _check(peer(p["b1"], i1, p["a0"], i0, size, h0), "hipMemcpyPeerAsync")
        _check(peer(p["b0"], i0, p["a1"], i1, size, h1), "hipMemcpyPeerAsync")
        _check(sync(h0), "hipStreamSynchronize")
        _check(sync(h1), "hipStreamSynchronize")

    def rocpy_01() -> None:
        b1.copy_from(a0, stream=s0)
        s0.sync()

    def rocpy_10() -> None:
        b0.copy_from(a1, stream=s1)
        s1.sync()

    def rocpy_bi() -> None:
        b1.copy_from(a0, stream=s0)
        b0.copy_from(a1, stream=s1)
        s0.sync()
        s1.sync()

    # every variant moves the right bytes (random data, checked on the host)
    n = size // 4
    for variant in (raw_bi, rocpy_bi, raw_01, rocpy_10, rocpy_01, raw_10):
        x0, x1 = (rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(2))
        a0.copy_from(x0)
        a1.copy_from(x1)
        b0.fill(0)
        b1.fill(0)
        variant()
        out0, out1 = np.empty(n, np.uint32), np.empty(n, np.uint32)
        b0.copy_to(out0)
        b1.copy_to(out1)
        name = variant.__name__
        if name.endswith(("01", "bi")) and not np.array_equal(out1, x0):
            raise AssertionError(f"{name}: device 1 did not receive device 0's data")
        if name.endswith(("10", "bi")) and not np.array_equal(out0, x1):
            raise AssertionError(f"{name}: device 0 did not receive device 1's data")

    label = size_label(size)
    return [
        Case(f"dev0->dev1 {label}", {"raw": raw_01, "rocpy": rocpy_01}, unit="us",
             bytes_per_op=size),
        Case(f"dev1->dev0 {label}", {"raw": raw_10, "rocpy": rocpy_10}, unit="us",
             bytes_per_op=size),
        Case(f"bidirectional {label}", {"raw": raw_bi, "rocpy": rocpy_bi}, unit="us",
             bytes_per_op=2 * size),
    ]


def build(env: Env) -> list[Bench]:
    from rocpy import hip
    count = hip.device_count()
    if count < 2:
        raise Unavailable(f"peer copies need two devices; the {env.backend} backend has {count}"
                          + (" (ROCPY_STUB_DEVICES=2 gives the stub two)"
                             if env.backend == "stub" else ""))
    d0, d1 = hip.Device(0), hip.Device(1)
    peer = d0.can_access_peer(d1) and d1.can_access_peer(d0)
    if peer:
        d0.enable_peer_access(d1)
        d1.enable_peer_access(d0)
    else:
        env.note("peer access is unavailable between devices 0 and 1: peer copies are staged")
    s0 = env.keep(d0.create_stream(non_blocking=True))
    s1 = env.keep(d1.create_stream(non_blocking=True))
    sizes = tuple(env.plan.sizes) or (QUICK_SIZES if env.plan.quick else DEFAULT_SIZES)
    benches = []
    for size in sizes:
        keep: list[Any] = []
        cases = cases_for(size, d0, d1, s0, s1, keep)
        for buf in keep:
            env.keep(buf)
        for case, direction in zip(cases, ("dev0->dev1", "dev1->dev0", "bidirectional")):
            benches.append(Bench(case, "peer", "bandwidth",
                                 {"direction": direction, "memory": "peer", "size": size,
                                  "peer_access": peer}))
    return benches
