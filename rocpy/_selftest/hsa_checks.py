"""The selftest's HSA checks: what the stub can only imitate, on the real runtime.

Each check takes the `HsaContext` and returns a line of detail, or raises
(`AssertionError` for a wrong result).
"""
from __future__ import annotations

import resource
import time
from typing import Any, Callable

import numpy as np

from .. import hsa
from ..codeobject import LaunchConfigError
from ..hsa.memory import AccessError


class HsaContext:
    """The runtime, its first GPU and CPU, the selftest kernels loaded for the GPU."""

    def __init__(self, stack: Any) -> None:
        from . import kernels
        self.rt = stack.enter_context(hsa.Runtime())
        if not self.rt.gpu_agents:
            raise LookupError("no HSA GPU agent")
        self.gpu = self.rt.gpu_agents[0]
        self.cpu = self.rt.cpu_agents[0]
        kernels.register_emulations()
        self.exe = stack.enter_context(hsa.Executable.load(self.gpu, kernels.build(self.gpu.name)))
        self.q = stack.enter_context(self.gpu.create_queue())
        self.host_pool = self.cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        self.dev_pool = self.gpu.pools(segment="global", fine_grained=False)[0]
        self.k = {name: self.exe.kernel(name) for name in kernels.NAMES}

    def shared(self, nbytes: int) -> hsa.Buffer:
        """Host memory the GPU may access."""
        buf: hsa.Buffer = self.host_pool.allocate(nbytes)
        buf.allow_access([self.gpu])
        return buf


def copies(c: HsaContext) -> str:
    n = 1 << 16
    data = np.arange(n, dtype=np.uint32)
    dev, dev2 = c.dev_pool.allocate(4 * n), c.dev_pool.allocate(4 * n)
    granted, ungranted = c.shared(4 * n), c.host_pool.allocate(4 * n)
    granted.numpy(np.uint32)[:] = data
    done = hsa.Signal(1)
    hsa.copy(dev, granted, 4 * n)                                  # H->D, blit
    hsa.copy_async(dev2, dev, 4 * n, completion=done)             # D->D, copy engine
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    back = np.zeros(n, dtype=np.uint32)
    hsa.copy(_cdata(back), dev2, 4 * n)                           # D->plain host (ROCr locks it)
    assert (back == data).all(), "H->D->D->H lost data"
    done.store(1)
    hsa.copy_async(granted, dev2, 4 * n, completion=done)        # D->H async
    done.wait("eq", 0, timeout=30, raise_on_timeout=True)
    assert (granted.numpy(np.uint32) == data).all(), "D->H async lost data"
    refused = 0
    attempts: tuple[Callable[[], object], ...] = (
                    lambda: hsa.copy(dev, ungranted, 4 * n),
                    lambda: hsa.copy(ungranted, dev, 4 * n),
                    lambda: hsa.copy_async(dev, ungranted, 4 * n, completion=done))
    for attempt in attempts:
        try:
            attempt()
        except AccessError:
            refused += 1
    assert refused == 3, f"only {refused} of 3 copies of ungranted memory were refused"
    return "H->D, D->D, D->H (blit and copy engine) correct; 3 ungranted copies refused"


def ordering(c: HsaContext) -> str:
    n, rounds = 1 << 14, 64
    a, b = c.shared(4 * n), c.shared(4 * n)
    a.numpy(np.uint32)[:] = 0
    for _ in range(rounds):                       # each reads what the one before wrote
        c.q.dispatch(c.k["st_next"], n, 256, (a, b, np.int32(n)))
        c.q.dispatch(c.k["st_next"], n, 256, (b, a, np.int32(n)))
    c.q.sync(timeout=60)
    got = a.numpy(np.uint32)
    assert (got == 2 * rounds).all(), f"barrier-ordered chain gave {np.unique(got)[:4]}, not {2 * rounds}"
    # without barriers the packets may overlap: report what happened, never fail
    a.numpy(np.uint32)[:] = 0
    for _ in range(rounds):
        c.q.dispatch(c.k["st_next"], n, 256, (a, b, np.int32(n)), barrier=False)
        c.q.dispatch(c.k["st_next"], n, 256, (b, a, np.int32(n)), barrier=False)
    c.q.sync(timeout=60)
    wrong = int((a.numpy(np.uint32) != 2 * rounds).sum())
    return (f"{2 * rounds} dependent dispatches with barriers correct; without: "
            f"{wrong} of {n} values raced")


def fence_visibility(c: HsaContext) -> str:
    n = 1 << 12
    out = c.shared(4 * n)
    seen = []
    for i, scope in enumerate(("system", "agent", "none")):
        out.numpy(np.uint32)[:] = 0
        c.q.dispatch(c.k["st_fill"], n, 256, (out, np.uint32(0xA0 + i), np.int32(n)),
                     fences=("system", scope))
        c.q.sync(timeout=30)
        ok = bool((out.numpy(np.uint32) == 0xA0 + i).all())
        assert ok, f"release scope {scope!r}: host saw stale data after synchronize()"
        seen.append(scope)
    return "host sees the results after synchronize() for release scopes " + ", ".join(seen)


def dispatch_time(c: HsaContext) -> str:
    ns = 20_000_000
    c.q.profiling = True
    try:
        done = hsa.Signal(1)
        before = c.rt.timestamp
        c.q.dispatch(c.k["st_spin"], 1, 1, (np.int64(ns),), completion_signal=done)
        done.wait("eq", 0, timeout=30, raise_on_timeout=True)
        after = c.rt.timestamp
        t = c.q.dispatch_time(done)
    finally:
        c.q.profiling = False
    assert before <= t.start <= t.end <= after, "dispatch_time is outside the wall-clock window"
    assert 0.5 * ns / 1e9 <= t.seconds <= 4 * ns / 1e9, f"a 20 ms kernel took {t.seconds * 1e3:.2f} ms"
    return f"a 20 ms kernel: {t.seconds * 1e3:.2f} ms, inside the host's window"


def launch_rules(c: HsaContext) -> str:
    out = c.shared(4 * 9 * 1000)
    # 2-D and 3-D with partial workgroups: what the work-items see
    for grid, wg in (((30, 7), (8, 4)), ((5, 6, 7), (4, 4, 2))):
        g3, w3 = grid + (1,) * (3 - len(grid)), wg + (1,) * (3 - len(wg))
        n = g3[0] * g3[1] * g3[2]
        assert n <= 1000
        out.numpy(np.int32)[:] = -1
        c.q.dispatch(c.k["st_probe"], grid, wg, (out, np.int32(1 << 30)))
        c.q.sync(timeout=30)
        rec = out.numpy(np.int32).reshape(-1, 9)
        blocks = tuple(-(-g // w) for g, w in zip(g3, w3))
        first = tuple(rec[0])
        assert first[:6] == w3 + blocks, f"grid {grid} wg {wg}: work-item 0 saw {first[:6]}"
    lds = c.shared(4 * 256)
    c.q.dispatch(c.k["st_lds"], 256, 64, (lds,), dynamic_lds=64 * 4)
    c.q.sync(timeout=30)
    assert (lds.numpy(np.int32)[:64] == np.arange(63, -1, -1)).all(), "dynamic LDS read back wrong"
    try:
        c.q.dispatch(c.k["st_bounded"], 256, 128, (out,))
        raise AssertionError("a launch beyond __launch_bounds__(64) was not refused")
    except LaunchConfigError:
        pass
    rec = c.shared(4 * 64)
    c.q.dispatch(c.k["st_recursive"], 64, 64, (rec, np.int32(12)))
    c.q.sync(timeout=30)
    assert (rec.numpy(np.int32) == 144).all(), "recursive kernel (dynamic stack) gave a wrong result"
    return "2-D/3-D partial workgroups, dynamic LDS, launch bounds refused, recursion correct"


def full_queue(c: HsaContext) -> str:
    size = c.gpu.queue_min_size
    n = 4 * size
    with c.gpu.create_queue(size=size, kernarg_bytes=2 * 4096, kernarg_segments=2) as q:
        cpu0, wall0 = _cpu_seconds(), time.monotonic()
        q.dispatch(c.k["st_spin"], 1, 1, (np.int64(50_000_000),))
        for _ in range(n):                # wraps the ring and the kernarg segments
            q.dispatch(c.k["st_spin"], 1, 1, (np.int64(0),))
        q.sync(timeout=120)
        cpu, wall = _cpu_seconds() - cpu0, time.monotonic() - wall0
    assert cpu <= 0.5 * wall + 0.05, f"waiting for ring space used {cpu:.3f} s of CPU in {wall:.3f} s"
    return f"{n + 1} dispatches through a {size}-packet queue: {cpu:.3f} s CPU in {wall:.3f} s"


def _cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _cdata(arr: np.ndarray) -> Any:
    from ..hsa._common import api
    ffi, _ = api()
    return ffi.from_buffer(arr)


CHECKS: dict[str, Callable[[HsaContext], str]] = {
    "hsa.copies": copies,
    "hsa.ordering": ordering,
    "hsa.fence_visibility": fence_visibility,
    "hsa.dispatch_time": dispatch_time,
    "hsa.launch_rules": launch_rules,
    "hsa.full_queue": full_queue,
}
