"""The wait's spin before the helper hand-off, measured: large pinned copies each way,
``buf.copy_from(host, s); s.sync()`` with the long spin (rocpy/hip/_wait.py
`LONG_SPIN_NS`, the default) and without it (hand-off after `SPIN_NS`, the wait before
2026-12-02 session 4), against raw ``hipMemcpyAsync`` + ``hipStreamSynchronize``;
interleaved rounds, medians in microseconds.

    python benchmarks/device/wait_experiment.py [--json FILE] [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    p.add_argument("--rounds", type=int, default=15)
    args = p.parse_args(argv)
    import rocpy
    from rocpy import hip
    from rocpy.hip import _wait, ffi, lib
    stub = rocpy.backend().name == "stub"
    sizes = [4 << 20, 16 << 20] if stub else [64 << 20, 256 << 20, 1 << 30]
    dev = hip.Device(0)
    s = dev.create_stream()
    top = max(sizes)
    dbuf = dev.context.alloc(top)
    host = dev.context.alloc_host(top)
    host.numpy()[:] = 1
    long_spin = _wait.LONG_SPIN_NS
    out: dict[str, dict[str, float]] = {}
    for size in sizes:
        d, h = dbuf[:size], host[:size]
        dp, hp = ffi.cast("void *", d.ptr), ffi.cast("void *", h.ptr)

        def raw(dp=dp, hp=hp, size=size) -> None:
            if lib.hipMemcpyAsync(dp, hp, size, lib.hipMemcpyHostToDevice, s.handle) or \
                    lib.hipStreamSynchronize(s.handle):
                raise RuntimeError("raw copy failed")

        def mine(d=d, h=h) -> None:
            d.copy_from(h, s)
            s.sync()

        variants = {"raw": (raw, long_spin), "rocpy long spin": (mine, long_spin),
                    "rocpy 2 ms spin": (mine, _wait.SPIN_NS)}
        times: dict[str, list[float]] = {k: [] for k in variants}
        for fn, spin in variants.values():          # warm-up
            _wait.LONG_SPIN_NS = spin
            fn()
        for _ in range(args.rounds):
            for name, (fn, spin) in variants.items():
                _wait.LONG_SPIN_NS = spin
                t0 = time.perf_counter()
                fn()
                times[name].append((time.perf_counter() - t0) * 1e6)
        _wait.LONG_SPIN_NS = long_spin
        out[f"H2D pinned {size >> 20} MiB"] = {k: statistics.median(v) for k, v in times.items()}
    for case, row in out.items():
        print(f"{case:22s} " + "  ".join(f"{k} {v:10.1f}" for k, v in row.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({"backend": rocpy.backend().name, "date":
                                               time.strftime("%FT%TZ", time.gmtime()),
                                               "medians_us": out}, indent=1))
    s.close()
    dbuf.close()
    host.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
