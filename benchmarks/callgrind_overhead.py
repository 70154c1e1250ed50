"""Instructions per call of the overhead cases (rocpy against the raw cffi call), on the
stub, counted by valgrind's callgrind: deterministic where `bench_hip_overhead.py`'s
times are not (a shared or busy machine).

    python benchmarks/callgrind_overhead.py [CASE ...] [--n N]

Each case runs in its own ``valgrind --tool=callgrind`` process that counts only the
timed loop (``sys.call_tracing`` around it: ``--toggle-collect=sys_call_tracing``), on a
stream held by the bench's gate kernel so calls only enqueue; the figure is the count
divided by the number of calls (N, 2000 by default).  ``rocpy-attr`` cases call
``obj.method(...)`` each time, the others bind the method once, as the timed benchmark
does.  ``callgrind_annotate --inclusive=yes --tree=calling FILE`` on the kept output
(``--keep DIR``) says where the instructions go.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

CASES = ("launch-raw", "launch", "launch-attr", "launch4-raw", "launch4", "launch4-attr",
         "record-raw", "record", "event-query-raw", "event-query", "stream-query-raw",
         "stream-query", "event-sync-raw", "event-sync", "copy-raw", "copy", "signal-load-raw",
         "signal-load", "signal-load-attr")


def _case(name: str, n: int) -> None:
    """Set up on the stub, then run case ``name`` ``n`` times inside sys.call_tracing."""
    from rocpy import hip, hsa
    from rocpy.bench.cases import Env, Gate, Plan
    from rocpy.bench.cases.dispatch import _raw_launcher, four_args
    from rocpy.hip import ffi, lib
    env = Env(Plan())
    s, dev = env.stream, env.device
    gate = Gate(env)
    k = env.kernel("empty")
    k4, args4 = four_args(env)
    fn, rargs = _raw_launcher(k, s)
    packed = k4._packed(args4, 1, 1, 0)
    r4 = (k4.handle, 1, 1, 1, 1, 1, 1, 0, s.handle, ffi.NULL, packed[2])
    ev = hip.Event(dev, timing=False)
    done = hip.Event(dev, timing=False)      # recorded before the gate: complete
    done.record(s)
    sig = hsa.Signal(1)
    src, dst = dev.context.alloc(4096), dev.context.alloc(4096)
    src.fill(1)
    d, sp = ffi.cast("void *", dst.ptr), ffi.cast("void *", src.ptr)
    h2d = lib.hipMemcpyDeviceToDevice
    calls = {
        "launch-raw": (fn, rargs), "launch": (k.launch, (1, 1, (), s)),
        "launch4-raw": (fn, r4), "launch4": (k4.launch, (1, 1, args4, s)),
        "record-raw": (lib.hipEventRecord, (ev.handle, s.handle)), "record": (ev.record, (s,)),
        "event-query-raw": (lib.hipEventQuery, (ev.handle,)), "event-query": (ev.query, ()),
        "stream-query-raw": (lib.hipStreamQuery, (s.handle,)), "stream-query": (s.query, ()),
        "event-sync-raw": (lib.hipEventSynchronize, (done.handle,)),
        "event-sync": (done.sync, ()),
        "copy-raw": (lib.hipMemcpyAsync, (d, sp, 4096, h2d, s.handle)),
        "copy": (dst.copy_from, (src, s)),
        "signal-load-raw": (hsa.lib.hsa_signal_load_scacquire, (sig.handle,)),
        "signal-load": (sig.load, ()),
    }
    for f, a in calls.values():      # warm: every path bound and compiled once
        f(*a)
    s.sync()
    gate.hold(s)

    def attr_launch() -> None:
        for _ in range(n):
            k.launch(1, 1, (), s)

    def attr_launch4() -> None:
        for _ in range(n):
            k4.launch(1, 1, args4, s)

    def attr_load() -> None:
        for _ in range(n):
            sig.load()

    def bound() -> None:
        f, a = calls[name]
        for _ in range(n):
            f(*a)

    loop = {"launch-attr": attr_launch, "launch4-attr": attr_launch4,
            "signal-load-attr": attr_load}.get(name, bound)
    sys.call_tracing(loop, ())
    gate.release(s)
    for x in (ev, done, sig, src, dst):
        x.close()
    env.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("cases", nargs="*", help=f"of: {', '.join(CASES)} (default: all)")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--keep", help="folder for the callgrind output files")
    p.add_argument("--run", help=argparse.SUPPRESS)      # the case, inside valgrind
    a = p.parse_args()
    unknown = [c for c in a.cases if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {', '.join(unknown)}; the cases: {', '.join(CASES)}")
    if a.run:
        _case(a.run, a.n)
        return 0
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "ROCPY_BACKEND": "stub",
           "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out_dir = a.keep or tempfile.mkdtemp(prefix="rocpy-callgrind-")
    print(f"instructions per call (callgrind, N={a.n}, stub backend; files in {out_dir})")
    for case in a.cases or CASES:
        out = os.path.join(out_dir, f"callgrind.{case}.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                            "--toggle-collect=sys_call_tracing", f"--callgrind-out-file={out}",
                            sys.executable, os.path.abspath(__file__), "--run", case,
                            "--n", str(a.n)], env=env, capture_output=True, text=True)
        m = re.search(r"Collected : (\d+)", r.stderr)
        if r.returncode or not m:
            print(f"  {case:18} failed: {r.stderr.strip().splitlines()[-1:]}")
            continue
        print(f"  {case:18} {int(m.group(1)) // a.n:8,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
