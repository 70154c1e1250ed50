"""``rocpy bench``: copy bandwidth, dispatch latency and per-call overhead on this machine.

Families (``--only``): ``copy`` (bandwidth over sizes, pinned and pageable,
both directions and device to device; small-copy latency), ``dispatch``
(HIP launch + synchronize, batched enqueue, graph replay), ``hsa`` (AQL
dispatch through rocpy.hsa, where the backend has HSA), ``overhead`` (each
Pythonic call against the raw cffi call); only when named, ``kernargs``
(kernel argument packing against ``struct.pack``), ``peer`` (copies
between two devices) and ``hsa_submit`` (an AQL dispatch's producer cost).  The cases live in
`rocpy.bench.cases`; timing is `rocpy.bench.harness` (interleaved variants,
warm-up dropped, median and spread; each case's repetitions fitted to a
time budget unless ``--repeat`` fixes them).

On the stub backend every figure is a CPU simulation and is labelled so in
the table, the JSON (``simulation: true``) and the plot.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from typing import Any, TextIO

from ..bench.report import report, results_json, save_json
from .._text import Printer
from . import stdout

NAME = "bench"
HELP = "time copies, kernel dispatch and per-call overhead on this machine's backend"
EPILOG = """\
examples:
  rocpy bench --quick                      a short run (under 20 s on the stub)
  rocpy bench --json r.json --plot r.png   the full run, saved and plotted
  rocpy bench --compare                    add raw cffi calls, C references and peer libraries
  rocpy bench --only copy --size-max 1G    copies only, up to 1 GiB
"""


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
    from ..bench.cases import ALIASES, EXTRA_FAMILIES, FAMILIES   # the one table of names
    every = FAMILIES + EXTRA_FAMILIES
    names = {**{f: f for f in every}, **ALIASES}
    out = []
    for part in text.split(","):
        name = part.strip().lower()
        if not name:
            continue
        if name not in names:
            raise argparse.ArgumentTypeError(
                f"unknown family {name!r}; choose from {', '.join(every)}")
        if names[name] not in out:
            out.append(names[name])
    if not out:
        raise argparse.ArgumentTypeError("no family named")
    return tuple(f for f in every if f in out)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``bench`` on an argparse subparsers object."""
    import textwrap
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, epilog=EPILOG, description=textwrap.fill(
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
    parser.add_argument("--min-repeat", metavar="N", type=_positive,
                        help="the fewest timed repetitions of a case whose repetitions are "
                             "fitted to its time budget (default 10; --quick 5): more decide "
                             "the large copies, which fit few")
    parser.add_argument("--warmup", metavar="N", type=_non_negative,
                        help="untimed repetitions before each case (default 3; --quick 1)")
    parser.add_argument("--only", metavar="FAMILIES", type=_families,
                        help="comma-separated: copy, dispatch, hsa, overhead (default: these four), "
                             "kernargs, peer, hsa_submit")
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
    fewest = getattr(args, "min_repeat", None) or (5 if quick else 10)
    return Plan(quick=quick, sizes=sizes_up_to(top, quick), repeat=args.repeat, warmup=warmup,
                budget_s=0.12 if quick else 1.0, min_repeat=fewest,
                max_repeat=max(fewest, 30 if quick else 500), compare=args.compare,
                families=args.only or FAMILIES)


# ---- run ---------------------------------------------------------------------------------


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run the benchmark; 0 on success, 1 when nothing could run, 130 when interrupted."""
    out = stdout(out)
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
    from ..bench.c_reference import c_references
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
    data = results_json(env, info, measured, plan, args.hostname, time.perf_counter() - started,
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
