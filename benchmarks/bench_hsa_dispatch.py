"""What rocpy.hsa adds to an AQL dispatch: Python against C, on the same queue, in one run.

Cases (per packet, interleaved by `rocpy.bench.harness`):

* dispatch, empty kernel: 100 packets per call, the doorbell rung after each.
  ``C`` is ``rocpy_bench_dispatch_loop`` (``fast/hsa/aql.c``: the packet built
  from scalars, kernarg slot, write-index reservation, body, one atomic
  header store, doorbell), ``cffi`` the fast path called from Python with a
  prebuilt packet (the floor for any binding), ``rocpy`` ``Queue.dispatch``;
* dispatch, vadd (4 arguments): the same, with 28 bytes of kernel arguments:
  C and cffi copy bytes packed once, rocpy packs three Buffers and an int at
  every dispatch; ``rocpy+signal`` adds a completion signal;
* batch of 1000 vadd packets, the doorbell rung once: ``C`` loops in C,
  ``dispatch_many(list)`` submits 1000 prepared `hsa.Dispatch` objects,
  ``dispatch_many(count)`` one prepared dispatch 1000 times.

The queue is held by a barrier-AND packet on a gate signal while a case
runs, so the packet processor (the stub's thread, or the GPU) does not run
meanwhile: the timings are the producer's alone.  The queue and the kernarg
ring are sized so that one case never waits for space.  Goals: at most 1 us
per single dispatch from Python; batches at most 2x the C loop per packet.

``--clock thread`` times with the thread's CPU clock instead of the wall
clock: on a small shared machine it leaves out the time other processes
take the CPU away.

    python benchmarks/bench_hsa_dispatch.py [--json FILE] [--repeat N] [--warmup N]
                                            [--clock wall|thread]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from rocpy import hsa
from rocpy.bench.harness import Case, Results, run_cases

SINGLE = 100      # packets per timed call in the single-dispatch cases
BATCH = 1000      # packets per batch


def kernel_path(name: str, arch: str, cache: str) -> str:
    from kernels.compile import compile_hip
    return compile_hip(name, cache, (arch,))


class Bench:
    """The queue, kernels and buffers every case uses."""

    def __init__(self, rt: hsa.Runtime, cache: str, packets: int) -> None:
        gpu = rt.gpu_agents[0]
        self.gpu = gpu
        size = gpu.queue_max_size
        while size // 2 >= packets + 64:
            size //= 2
        self.q = gpu.create_queue(size=size, kernarg_bytes=max(1 << 22, 2 * 64 * packets),
                                  kernarg_segments=2)
        self.exes = [hsa.Executable.load(gpu, kernel_path(n, gpu.name, cache))
                     for n in ("empty", "vadd")]
        self.empty = self.exes[0].kernel("empty")
        self.vadd = self.exes[1].kernel("vadd")
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

    def c_loop(self, kernel: hsa.Kernel, kernarg: bytes, n: int, ring_each: bool):
        lib, q = self.lib, self.q
        obj = kernel.object

        def run() -> None:
            with q._lock:
                ns = lib.rocpy_bench_dispatch_loop(q._aql, n, obj, kernarg, len(kernarg), 1024, 256,
                                                   1 if ring_each else 0)
            if ns < 0:
                raise RuntimeError(f"rocpy_bench_dispatch_loop failed: {ns}")
        return run

    def cffi_loop(self, kernel: hsa.Kernel, kernarg: bytes, n: int):
        dispatch, aql = self.lib.rocpy_aql_dispatch, self.q._aql
        packet = kernel.packet(1024, 256)
        size = len(kernarg)

        def run() -> None:
            for _ in range(n):
                dispatch(aql, packet, kernarg, size, 0)
        return run

    def rocpy_loop(self, kernel: hsa.Kernel, args: tuple, n: int, signal: bool = False):
        dispatch = self.q.dispatch
        sig = self.signal if signal else None

        def run() -> None:
            for _ in range(n):
                dispatch(kernel, 1024, 256, args, completion_signal=sig)
        return run

    def cases(self) -> list[Case]:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="wall clock, or the thread's CPU time (leaves out preemption)")
    opts = parser.parse_args()
    clock = time.perf_counter_ns if opts.clock == "wall" else time.thread_time_ns
    # the most packets one case writes while the processor is held
    packets = (opts.repeat + opts.warmup) * BATCH * 3 + 64
    with hsa.Runtime() as rt, tempfile.TemporaryDirectory() as cache:
        if not rt.gpu_agents:
            print("no GPU agent", file=sys.stderr)
            return 2
        bench = Bench(rt, cache, packets)
        if bench.q.size < packets:
            print(f"the queue holds {bench.q.size} packets, a case writes up to {packets}: "
                  "lower --repeat", file=sys.stderr)
            return 2
        results = []
        meta = None
        for case in bench.cases():
            bench.hold()
            try:
                r = run_cases([case], repeat=opts.repeat, warmup=opts.warmup, clock=clock)
            finally:
                bench.release()
            results += r.cases
            meta = r.meta
            config = r.config
        bench.close()
    out = Results(results, dict(meta or {}, queue_size=bench.q.size), config)
    print(f"rocpy.hsa dispatch on {out.meta.get('backend')} ({bench.gpu.name}), "
          f"clock={opts.clock}, {opts.repeat} repetitions")
    print(out.table())
    for case in out.cases:
        ref = case.variants[case.reference].stats.median
        for v in case.variants.values():
            if v.name != case.reference:
                print(f"  {case.name}: {v.name} {v.stats.median * 1000:.0f} ns/packet, "
                      f"{v.stats.median * 1000 - ref * 1000:+.0f} ns over C")
    if opts.json:
        out.save(opts.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
