"""Work-items per second of the CPU builds on the stub, for the corpus (tests/cpukern).

    PYTHONPATH=. python3 benchmarks/cpukern_bench.py [--scale N] [--guard-pages] [--json OUT]

Each case is compiled once (rocpy.hip.Program: hipcc for the metadata, c++ -O2 for
the CPU build, cached), launched once to warm up, then timed over one launch of the
case at ``--scale`` (scale 2+ runs a 1024x1024 matmul and a 2^20-byte histogram).
The number is work-items divided by wall time, the copies in and out included;
``cpu_seconds`` (all threads of the process) tells a loaded machine from a slow run.
``--guard-pages`` runs with ``ROCPY_STUB_GUARD_PAGES=1`` (an unmapped page after every
allocation), to measure what that debugging mode costs."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cpukern"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--only", nargs="*", default=None, help="case names")
    ap.add_argument("--json", default=None)
    ap.add_argument("--guard-pages", action="store_true",
                    help="ROCPY_STUB_GUARD_PAGES=1 (read when the stub starts)")
    args = ap.parse_args()
    if args.guard_pages:
        os.environ["ROCPY_STUB_GUARD_PAGES"] = "1"
    import rocpy
    from rocpy import hip
    from corpus import CASES, check, source
    if rocpy.backend().name != "stub":
        print("the CPU builds run on the stub: set ROCPY_BACKEND=stub", file=sys.stderr)
        return 2
    dev = hip.Device(0)
    rows = []
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        t0 = time.perf_counter()
        mod = hip.Program(source(case.file), name=case.file + ".hip").compile(dev)
        compile_s = time.perf_counter() - t0
        try:
            case.run(dev, mod, 1)
            t0, c0 = time.perf_counter(), time.process_time()
            got, want, items = case.run(dev, mod, args.scale)
            dev.sync()
            secs, cpu = time.perf_counter() - t0, time.process_time() - c0
            check(case, got, want)
        finally:
            mod.close()
        row = {"case": case.name, "work_items": items, "seconds": round(secs, 4),
               "cpu_seconds": round(cpu, 4),
               "work_items_per_s": round(items / secs), "compile_s": round(compile_s, 2)}
        rows.append(row)
        print(f"{case.name:16s} {items:>10d} items {secs:8.3f} s (cpu {cpu:7.3f} s) "
              f"{items / secs:14,.0f} items/s (compile {compile_s:.1f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scale": args.scale, "cpus": os.cpu_count(), "guard_pages": args.guard_pages,
                       "cases": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
