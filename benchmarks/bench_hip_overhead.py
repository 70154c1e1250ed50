"""What rocpy.hip adds over raw ``rocpy.hip.lib`` calls: launches, events, async copies.

Each case times the same operation two ways, interleaved in one run
(`rocpy.bench.harness`): ``raw`` calls the cffi function with arguments
prepared beforehand (the floor for any Python binding); ``rocpy`` goes
through the Pythonic object (argument packing, stream checks, keep-alive of
what the work uses, error checks).

* launch, empty kernel: ``hipModuleLaunchKernel`` vs ``Kernel.launch``;
* launch, vadd (4 arguments): the raw call reuses a buffer packed once, rocpy
  packs the arguments at each launch;
* event record / event query: ``hipEventRecord``/``hipEventQuery`` vs
  ``Event.record``/``Event.query``;
* async memcpy, 4 KiB device to device: ``hipMemcpyAsync`` vs
  ``DeviceBuffer.copy_from(stream=)``.

On the stub, a "gate" kernel blocks the stream while a case runs (its
emulation waits on a Python event), so the timed calls only enqueue: without
it each call also pays for waking the stub's worker thread, which is the
stub's cost, not rocpy's, and dominates on a loaded machine.  ``--no-gate``
measures that way too.  On a GPU no gate is used.

    python benchmarks/bench_hip_overhead.py [--json FILE] [--repeat N] [--ops N]
                                            [--clock wall|thread] [--no-gate]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import rocpy  # noqa: E402
from rocpy import hip  # noqa: E402
from rocpy.bench.harness import Case, Results, run_cases  # noqa: E402

GATE_SOURCE = 'extern "C" __global__ void rocpy_bench_gate() {}'


def kernel_path(name: str, dev: hip.Device, cache: str) -> str:
    from kernels.compile import compile_cuda, compile_hip
    if rocpy.backend().name == "nvidia":
        return compile_cuda(name, cache, dev.arch)
    return compile_hip(name, cache, (dev.arch,))


class Gate:
    """Blocks a stream on the stub so timed calls only enqueue (see the module docstring)."""

    def __init__(self, dev: hip.Device, enabled: bool) -> None:
        self.enabled = enabled and rocpy.backend().name == "stub"
        self.kernel = None
        if self.enabled:
            from rocpy import stub
            self.kernel = hip.Program(GATE_SOURCE).compile(dev)["rocpy_bench_gate"]
            self.release = threading.Event()
            stub.register_kernel("rocpy_bench_gate", lambda d: self.release.wait() and None)

    def close(self, stream: hip.Stream) -> None:
        if self.enabled:
            self.release.set()
            stream.synchronize()

    def open(self, stream: hip.Stream) -> None:
        if self.enabled:
            self.release.clear()
            self.kernel.launch(1, 1, (), stream=stream)


def cases(dev: hip.Device, s: hip.Stream, ops: int, cache: str) -> list[tuple[Case, object]]:
    from rocpy.hip import ffi, lib
    null = ffi.NULL
    L = lib.hipModuleLaunchKernel
    S = s.handle
    out: list[tuple[Case, object]] = []
    keep = []

    def launches(kernel: hip.Kernel, block: int, args: tuple, extra: object) -> dict:
        """The two variants of a launch case: ``extra`` is the raw call's prepared arguments."""
        F = kernel.handle

        def raw():
            for _ in range(ops):
                L(F, 1, 1, 1, block, 1, 1, 0, S, null, extra)

        def ours():
            launch = kernel.launch
            for _ in range(ops):
                launch(1, block, args, s)
        return {"raw": raw, "rocpy": ours}

    empty = hip.Module.load(kernel_path("empty", dev, cache), dev)["empty"]
    keep.append(empty)
    out.append(Case("launch, empty kernel", launches(empty, 1, (), empty._extra),
                    reference="raw", ops=ops))

    vadd = hip.Module.load(kernel_path("vadd", dev, cache), dev)["vadd"]
    n = 256
    bufs = [dev.context.alloc(n * 4) for _ in range(3)]
    args = (bufs[0], bufs[1], bufs[2], np.int32(n))
    kbuf, size_p, vextra = vadd._packed(args, 1, 256, 0)
    keep += [vadd, bufs, kbuf, size_p, vextra]
    out.append(Case("launch, vadd (4 args)", launches(vadd, 256, args, vextra),
                    reference="raw", ops=ops))

    ev = hip.Event(dev, timing=False)
    EV = ev.handle
    keep.append(ev)

    def raw_record():
        for _ in range(ops):
            lib.hipEventRecord(EV, S)

    def rocpy_record():
        record = ev.record
        for _ in range(ops):
            record(s)

    out.append(Case("event record", {"raw": raw_record, "rocpy": rocpy_record},
                    reference="raw", ops=ops))

    def raw_query():
        q = lib.hipEventQuery
        for _ in range(ops):
            q(EV)

    def rocpy_query():
        q = ev.query
        for _ in range(ops):
            q()

    out.append(Case("event query", {"raw": raw_query, "rocpy": rocpy_query},
                    reference="raw", ops=ops))

    nbytes = 4096
    src, dst = dev.context.alloc(nbytes), dev.context.alloc(nbytes)
    src.fill(1)
    SP, DP = ffi.cast("void *", src.ptr), ffi.cast("void *", dst.ptr)
    kind = lib.hipMemcpyDefault
    keep += [src, dst]

    def raw_copy():
        c = lib.hipMemcpyAsync
        for _ in range(ops):
            c(DP, SP, nbytes, kind, S)

    def rocpy_copy():
        c = dst.copy_from
        for _ in range(ops):
            c(src, s)

    out.append(Case("async memcpy 4 KiB D2D", {"raw": raw_copy, "rocpy": rocpy_copy},
                    reference="raw", ops=ops, bytes_per_op=nbytes))
    return [(case, keep) for case in out]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    parser.add_argument("--repeat", type=int, default=200, help="timed repetitions per case")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--ops", type=int, default=100, help="operations per timed call")
    parser.add_argument("--clock", choices=("wall", "thread"), default="wall",
                        help="wall: perf_counter; thread: this thread's CPU time (ignores "
                             "time the OS gives other threads, e.g. the stub's workers)")
    parser.add_argument("--no-gate", action="store_true",
                        help="on the stub, let the stream run while the calls are timed")
    opts = parser.parse_args()

    dev = hip.Device(0)
    clock = time.perf_counter_ns if opts.clock == "wall" else time.thread_time_ns
    with tempfile.TemporaryDirectory(prefix="rocpy-bench-") as cache:
        s = dev.create_stream()
        gate = Gate(dev, not opts.no_gate)
        measured = []
        for case, _keep in cases(dev, s, opts.ops, cache):
            gate.open(s)
            try:
                res = run_cases([case], repeat=opts.repeat, warmup=opts.warmup, clock=clock)
            finally:
                gate.close(s)
            s.synchronize()
            measured.append(res)
        s.close()
    meta = dict(measured[0].meta, device=dev.name, target=dev.target_id,
                gate=gate.enabled, clock=opts.clock,
                backend_reason=rocpy.backend().reason)
    results = Results([r.cases[0] for r in measured], meta, dict(measured[0].config,
                                                                  ops=opts.ops))
    print(f"rocpy.hip overhead on {rocpy.backend().name} ({dev.name}), clock={opts.clock}, "
          f"gate={'on' if gate.enabled else 'off'}")
    print(results.table())
    print()
    for c in results.cases:
        raw, ours = c.variants["raw"].stats.median, c.variants["rocpy"].stats.median
        print(f"  {c.name:<26} rocpy adds {(ours - raw) * 1000:7.0f} ns per call "
              f"({ours / raw:.2f}x raw)")
    if opts.json:
        results.save(opts.json)
        print(f"wrote {opts.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
