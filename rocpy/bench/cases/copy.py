"""Copy bandwidth over sizes, and small-copy latency.

Bandwidth: host to device and back from pinned (``alloc_host``) and pageable
(numpy) memory, and device to device, at each size of the plan.  A timed call
enqueues ``ops`` asynchronous copies on one stream and synchronizes once
(``ops`` shrinks to 1 as the size grows), so small sizes measure what a
stream of copies sustains and large ones the link.  Buffers are allocated
once, at the largest size, and views of them are copied.

Latency: a synchronous ``hipMemcpy`` of 64 bytes from pinned memory each way
(``buf.copy_from(host)`` with no stream), one per timed call, so the box
plots show the distribution of single round trips.

With ``--compare``: ``raw`` makes the same ``hipMemcpyAsync`` /
``hipStreamSynchronize`` (``hipMemcpy``) calls through ``rocpy.hip.lib``
with arguments prepared beforehand, and the peers (`rocpy.bench.compare`)
copy between the same allocations (on nvidia, on rocpy's stream).  On nvidia, the
asynchronous copies have a ``C`` variant too: the same batch made from C in this process and rounds, on
rocpy's stream (benchmarks/c/hip_ref_loops.c, `rocpy.bench.c_reference.c_loops`),
which tells what the binding costs from what HIP and its CUDA runtime cost.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..harness import Case
from . import Bench, Env, Unavailable

SERIES = (("H2D", "pinned"), ("H2D", "pageable"), ("D2H", "pinned"), ("D2H", "pageable"),
          ("D2D", "device"))
SMALL = 64
BATCH_BYTES = 4 << 20   # small sizes: enough copies per timed call to move this much (at most 16)


def size_label(n: int) -> str:
    """``4096`` -> ``'4 KiB'``, ``67108864`` -> ``'64 MiB'``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def ops_for(size: int) -> int:
    return max(1, min(16, BATCH_BYTES // max(size, 1)))


def _host_available() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


class Memory:
    """The largest buffers of the run: two on the device, one pinned, one pageable."""

    def __init__(self, env: Env, top: int) -> None:
        from rocpy import OutOfMemoryError
        dev = env.device
        limit = top
        try:
            free: int | None = dev.mem_info().free
        except Exception:  # a runtime without hipMemGetInfo: no device-side bound
            free = None
        host = _host_available()
        # two device buffers on the device, one pinned and one pageable on the host:
        # leave at least half of what is free to everyone else
        while limit > 4096 and ((free is not None and 2 * limit > free // 2) or
                                (host is not None and 2 * limit > host // 2)):
            limit //= 2
        while True:
            try:
                self.dev_a = env.keep(dev.context.alloc(limit))
                self.dev_b = env.keep(dev.context.alloc(limit))
                self.pinned = env.keep(dev.context.alloc_host(limit))
                break
            except OutOfMemoryError:
                for name in ("dev_a", "dev_b", "pinned"):
                    buf = self.__dict__.pop(name, None)
                    if buf is not None:
                        buf.close()
                if limit <= 4096:
                    raise Unavailable("cannot allocate even 4 KiB for the copies") from None
                limit //= 4
        if limit < top:
            env.note(f"copies stop at {size_label(limit)}, not {size_label(top)}: that is what "
                     "fits in half the free device and host memory")
        self.top = limit
        self.pageable = np.ones(limit, np.uint8)     # touched: no first-use page faults timed
        self.pinned.numpy(np.uint8)[:] = 2
        self.dev_a.fill(3)
        self.dev_b.fill(4)
        self._views: dict[tuple[str, int], Any] = {}

    def view(self, which: str, size: int) -> Any:
        key = (which, size)
        v = self._views.get(key)
        if v is None:
            if which == "pageable":
                v = self.pageable[:size]
            else:
                v = getattr(self, which)[:size]
            self._views[key] = v
        return v

    @staticmethod
    def address(x: Any) -> int:
        return int(x.ctypes.data) if isinstance(x, np.ndarray) else int(x.ptr)


def _endpoints(mem: Memory, direction: str, memory: str, size: int) -> tuple[Any, Any]:
    """(destination, source) for one series."""
    host = "pageable" if memory == "pageable" else "pinned"
    if direction == "H2D":
        return mem.view("dev_a", size), mem.view(host, size)
    if direction == "D2H":
        return mem.view(host, size), mem.view("dev_a", size)
    return mem.view("dev_b", size), mem.view("dev_a", size)


def _rocpy_copy(dst: Any, src: Any, direction: str, ops: int, stream: Any) -> Any:
    sync = stream.sync
    if direction == "D2H":
        copy_to = src.copy_to

        def run() -> None:
            for _ in range(ops):
                copy_to(dst, stream)
            sync()
    else:
        copy_from = dst.copy_from

        def run() -> None:
            for _ in range(ops):
                copy_from(src, stream)
            sync()
    return run


_KINDS = {"H2D": "hipMemcpyHostToDevice", "D2H": "hipMemcpyDeviceToHost",
          "D2D": "hipMemcpyDeviceToDevice"}


def _raw_copy(dst: int, src: int, size: int, direction: str, ops: int, stream: Any) -> Any:
    from rocpy.hip import ffi, lib
    memcpy, sync = lib.hipMemcpyAsync, lib.hipStreamSynchronize
    d, s = ffi.cast("void *", dst), ffi.cast("void *", src)
    kind = getattr(lib, _KINDS[direction])
    h = stream.handle

    def run() -> None:
        for _ in range(ops):
            if memcpy(d, s, size, kind, h):
                raise RuntimeError("hipMemcpyAsync failed")
        if sync(h):
            raise RuntimeError("hipStreamSynchronize failed")
    return run


def _raw_small(dst: int, src: int, size: int, direction: str) -> Any:
    from rocpy.hip import ffi, lib
    memcpy = lib.hipMemcpy
    d, s = ffi.cast("void *", dst), ffi.cast("void *", src)
    kind = getattr(lib, _KINDS[direction])

    def run() -> None:
        if memcpy(d, s, size, kind):
            raise RuntimeError("hipMemcpy failed")
    return run


def build(env: Env) -> list[Bench]:
    from .. import compare
    sizes = sorted(set(env.plan.sizes))
    if not sizes:
        raise Unavailable("no copy sizes")
    mem = Memory(env, max(sizes))
    sizes = [s for s in sizes if s <= mem.top] or [mem.top]
    peers = compare.active(env)
    stream = env.stream
    from ..c_reference import c_loops
    loops = c_loops(env)
    from rocpy.hip import lib
    stream_address = stream.__hip_stream__()[1]      # the C variant's stream: rocpy's
    if env.simulation and env.plan.compare:
        env.note("on the stub, copies of a few KiB (and batched launches) also time waking the "
                 "stub's worker threads, which depends on how fast calls arrive: their rocpy/raw "
                 "ratios overstate rocpy's cost; the per-call overhead family holds the stream "
                 "on a gate and measures the binding alone")
    benches = []
    for direction, memory in SERIES:
        for size in sizes:
            dst, src = _endpoints(mem, direction, memory, size)
            ops = ops_for(size)
            variants: dict[str, Callable[[], object]] = {
                "rocpy": _rocpy_copy(dst, src, direction, ops, stream)}
            reference = "rocpy"
            if env.plan.compare:
                d, s = Memory.address(dst), Memory.address(src)
                variants["raw"] = _raw_copy(d, s, size, direction, ops, stream)
                reference = "raw"
                if loops is not None:
                    # on rocpy's stream: which stream a copy goes to moves a 4 KiB pageable
                    # copy by 0.3 us on the H200 for every caller (benchmarks/results/
                    # 2026-12-04-h200-nvidia-session10-copy-floor.txt); one stream leaves
                    # the callers' own costs
                    variants["C"] = loops.copier(d, s, size, getattr(lib, _KINDS[direction]), ops,
                                                 stream_address)
                for peer in peers:
                    fn = peer.variant("copy", direction=direction, memory=memory, dst=d, src=s,
                                      nbytes=size, ops=ops)
                    if fn is not None:
                        variants[peer.name] = fn
            name = f"{direction} {memory} {size_label(size)}"
            benches.append(Bench(Case(name, variants, reference=reference, ops=ops,
                                      bytes_per_op=size),
                                 "copy", "bandwidth",
                                 {"direction": direction, "memory": memory, "size": size}))
    small = min(SMALL, mem.top)
    for direction in ("H2D", "D2H"):
        dst, src = _endpoints(mem, direction, "pinned", small)
        if direction == "D2H":
            copy_to = src.copy_to

            def rocpy_d2h(copy_to: Any = copy_to, dst: Any = dst) -> None:
                copy_to(dst)
            rocpy_small: Callable[[], object] = rocpy_d2h
        else:
            copy_from = dst.copy_from

            def rocpy_h2d(copy_from: Any = copy_from, src: Any = src) -> None:
                copy_from(src)
            rocpy_small = rocpy_h2d
        variants = {"rocpy": rocpy_small}
        reference = "rocpy"
        if env.plan.compare:
            d, s = Memory.address(dst), Memory.address(src)
            variants["raw"] = _raw_small(d, s, small, direction)
            reference = "raw"
            for peer in peers:
                fn = peer.variant("small_copy", direction=direction, dst=d, src=s, nbytes=small)
                if fn is not None:
                    variants[peer.name] = fn
        benches.append(Bench(Case(f"{direction} {size_label(small)} hipMemcpy", variants,
                                  reference=reference, ops=1),
                             "copy", "latency", {"direction": direction, "memory": "pinned",
                                                 "size": small, "synchronous": True},
                             title=f"small copy {direction} {size_label(small)} "
                                   "(synchronous hipMemcpy, pinned)"))
    return benches
