"""The closing-note table of a `rocpy bench --compare` run: rocpy, rocpy with
``ROCPY_HOT=0``, raw cffi, cuda.core, CuPy and the C reference
(benchmarks/c/hip_ref.c; for the launch enqueue cases and the async copies its loops
timed in-process in the same rounds, benchmarks/c/hip_ref_loops.c, where the run has them;
else hip_ref's own figure, from a separate process run after the bench) per case,
medians in microseconds per operation, and issue 21's goals checked against them.

    python benchmarks/table.py BENCH.json [BENCH-PYTHON.json [STUB-OVERHEAD.json]] > table.txt

Each file may be gzip-compressed (``.json.gz``), as committed runs are.

Latency cases: copies up to 64 KiB, the 64 B hipMemcpy, launches (enqueue and
+ sync), event record/query, stream query.  Goals: rocpy at or below every peer
and raw there; empty launch enqueue within 0.3 us of C, 4-argument within
0.6 us; copies from 64 MiB up at >= 99 % of C (C's time / rocpy's: from the medians,
and paired, the median of C / rocpy within each repetition with its 95 % interval,
which takes the drift between repetitions out: a case is met at a paired median of
0.99 or more, missed when the whole interval lies below, undecided otherwise); on the stub
(STUB-OVERHEAD.json, ``bench_hip_overhead.py`` with ``ROCPY_BACKEND=stub``) every
Pythonic call within 1.15x of the raw call.
"""
from __future__ import annotations

import gzip
import json
import math
import statistics
import sys

PEERS = ("cuda.core", "CuPy")
LATENCY_MAX = 64 << 10


def _medians(path: str) -> dict[str, dict[str, float]]:
    # committed runs are stored gzip-compressed (benchmarks/results/*.json.gz)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        d = json.load(f)
    return {c["name"]: {k: v["median"] for k, v in c["variants"].items()}
            for c in d["cases"]}, d


def _size(case: dict) -> int | None:
    return case.get("bytes_per_op") if case.get("bytes_per_op") else None


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    med, d = _medians(argv[0])
    py = _medians(argv[1])[0] if len(argv) > 1 else {}
    c_ref = {}
    for ref in d.get("references") or []:
        for c in ref.get("compared") or []:
            c_ref[c["case"]] = c["c_us"]
    sizes = {c["name"]: _size(c) for c in d["cases"]}
    # each case's C figure: the in-process loop of the same rounds, else hip_ref's
    c_of = {name: v.get("C", c_ref.get(name)) for name, v in med.items()}
    meta = d.get("meta", {})
    print(f"# rocpy bench --compare medians (us per op), {meta.get('device', d.get('device'))}, "
          f"backend {d.get('backend')}, {d.get('date')}")
    print("# table: python benchmarks/table.py bench.json bench-python.json")
    cols = ("rocpy", "ROCPY_HOT=0", "raw", "cuda.core", "CuPy", "C ref")
    print(f"{'case':34s}" + "".join(f"{c:>12s}" for c in cols) + "  verdict")
    latency = above_peer = above_raw = 0
    fails = []
    for name, v in med.items():
        n = sizes.get(name)
        is_latency = n is None or n <= LATENCY_MAX
        row = [v.get("rocpy"), py.get(name, {}).get("rocpy"), v.get("raw"),
               v.get("cuda.core"), v.get("CuPy"), c_of[name]]
        cells = "".join(f"{x:12.3f}" if x is not None else f"{'-':>12s}" for x in row)
        verdict = ""
        r = v.get("rocpy")
        if is_latency and r is not None:
            latency += 1
            peers = [v[p] for p in PEERS if p in v]
            bad = []
            if peers and r > min(peers):
                bad.append("> peer")
                above_peer += 1
            if "raw" in v and r > v["raw"]:
                bad.append("> raw")
                above_raw += 1
            verdict = "latency: " + (", ".join(bad) if bad else "ok")
            if bad:
                fails.append(name)
        elif n is not None and n >= 64 << 20 and c_of[name] and r:
            ratio = c_of[name] / r
            verdict = f"C/rocpy {ratio:.3f}" + (" ok" if ratio >= 0.99 else " < 0.99")
        print(f"{name:34s}{cells}  {verdict}")
    print(f"# latency cases: {latency}; rocpy above a peer in {above_peer}, above raw in "
          f"{above_raw}")
    for case, metric, limit in (("launch (enqueue)", "empty launch enqueue", 0.3),
                                ("4-arg launch (enqueue)", "4-argument launch enqueue", 0.6)):
        if case not in med:
            continue
        # C: the in-process variant (hip_ref_loops, same rounds) where the run has it,
        # else the separate hip_ref program (run once after the bench)
        c = med[case].get("C", c_ref.get(case))
        if c is None:
            continue
        where = "in-process C" if "C" in med[case] else "C (hip_ref)"
        diff = med[case]["rocpy"] - c
        print(f"# {metric}: rocpy {med[case]['rocpy']:.3f} us, {where} {c:.3f} us, "
              f"{diff:+.3f} us (goal <= {limit}): {'met' if diff <= limit else 'not met'}"
              + (f"; hip_ref {c_ref[case]:.3f} us" if "C" in med[case] and case in c_ref
                 else ""))
    _against_c(med, sizes)
    big = [(name, c_of[name] / med[name]["rocpy"]) for name, n in sizes.items()
           if n and n >= 64 << 20 and c_of.get(name) and med[name].get("rocpy")]
    if big:
        worst = min(big, key=lambda x: x[1])
        where = "in-process C" if all("C" in med[name] for name, _ in big) else "C"
        print(f"# copies >= 64 MiB: {sum(r >= 0.99 for _, r in big)} of {len(big)} at >= 99 % "
              f"of {where}; worst {worst[0]} {100 * worst[1]:.1f} %")
        separate = [(name, c_ref[name] / med[name]["rocpy"]) for name, _ in big
                    if "C" in med[name] and name in c_ref]
        if separate:
            worst = min(separate, key=lambda x: x[1])
            print(f"# copies >= 64 MiB against hip_ref (a separate process after the bench): "
                  f"{sum(r >= 0.99 for _, r in separate)} of {len(separate)} at >= 99 %; "
                  f"worst {worst[0]} {100 * worst[1]:.1f} %")
        vs_raw = [(name, med[name]["raw"] / med[name]["rocpy"]) for name, n in sizes.items()
                  if n and n >= 64 << 20 and med[name].get("rocpy") and med[name].get("raw")]
        if vs_raw:
            worst = min(vs_raw, key=lambda x: x[1])
            print(f"# copies >= 64 MiB against raw: {sum(r >= 0.99 for _, r in vs_raw)} of "
                  f"{len(vs_raw)} at >= 99 % of raw; worst {worst[0]} {100 * worst[1]:.1f} %")
    _paired_large(d)
    for ref in d.get("references") or []:
        _pageable_experiment((ref.get("metrics") or {}).get("pageable_experiment"))
    if len(argv) > 2:
        _stub_goal(argv[2])
    return 0


def _against_c(med: dict, sizes: dict) -> None:
    """The latency copies with an in-process C variant (hip_ref_loops, same rounds): rocpy and
    the best peer against the same batch made from C, which says whether a peer's lead is
    the binding's cost or below it (HIP and its CUDA runtime)."""
    rows = [(name, v) for name, v in med.items()
            if sizes.get(name) is not None and sizes[name] <= LATENCY_MAX and "C" in v
            and "rocpy" in v]
    if rows:
        print("# latency copies against the in-process C loop (same rounds), us over C: "
              "rocpy, raw, best peer")
        c_above_peer = 0
        for name, v in rows:
            c, peers = v["C"], [v[p] for p in PEERS if p in v]
            best = min(peers) if peers else None
            c_above_peer += best is not None and c > best
            cells = [v["rocpy"] - c, v["raw"] - c if "raw" in v else None,
                     best - c if best is not None else None]
            print(f"#   {name:30s}" + "".join(f"{x:+9.3f}" if x is not None else f"{'-':>9s}"
                                          for x in cells))
        print(f"# the C loop itself above a peer in {c_above_peer} of {len(rows)}")


def median_interval(xs: list[float], level: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of ``xs``: ``[v[k], v[n-1-k]]`` of the
    sorted values, with the largest k whose coverage, 1 - 2 P(Binomial(n, 1/2) <= k),
    is at least ``level``; the whole range where even k = 0 falls short (fewer than
    6 values at 95 %)."""
    v, n = sorted(xs), len(xs)
    if not v:
        raise ValueError("median_interval needs values")
    tail, best, at_most = (1 - level) / 2, 0, 0.0
    for k in range(n // 2):
        at_most += math.comb(n, k) / 2 ** n       # P(X <= k), exact for any n
        if at_most > tail:
            break
        best = k
    return v[best], v[n - 1 - best]


def paired_ratios(case: dict, over: str, under: str) -> list[float]:
    """``over``'s time / ``under``'s in each repetition of a case (its samples_ns)."""
    a = case["variants"][over]["samples_ns"]
    b = case["variants"][under]["samples_ns"]
    return [x / y for x, y in zip(a, b) if y]


def _paired_large(d: dict) -> None:
    """The >= 64 MiB goal judged on paired ratios (C / rocpy per repetition)."""
    rows = []
    for case in d["cases"]:
        n, v = case.get("bytes_per_op"), case["variants"]
        if not (n and n >= 64 << 20 and "C" in v and "rocpy" in v
                and v["C"].get("samples_ns") and v["rocpy"].get("samples_ns")):
            continue
        ratios = paired_ratios(case, "C", "rocpy")
        lo, hi = median_interval(ratios)
        rows.append((case["name"], statistics.median(ratios), lo, hi, len(ratios)))
    if not rows:
        return
    met = [r for r in rows if r[1] >= 0.99]
    missed = [r for r in rows if r[1] < 0.99 and r[3] < 0.99]
    print(f"# copies >= 64 MiB, paired (C / rocpy in each repetition, median, 95 % interval): "
          f"{len(met)} of {len(rows)} met, {len(missed)} missed, "
          f"{len(rows) - len(met) - len(missed)} undecided")
    for name, m, lo, hi, count in rows:
        if m < 0.99:
            print(f"#   {name:30s} {m:.4f} [{lo:.4f}, {hi:.4f}] of {count} repetitions: "
                  f"{'missed' if hi < 0.99 else 'undecided'}")


def _pageable_experiment(exp: dict | None) -> None:
    """hip_ref.c's pageable copies four ways (buffer: malloc or numpy's MADV_HUGEPAGE;
    call: hipMemcpy or the bench's hipMemcpyAsync + hipStreamSynchronize), us."""
    if not exp:
        return
    print(f"# pageable copies in C, us (transparent hugepages: {exp.get('thp', '?')}):")
    keys = [k for k in exp if k != "thp"]
    for k in keys:
        print(f"#   {k:36s} {exp[k]:10.1f}")


STUB_RATIO = 1.15


def _stub_goal(path: str) -> None:
    """The stub goal: every overhead case's rocpy/raw median ratio at or below 1.15."""
    med, d = _medians(path)
    rows = [(name, v["rocpy"], v["raw"]) for name, v in med.items() if "rocpy" in v and "raw" in v]
    print(f"# stub (CPU simulation, {d.get('date')}): rocpy / raw per call, goal <= {STUB_RATIO}x")
    for name, r, raw in rows:
        ratio = r / raw
        print(f"#   {name:28s} rocpy {r:8.3f} us  raw {raw:8.3f} us  {ratio:5.2f}x  "
              f"{'met' if ratio <= STUB_RATIO else 'not met'}")
    met = sum(r / raw <= STUB_RATIO for _, r, raw in rows)
    print(f"# stub: {met} of {len(rows)} calls within {STUB_RATIO}x of raw")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
