"""``rocpy bench``: copy bandwidth, dispatch latency and per-call overhead on this machine.

Families (``--only``): ``copy`` (bandwidth over sizes, pinned and pageable,
both directions and device to device; small-copy latency), ``dispatch``
(HIP launch + synchronize, batched enqueue, graph replay), ``hsa`` (AQL
dispatch through rocpy.hsa, where the backend has HSA), ``overhead`` (each
Pythonic call against the raw cffi call).  The cases live in
`rocpy.bench.cases`; timing is `rocpy.bench.harness` (interleaved variants,
warm-up dropped, median and spread; each case's repetitions fitted to a
time budget unless ``--repeat`` fixes them).

On the stub backend every figure is a CPU simulation and is labelled so in
the table, the JSON (``simulation: true``) and the plot.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import re
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from .info import Printer, fmt_bytes

NAME = "bench"
HELP = "time copies, kernel dispatch and per-call overhead on this machine's backend"
EPILOG = """\
examples:
  rocpy bench --quick                      a short run (under 20 s on the stub)
  rocpy bench --json r.json --plot r.png   the full run, saved and plotted
  rocpy bench --compare                    add raw cffi calls, C references and peer libraries
  rocpy bench --only copy --size-max 1G    copies only, up to 1 GiB
"""

FAMILY_TITLES = {"copy": "copy", "dispatch": "HIP", "hsa_dispatch": "HSA", "overhead": "overhead"}

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``'64M'``, ``'64MiB'``, ``'1G'``, ``'4096'`` -> bytes (K, M, G, T are powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a size: use bytes or a number with K, M or G (e.g. 64M, 1G)")
    value = float(m.group(1)) * (1 << (10 * " kmgt".index(m.group(2).lower() or " ")))
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the size must be at least 1 byte")
    if n > 1 << 40:
        raise argparse.ArgumentTypeError(f"{text!r}: larger than 1 TiB")
    return n


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None


def _positive(text: str) -> int:
    n = _integer(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {n}")
    return n


def _non_negative(text: str) -> int:
    n = _integer(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {n}")
    return n


def _families(text: str) -> tuple[str, ...]:
    from ..bench.cases import ALIASES, FAMILIES     # the one table of names and aliases
    names = {**{f: f for f in FAMILIES}, **ALIASES}
    out = []
    for part in text.split(","):
        name = part.strip().lower()
        if not name:
            continue
        if name not in names:
            raise argparse.ArgumentTypeError(
                f"unknown family {name!r}; choose from copy, dispatch, hsa, overhead")
        if names[name] not in out:
            out.append(names[name])
    if not out:
        raise argparse.ArgumentTypeError("no family named")
    return tuple(f for f in FAMILIES if f in out)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench`` on an argparse subparsers object."""
    import textwrap
    parser = subparsers.add_parser(NAME, help=HELP, epilog=EPILOG, description=textwrap.fill(
        HELP + ". Each case's variants are timed interleaved, after a warm-up, and reported "
        "as median and spread. On the stub backend (no GPU) every figure is a CPU simulation "
        "and is labelled so.", 78),
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a short run: fewer sizes and repetitions (under 20 s on the stub)")
    parser.add_argument("--compare", action="store_true",
                        help="also time raw cffi calls, the C references where built and the "
                             "peer libraries installed (hip-python; cuda.core, CuPy); print ratios")
    parser.add_argument("--json", metavar="FILE", help="write the results as JSON (``-``: to "
                        "stdout, the tables then go to stderr)")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="plot bandwidth against size and latency box plots (matplotlib)")
    parser.add_argument("--size-max", metavar="SIZE", type=parse_size,
                        help="largest copy (default: 64M on the stub, 1G on a GPU; "
                             "--quick: 16M / 256M)")
    parser.add_argument("--repeat", metavar="N", type=_positive,
                        help="timed repetitions per case (default: as many as fit each case's "
                             "time budget)")
    parser.add_argument("--warmup", metavar="N", type=_non_negative,
                        help="untimed repetitions before each case (default 3; --quick 1)")
    parser.add_argument("--only", metavar="FAMILIES", type=_families,
                        help="comma-separated: copy, dispatch, hsa, overhead (default: all)")
    parser.add_argument("--device", metavar="INDEX", type=_non_negative, default=0,
                        help="the HIP device to measure (default 0)")
    parser.add_argument("--plain", action="store_true", help="plain-text tables even where rich "
                                                             "is installed")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--hostname", action="store_true",
                        help="record this machine's host name in the JSON")
    parser.set_defaults(run=run, bench_parser=parser)
    return parser


# ---- the plan ----------------------------------------------------------------------------


def sizes_up_to(top: int, quick: bool) -> list[int]:
    """Copy sizes: 4 KiB, then x4 (x16 with ``quick``) up to ``top``, which is always included."""
    step = 16 if quick else 4
    sizes = []
    n = min(4096, top)
    while n < top:
        sizes.append(n)
        n *= step
    sizes.append(top)
    return sizes


def make_plan(args: argparse.Namespace, simulation: bool) -> Any:
    from ..bench.cases import FAMILIES, Plan
    quick = args.quick
    default_top = (16 << 20 if quick else 64 << 20) if simulation else \
        (256 << 20 if quick else 1 << 30)
    top = args.size_max or default_top
    warmup = args.warmup if args.warmup is not None else (1 if quick else 3)
    return Plan(quick=quick, sizes=sizes_up_to(top, quick), repeat=args.repeat, warmup=warmup,
                budget_s=0.12 if quick else 1.0, min_repeat=5 if quick else 10,
                max_repeat=30 if quick else 500, compare=args.compare,
                families=args.only or FAMILIES)


# ---- run ---------------------------------------------------------------------------------


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the benchmark; 0 on success, 1 when nothing could run, 130 when interrupted."""
    out = out or sys.stdout
    parser = getattr(args, "bench_parser", None)

    def usage(msg: str) -> None:
        if parser is not None:
            parser.error(msg)           # exits with status 2
        raise SystemExit(2)
    if args.plot:
        if os.path.splitext(args.plot)[1].lower() not in (".png", ".svg", ".pdf"):
            usage(f"--plot {args.plot}: name a .png, .svg or .pdf file")
        try:
            import matplotlib  # noqa: F401  (is it installed?)
        except ImportError:
            usage("--plot needs matplotlib (pip install matplotlib)")
    to_stdout = args.json == "-"
    for what, path in (("--json", None if to_stdout else args.json), ("--plot", args.plot)):
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        if folder and os.path.exists(folder) and not os.access(folder, os.W_OK):
            usage(f"{what} {path}: cannot write to {folder}")

    import rocpy
    try:
        info = rocpy.backend()
    except rocpy.BackendUnavailableError as exc:
        print(f"rocpy bench: error: {exc}", file=sys.stderr)
        return 1
    from ..bench import cases as bench_cases
    from ..bench.compare import c_references
    plan = make_plan(args, info.is_stub)
    p = Printer(sys.stderr if to_stdout else out, plain=args.plain)
    started = time.perf_counter()
    load_before = _load()
    try:
        env = bench_cases.Env(plan, args.device)
    except Exception as exc:  # no device, a bad index: say so, no traceback
        print(f"rocpy bench: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    p.heading(headline(info, env), warning=info.is_stub)
    measured: list[Any] = []
    interrupted = False
    progress = None
    references: list[dict[str, Any]] = []
    try:
        benches = bench_cases.build(env)
        from ..bench.progress import ProgressDisplay
        progress = ProgressDisplay(len(benches), bar=not args.no_progress and _isatty(sys.stderr),
                                   lines=not args.no_progress and not _isatty(sys.stdout))
        for b in benches:
            progress.case(b.case.name)
            m = bench_cases.measure(b, env, progress.hook)
            if m.result is None:
                env.skip(b.family, m.error or "failed", b.case.name)
            measured.append(m)
            progress.finish_case()
        progress.close()
        references = c_references(env, {m.result.name: m.result for m in measured
                                        if m.result is not None})
    except KeyboardInterrupt:
        interrupted = True
        env.note("interrupted: the results cover the cases finished before")
    finally:
        if progress is not None:
            progress.close()
        env.references = references
        try:
            env.close()
        except Exception as exc:
            env.note(f"closing the benchmark's objects failed: {type(exc).__name__}: {exc}")
    busy = load_before[0] if load_before else 0.0     # "after" would count this run itself
    cpus = os.cpu_count() or 1
    if busy > max(1.0, 0.5 * cpus):
        env.note(f"the machine was busy while measuring (load average {busy:.2f} on {cpus} "
                 "CPUs): the figures are noisier than on an idle machine")
    data = results_json(env, info, measured, plan, args, time.perf_counter() - started,
                        interrupted)
    # other work on the machine shows in the figures (on the stub above all): say how busy it was
    data["meta"]["load_average"] = {"before": load_before, "after": _load()}
    report(data, p)
    status = 130 if interrupted else (0 if data["cases"] else 1)
    if to_stdout:
        import json
        json.dump(data, out, indent=1)
        out.write("\n")
    elif args.json:
        save_json(data, args.json)
        p.line(f"JSON written to {args.json}")
    if args.plot and data["cases"]:
        from ..bench.plot import plot
        plot(data, args.plot)
        p.line(f"plot written to {args.plot}")
    return status


def _isatty(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", None) and stream.isatty())


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def headline(info: Any, env: Any) -> str:
    dev = env.device
    if info.is_stub:
        from ..bench.harness import _cpu_name
        return (f"rocpy bench -- stub backend: CPU SIMULATION of {dev.name} ({dev.target_id}) on "
                f"{_cpu_name()}, {os.cpu_count()} CPUs. Not GPU figures.")
    return f"rocpy bench -- {info.name} backend: Device {dev.index}, {dev.name} ({dev.target_id})"


def results_json(env: Any, info: Any, measured: Sequence[Any], plan: Any,
                 args: argparse.Namespace, elapsed: float, interrupted: bool) -> dict[str, Any]:
    """The run as JSON: the harness's schema plus backend, device, families and notes."""
    from ..bench.harness import Results, machine_info
    ok = [m for m in measured if m.result is not None]
    meta = machine_info(hostname=args.hostname, backend=False)
    meta["backend"] = info.name
    dev = env.device
    config = {"repeat": plan.repeat, "warmup": plan.warmup, "budget_s": plan.budget_s,
              "min_repeat": plan.min_repeat, "max_repeat": plan.max_repeat,
              "quick": plan.quick, "compare": plan.compare, "families": list(plan.families),
              "sizes": list(plan.sizes), "disable_gc": True, "clock": "perf_counter_ns"}
    data = Results([m.result for m in ok], meta, config).to_json()
    for entry, m in zip(data["cases"], ok):
        entry["family"] = m.bench.family
        entry["kind"] = m.bench.kind
        entry["title"] = m.bench.title or m.bench.case.name
        entry["params"] = dict(m.bench.params)
    machine = {k: meta.get(k) for k in ("machine", "cpu", "cpu_count", "platform", "python")}
    if args.hostname:
        machine["hostname"] = meta.get("hostname")
    data.update({
        "tool": "rocpy bench",
        "date": meta["date"],
        "simulation": info.is_stub,
        "backend": {"name": info.name, "reason": info.reason, "simulation": info.is_stub,
                    "label": ("stub: CPU simulation, not GPU figures" if info.is_stub
                              else f"{info.name}: hardware")},
        "machine": machine,
        "device": {"index": dev.index, "name": dev.name, "target_id": dev.target_id,
                   "compute_units": dev.compute_units, "total_memory": dev.total_memory,
                   "simulated": info.is_stub},
        "notes": list(env.notes),
        "skipped": list(env.skipped),
        "references": list(env.references),
        "elapsed_s": round(elapsed, 3),
        "interrupted": interrupted,
    })
    return data


def save_json(data: dict[str, Any], path: str) -> None:
    import json
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


# ---- the report ------------------------------------------------------------------------------


def _num(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}" if abs(x) < 1000 else f"{x:,.0f}"


def _us(case: dict[str, Any], value: float) -> float:
    return value * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[case["unit"]]


def report(data: dict[str, Any], p: Printer) -> None:
    """Print the tables of a run (`results_json`'s data)."""
    sim = data.get("simulation")
    tag = "; CPU SIMULATION, not GPU figures" if sim else ""
    cases = data["cases"]
    bw = [c for c in cases if c.get("kind") == "bandwidth"]
    lat = [c for c in cases if c.get("kind") != "bandwidth"]
    if bw:
        series: list[tuple[str, str]] = []
        for c in bw:
            key = (c["params"]["direction"], c["params"]["memory"])
            if key not in series:
                series.append(key)
        sizes = sorted({c["params"]["size"] for c in bw})
        cell = {(c["params"]["direction"], c["params"]["memory"], c["params"]["size"]): c
                for c in bw}
        compared = any(len(c["variants"]) > 1 for c in bw)
        rows = []
        for size in sizes:
            row = [fmt_bytes(size)]
            for d, m in series:
                c = cell.get((d, m, size))
                if c is None:
                    row.append("-")
                    continue
                v = c["variants"]["rocpy"]
                text = _num(v["gbps"])
                if compared and v.get("ratio") is not None and c["reference"] != "rocpy":
                    text += f" {v['ratio']:.2f}x"
                row.append(text)
            rows.append(row)
        n = sorted({len(v["samples_ns"]) for c in bw for v in c["variants"].values()})
        runs = f"{n[0]}" if len(n) == 1 else f"{n[0]}-{n[-1]}"
        title = f"Copy bandwidth, GB/s (median of {runs} timed runs per size{tag})"
        if compared:
            title += "; Nx = rocpy time / raw time"
        p.heading(title, warning=bool(sim))
        p.table(["size"] + [f"{d} {m}" if m != "device" else d for d, m in series], rows)
        peers = [(c, name, v) for c in bw for name, v in c["variants"].items()
                 if name not in ("rocpy", "raw")]
        if peers:
            p.table(["case", "peer", "GB/s", "time / raw"],
                    [[c["name"], name, _num(v["gbps"]),
                      "-" if v.get("ratio") is None else f"{v['ratio']:.2f}x"]
                     for c, name, v in peers], left=2, title="  Peers, copies")
    if lat:
        p.heading(f"Latency, microseconds per operation (median, p10, p90{tag})",
                  warning=bool(sim))
        rows = []
        family = None
        compared = any(len(c["variants"]) > 1 for c in lat)
        for c in lat:
            label = FAMILY_TITLES.get(c.get("family"), c.get("family") or "")
            first = True
            for name, v in c["variants"].items():
                ref = " *" if len(c["variants"]) > 1 and name == c["reference"] else ""
                row = [label if label != family else "", c["name"] if first else "", name + ref,
                       _num(_us(c, v["median"])), _num(_us(c, v["p10"])), _num(_us(c, v["p90"])),
                       str(len(v["samples_ns"]))]
                if compared:
                    row.append("" if ref or v.get("ratio") is None or len(c["variants"]) == 1
                               else f"{v['ratio']:.2f}x")
                rows.append(row)
                family = label
                first = False
        header = ["family", "case", "variant", "median", "p10", "p90", "runs"]
        if compared:
            header.append("ratio")
        p.table(header, rows, left=3)
        if compared:
            p.line("  * reference of its case; ratio = median / reference median (above 1: slower)")
        over = [c for c in lat if c.get("family") == "overhead" and "raw" in c["variants"]
                and "rocpy" in c["variants"]]
        if over:
            rows = []
            for c in over:
                raw = _us(c, c["variants"]["raw"]["median"]) * 1e3
                mine = _us(c, c["variants"]["rocpy"]["median"]) * 1e3
                params = c.get("params") or {}
                rows.append([params.get("api", c["name"]), params.get("raw_call", "raw"),
                             f"{mine:,.0f}", f"{raw:,.0f}", f"{mine - raw:+,.0f}",
                             f"{mine / raw:.2f}x" if raw > 0 else "-"])
            p.heading("Per-call overhead of the Pythonic layer (median ns per call)")
            p.table(["rocpy call", "raw cffi call", "rocpy ns", "raw ns", "added", "ratio"], rows,
                    left=2)
    for ref in data.get("references") or []:
        rows = []
        for pair in ref.get("compared") or []:
            metric = pair["metric"]
            if metric.startswith("bandwidth_gbps."):
                size = int(metric.rsplit(".", 1)[1])
                c_val = f"{size / pair['c_us'] / 1e3:.3g} GB/s"
                ours = f"{size / pair['ours_us'] / 1e3:.3g} GB/s"
            else:
                c_val, ours = f"{pair['c_us']:.3g} us", f"{pair['ours_us']:.3g} us"
            rows.append([pair["case"], pair.get("what", metric), c_val, ours,
                         f"{pair['ratio']:.2f}x"])
        if rows:
            p.heading(f"C reference: {ref['name']}, {ref['kind']} (rocpy / C: time ratio)")
            p.table(["case", "the C program measures", "C", "rocpy", "rocpy / C"], rows, left=2)
    if data.get("skipped"):
        p.heading("Skipped")
        for s in data["skipped"]:
            where = f"{s['family']}" + (f" / {s['case']}" if s.get("case") else "")
            p.line(f"  {where}: {s['reason']}")
    if data.get("notes"):
        p.heading("Notes")
        for note in data["notes"]:
            p.line(f"  - {note}")
    device = data.get("device") or {}
    meta = data.get("meta") or {}
    p.gap()
    what = ("stub backend (CPU simulation)" if sim else f"{data['backend']['name']} backend")
    p.line(f"{len(cases)} cases in {data['elapsed_s']:.1f} s on {what}: {device.get('name')} "
           f"({device.get('target_id')}); host {meta.get('cpu')}, {platform.python_version()}")
