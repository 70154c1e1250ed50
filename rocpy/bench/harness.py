"""Side-by-side timing of variants of one operation.

Each `Case` names a few variants (rocpy, raw cffi, a peer library, ...) doing
the same thing.  `run_cases` times them interleaved: every repetition runs
each variant once, so drift (clocks, thermal state, other load) hits all
variants alike, in orders that put every variant after every other one
equally often (`balanced_orders`), so what one variant leaves behind (a warm
stream, a busy queue) is not charged to one neighbour.  Results give
per-operation medians with their spread, ratios against a reference variant,
bandwidth where a case moves bytes, and the machine they were measured on.

    case = Case("launch", {"raw": raw_launch, "rocpy": launch}, reference="raw", ops=100)
    results = run_cases([case], repeat=50, warmup=5)
    print(results.table())
    results.save("benchmarks/results/launch.json")
"""
from __future__ import annotations

import datetime
import gc
import json
import os
import platform
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SCHEMA = "rocpy.bench/1"
UNITS: dict[str, float] = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@dataclass
class Case:
    """Variants of one operation, timed side by side.

    Each variant is called with no arguments and performs `ops` operations;
    results are per operation, in `unit`.  With `bytes_per_op`, results also
    give bandwidth in GB/s (10**9 bytes per second).  Ratios are against
    `reference` (default: the first variant).  `settle`, where given, is called
    after every timed call, outside the timing: it drains what the call enqueued
    (a stream synchronize), as the C reference does between its batches, so that
    a timed batch of enqueues never waits for a full device queue.
    """

    name: str
    variants: Mapping[str, Callable[[], object]]
    reference: str | None = None
    ops: int = 1
    unit: str = "us"
    bytes_per_op: int | None = None
    settle: Callable[[], object] | None = None

    def __post_init__(self) -> None:
        if not self.variants:
            raise ValueError(f"case {self.name!r} has no variants")
        if self.reference is None:
            self.reference = next(iter(self.variants))
        elif self.reference not in self.variants:
            raise ValueError(f"case {self.name!r}: reference {self.reference!r} is not a variant")
        if self.ops < 1:
            raise ValueError(f"case {self.name!r}: ops must be at least 1")
        if self.unit not in UNITS:
            raise ValueError(f"case {self.name!r}: unit must be one of {sorted(UNITS)}")


@dataclass(frozen=True)
class Progress:
    """Where `run_cases` is: repetition `done` of `total` (warm-up included) of case `case`."""

    case: str
    case_index: int
    cases: int
    done: int
    total: int


def percentile(ordered: Sequence[float], q: float) -> float:
    """The `q`-th percentile (0..100) of the values, interpolating linearly (`numpy.percentile`)."""
    if not ordered:
        raise ValueError("no values")
    import numpy as np
    return float(np.percentile(ordered, q))


@dataclass(frozen=True)
class Stats:
    """Summary of per-operation times, in one unit."""

    n: int
    median: float
    mean: float
    min: float
    max: float
    p10: float
    p90: float
    q1: float
    q3: float

    @classmethod
    def of(cls, samples_ns: Sequence[int], ops: int, unit: str) -> Stats:
        """Per-operation statistics of whole-call samples in nanoseconds."""
        scale = ops * UNITS[unit]
        v = sorted(s / scale for s in samples_ns)
        return cls(n=len(v), median=percentile(v, 50), mean=sum(v) / len(v), min=v[0],
                   max=v[-1], p10=percentile(v, 10), p90=percentile(v, 90),
                   q1=percentile(v, 25), q3=percentile(v, 75))


@dataclass
class VariantResult:
    """One variant's samples (ns per call) and their per-operation summary."""

    name: str
    samples_ns: list[int]
    stats: Stats
    ratio: float | None  # median over the reference's median (above 1: slower); None if that is 0
    gbps: float | None


@dataclass
class CaseResult:
    """A case's variants, measured."""

    name: str
    unit: str
    ops: int
    bytes_per_op: int | None
    reference: str
    variants: dict[str, VariantResult]

    @classmethod
    def of(cls, case: Case, samples: Mapping[str, list[int]]) -> CaseResult:
        reference = case.reference or next(iter(case.variants))  # set by Case already
        stats = {name: Stats.of(s, case.ops, case.unit) for name, s in samples.items()}
        ref = stats[reference].median
        variants = {}
        for name, st in stats.items():
            gbps = None
            if case.bytes_per_op is not None and st.median > 0:
                gbps = case.bytes_per_op / (st.median * UNITS[case.unit])  # bytes/ns == GB/s
            variants[name] = VariantResult(name, list(samples[name]), st,
                                           st.median / ref if ref > 0 else None, gbps)
        return cls(case.name, case.unit, case.ops, case.bytes_per_op, reference, variants)


@dataclass
class Results:
    """Measured cases, with the machine and settings they were measured with."""

    cases: list[CaseResult]
    meta: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)

    def table(self) -> str:
        """A plain-text table: one row per variant, per-op times in each case's unit."""
        bandwidth = any(c.bytes_per_op is not None for c in self.cases)
        header = ["case", "variant", "median", "p10", "p90", "min", "ratio"]
        header += ["GB/s"] if bandwidth else []
        rows = []
        for case in self.cases:
            label = f"{case.name} ({case.unit}/op)"
            for v in case.variants.values():
                st = v.stats
                row = [label, v.name + (" *" if v.name == case.reference else ""),
                       _num(st.median), _num(st.p10), _num(st.p90), _num(st.min),
                       "-" if v.ratio is None else f"{v.ratio:.2f}x"]
                if bandwidth:
                    row.append("" if v.gbps is None else _num(v.gbps))
                rows.append(row)
                label = ""
        from .._text import format_table
        return (format_table(header, rows, left=2, indent="")
                + "\n* reference; ratio = median / reference median")

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (schema ``rocpy.bench/1``); stats in each case's unit per op."""
        return {
            "schema": SCHEMA,
            "meta": dict(self.meta),
            "config": dict(self.config),
            "cases": [{
                "name": c.name, "unit": c.unit, "ops": c.ops, "bytes_per_op": c.bytes_per_op,
                "reference": c.reference,
                "variants": {v.name: dict(vars(v.stats), ratio=v.ratio, gbps=v.gbps,
                                          samples_ns=v.samples_ns)
                             for v in c.variants.values()},
            } for c in self.cases],
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write `to_json()` to `path` (parent folders created)."""
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        with open(path, "w") as f:
            json.dump(self.to_json(), f, indent=2)
            f.write("\n")


def _num(x: float) -> str:
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}" if abs(x) < 1000 else f"{x:.0f}"


def run_cases(cases: Sequence[Case], repeat: int = 30, warmup: int = 3,
              progress: Callable[[Progress], object] | None = None, *,
              disable_gc: bool = True, meta: Mapping[str, Any] | None = None,
              hostname: bool = False,
              clock: Callable[[], int] = time.perf_counter_ns) -> Results:
    """Time every case's variants, interleaved, and summarize.

    Each of `warmup` + `repeat` repetitions calls every variant once, in the
    orders of `balanced_orders` taken in turn; warm-up samples are dropped.  The collector is
    off while a case runs (``disable_gc``) and runs between cases.  `progress`
    is called after every repetition.  `meta` adds to or overrides the machine
    description (`machine_info`); `hostname` includes the host's name.
    """
    if repeat < 1 or warmup < 0:
        raise ValueError("repeat must be at least 1 and warmup at least 0")
    results = []
    for index, case in enumerate(cases):
        gc.collect()
        was_enabled = gc.isenabled()
        if disable_gc:
            gc.disable()
        try:
            samples = _measure(case, repeat, warmup, clock, progress, index, len(cases))
        finally:
            if was_enabled:
                gc.enable()
        results.append(CaseResult.of(case, samples))
    info = machine_info(hostname=hostname, backend="backend" not in (meta or {}))
    info.update(meta or {})
    config = {"repeat": repeat, "warmup": warmup, "disable_gc": disable_gc,
              "clock": getattr(clock, "__name__", repr(clock))}
    return Results(results, info, config)


def balanced_orders(n: int) -> list[list[int]]:
    """Orders of ``n`` variants, one per repetition, used in turn: each variant is in each
    position, and directly after each other variant, equally often over a full cycle.

    A Williams design (balanced Latin square): ``n`` orders for an even ``n``, those
    and their reverses for an odd one.  A rotating start would not do: ``b`` would
    almost always follow ``a``, and whatever ``a`` leaves behind would be charged to
    ``b`` in every repetition.
    """
    if n < 1:
        raise ValueError("balanced_orders needs at least one variant")
    first, low, high = [0], 1, n - 1
    while low <= high:                  # 0, 1, n-1, 2, n-2, ...
        first.append(low)
        low += 1
        if low <= high:
            first.append(high)
            high -= 1
    orders = [[(v + shift) % n for v in first] for shift in range(n)]
    if n % 2 and n > 1:
        orders += [order[::-1] for order in orders]
    return orders


def _measure(case: Case, repeat: int, warmup: int, clock: Callable[[], int],
             progress: Callable[[Progress], object] | None, index: int,
             cases: int) -> dict[str, list[int]]:
    names = list(case.variants)
    orders = balanced_orders(len(names))
    samples: dict[str, list[int]] = {name: [] for name in names}
    total = warmup + repeat
    for rep in range(total):
        for i in orders[rep % len(orders)]:
            name = names[i]
            fn = case.variants[name]
            t0 = clock()
            fn()
            t1 = clock()
            if case.settle is not None:
                case.settle()
            if rep >= warmup:
                samples[name].append(t1 - t0)
        if progress is not None:
            progress(Progress(case.name, index, cases, rep + 1, total))
    return samples


def machine_info(hostname: bool = False, backend: bool = True) -> dict[str, Any]:
    """Where results come from: date, Python, platform, CPU, rocpy and (optionally) backend."""
    info: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_name(),
        "cpu_count": os.cpu_count(),
        "rocpy_version": _rocpy_version(),
    }
    if hostname:
        info["hostname"] = socket.gethostname()
    if backend:
        info["backend"] = _backend_name()
    return info


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(("model name", "Model", "Hardware")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _rocpy_version() -> str | None:
    try:
        from rocpy import __version__
    except ImportError:
        return None
    return __version__


def _backend_name() -> str | None:
    try:
        from rocpy import _backend
        return _backend.current().name
    except Exception:  # no backend loads: the results say so rather than fail
        return None
