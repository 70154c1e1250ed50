"""What rocpy.hsa adds to an AQL dispatch, producer only: Python against C on one queue.

Cases (per packet, interleaved):

* dispatch, empty kernel: `SINGLE` packets per call, the doorbell rung after
  each.  ``C`` is ``rocpy_bench_dispatch_loop`` (``fast/hsa/aql.c``: the packet
  built from scalars, kernarg slot, write-index reservation, body, one atomic
  header store, doorbell), ``cffi`` the fast path called from Python with a
  prebuilt packet (the floor for any binding), ``rocpy`` ``Queue.dispatch``;
* dispatch, vadd (4 arguments): the same, with 28 bytes of kernel arguments:
  C and cffi copy bytes packed once, rocpy packs three Buffers and an int at
  every dispatch; ``rocpy+signal`` adds a completion signal;
* a batch of `BATCH` vadd packets, the doorbell rung once: ``C`` loops in C,
  ``dispatch_many(list)`` submits prepared `hsa.Dispatch` objects,
  ``dispatch_many(count)`` one prepared dispatch `BATCH` times.

The queue is held by a barrier-AND packet on a gate signal while a case runs
(``before``/``after``), so the packet processor (the stub's thread, or the
GPU) does not run meanwhile: the timings are the producer's alone.  The queue
and the kernarg ring are sized for the most packets one case writes (every
variant's smoke calls, warm-up and repetitions).  Goals: at most 1 us per
single dispatch from Python; batches at most 2x the C loop per packet.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..harness import Case
from . import Bench, Env, Unavailable
from .hsa_dispatch import gpu_agent

SINGLE = 100      # packets per timed call in the single-dispatch cases
BATCH = 100       # packets per batch


class Submit:
    """The queue, kernels and buffers every case uses."""

    def __init__(self, rt: Any, gpu: Any, path: str, packets: int) -> None:
        import numpy as np

        from rocpy import hsa
        self.gpu = gpu
        size = gpu.queue_max_size
        while size // 2 >= packets + 64:
            size //= 2
        self.q = gpu.create_queue(size=size, kernarg_bytes=max(1 << 22, 2 * 64 * packets),
                                  kernarg_segments=2)
        self.exes = [hsa.Executable.load(gpu, path)]
        self.empty = self.exes[0].kernel("empty")
        self.vadd = self.exes[0].kernel("vadd")
        pool = rt.cpu_agents[0].pools(segment="global", fine_grained=True, kernarg=False)[0]
        self.bufs = [pool.allocate(4096) for _ in range(3)]
        for b in self.bufs:
            b.allow_access([gpu])
        self.args = (*self.bufs, np.int32(1024))
        self.gate = hsa.Signal(0)
        self.signal = hsa.Signal(0)
        from rocpy.hsa import lib
        self.lib = lib

    def close(self) -> None:
        self.q.sync(timeout=120)
        for obj in (self.q, self.gate, self.signal, *self.bufs, *self.exes):
            obj.close()

    def hold(self) -> None:
        """Stop the packet processor behind a barrier until `release`."""
        self.q.sync(timeout=120)
        self.gate.store(1)
        self.q.barrier_and([self.gate])

    def release(self) -> None:
        self.gate.store(0)
        self.q.sync(timeout=120)

    # ---- variants ----------------------------------------------------------------------

    def c_loop(self, kernel: Any, kernarg: bytes, n: int, ring_each: bool) -> Callable[[], None]:
        lib, q = self.lib, self.q
        obj = kernel.object

        def run() -> None:
            with q._lock:
                ns = lib.rocpy_bench_dispatch_loop(q._aql, n, obj, kernarg, len(kernarg), 1024, 256,
                                                   1 if ring_each else 0)
            if ns < 0:
                raise RuntimeError(f"rocpy_bench_dispatch_loop failed: {ns}")
        return run

    def cffi_loop(self, kernel: Any, kernarg: bytes, n: int) -> Callable[[], None]:
        dispatch, aql = self.lib.rocpy_aql_dispatch, self.q._aql
        packet = kernel.packet(1024, 256)
        size = len(kernarg)

        def run() -> None:
            for _ in range(n):
                dispatch(aql, packet, kernarg, size, 0)
        return run

    def rocpy_loop(self, kernel: Any, args: tuple[Any, ...], n: int, signal: bool = False) -> Callable[[], None]:
        dispatch = self.q.dispatch
        sig = self.signal if signal else None

        def run() -> None:
            for _ in range(n):
                dispatch(kernel, 1024, 256, args, completion_signal=sig)
        return run

    def cases(self) -> list[Case]:
        """The three cases (their variants write packets while the queue is held)."""
        vadd_args = self.vadd.pack(self.args, 1024, 256)
        prepared = [self.vadd.prepare(1024, 256, self.args) for _ in range(BATCH)]
        one = prepared[0]
        many = self.q.dispatch_many
        return [
            Case("dispatch, empty kernel", {
                "C": self.c_loop(self.empty, b"", SINGLE, True),
                "cffi": self.cffi_loop(self.empty, b"", SINGLE),
                "rocpy": self.rocpy_loop(self.empty, (), SINGLE),
            }, reference="C", ops=SINGLE),
            Case("dispatch, vadd (4 args)", {
                "C": self.c_loop(self.vadd, vadd_args, SINGLE, True),
                "cffi": self.cffi_loop(self.vadd, vadd_args, SINGLE),
                "rocpy": self.rocpy_loop(self.vadd, self.args, SINGLE),
                "rocpy+signal": self.rocpy_loop(self.vadd, self.args, SINGLE, signal=True),
            }, reference="C", ops=SINGLE),
            Case(f"batch of {BATCH} vadd", {
                "C": self.c_loop(self.vadd, vadd_args, BATCH, False),
                "dispatch_many(list)": lambda: many(prepared),
                "dispatch_many(count)": lambda: many(one, count=BATCH),
            }, reference="C", ops=BATCH),
        ]


def build(env: Env) -> list[Bench]:
    gpu = gpu_agent(env)
    plan = env.plan
    calls = 2 + plan.warmup + (plan.repeat if plan.repeat is not None else plan.max_repeat)
    packets = 4 * calls * max(SINGLE, BATCH) + 64     # the most one case writes while held
    if gpu.queue_max_size < packets:
        most = (gpu.queue_max_size - 64) // (4 * max(SINGLE, BATCH)) - 2 - plan.warmup
        raise Unavailable(f"a case writes up to {packets} packets while the queue is held; "
                          f"{gpu.name}'s queues hold {gpu.queue_max_size}: pass --repeat "
                          f"{most} or fewer")
    sub = Submit(gpu.runtime, gpu, env.kernel_file(), packets)
    env.at_close(sub.close)
    return [Bench(case, "hsa_submit", "latency", {"per": "packet", "calls": case.ops},
                  before=sub.hold, after=sub.release, title=f"{case.name} (producer only)")
            for case in sub.cases()]
