"""Run the corpus on the current backend and write one JSON line per case (the GPU's verdict).

    ROCPY_BACKEND=nvidia python3 tests/cpukern/device_run.py OUT.json

Each source is compiled by rocpy.hip.Program (hipRTC where the backend has it);
where that fails on nvidia, by ``nvcc -cubin`` for the device, then loaded with
Module.load.  Used for the H200 record under benchmarks/results/."""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import rocpy  # noqa: E402
from corpus import CASES, check, compile_module  # noqa: E402


def main(path: str) -> int:
    from rocpy import hip
    dev = hip.Device(0)
    dev.context.alloc(4).close()   # a current context before Module.load (CUDA 11 runtime: lazy)
    rows, failures = [], 0
    for case in CASES:
        row = {"case": case.name, "backend": rocpy.backend().name, "device": dev.name}
        t0 = time.perf_counter()
        try:
            mod, row["compiler"] = compile_module(dev, case.file)
            try:
                got, want, items = case.run(dev, mod, 1)
                dev.sync()
            finally:
                mod.close()
            check(case, got, want)
            diff = np.abs(np.asarray(got, np.float64) - np.asarray(want, np.float64))
            row.update(ok=True, work_items=items, max_abs_diff=float(diff.max()) if diff.size else 0.0)
        except Exception as exc:
            failures += 1
            row.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:2000],
                       trace=traceback.format_exc()[-2000:])
        row["seconds"] = round(time.perf_counter() - t0, 4)
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(path, "w") as f:
        json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cases": rows},
                  f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "cpukern-device.json"))
