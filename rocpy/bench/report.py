"""What a `rocpy bench` run produces: its JSON (`results_json`, described by
rocpy/schemas/bench.json; `save_json`) and its report (`report`: the bandwidth,
latency, overhead and C-reference tables through the CLI's `Printer`)."""
from __future__ import annotations

import json
import math
import os
import platform
from collections.abc import Sequence
from typing import Any

from .._text import Printer, fmt_bytes

FAMILY_TITLES: dict[Any, str] = {"copy": "copy", "dispatch": "HIP", "hsa_dispatch": "HSA", "overhead": "overhead",
                                  "kernargs": "kernargs", "peer": "peer",
                                  "hsa_submit": "HSA submit"}


def results_json(env: Any, info: Any, measured: Sequence[Any], plan: Any,
                 hostname: bool, elapsed: float, interrupted: bool) -> dict[str, Any]:
    """The run as JSON (rocpy/schemas/bench.json): the harness's schema plus backend,
    device, families and notes.  ``hostname``: record this machine's host name."""
    from .harness import Results, machine_info
    ok = [m for m in measured if m.result is not None]
    meta = machine_info(hostname=hostname, backend=False)
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
    if hostname:
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
    """Write ``data`` to ``path`` atomically (a temporary file, then a rename)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def _num(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.2f}" if abs(x) < 1000 else f"{x:,.0f}"


def _us(case: dict[str, Any], value: float) -> float:
    return value * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[case["unit"]]


def report(data: dict[str, Any], p: Printer) -> None:
    """Print the tables of a run (`results_json`'s data)."""
    sim = bool(data.get("simulation"))
    tag = "; CPU SIMULATION, not GPU figures" if sim else ""
    cases = data["cases"]
    bw = [c for c in cases if c.get("kind") == "bandwidth"]
    lat = [c for c in cases if c.get("kind") != "bandwidth"]
    if bw:
        _bandwidth_tables(bw, p, sim, tag)
    if lat:
        _latency_table(lat, p, sim, tag)
        _overhead_table(lat, p)
    _reference_tables(data.get("references") or [], p)
    _skipped_and_notes(data, p)
    device = data.get("device") or {}
    meta = data.get("meta") or {}
    p.gap()
    what = ("stub backend (CPU simulation)" if sim else f"{data['backend']['name']} backend")
    p.line(f"{len(cases)} cases in {data['elapsed_s']:.1f} s on {what}: {device.get('name')} "
           f"({device.get('target_id')}); host {meta.get('cpu')}, {platform.python_version()}")


def _bandwidth_tables(bw: list[dict[str, Any]], p: Printer, sim: bool, tag: str) -> None:
    series: list[tuple[str, str]] = []
    c: dict[str, Any] | None
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


def _latency_table(lat: list[dict[str, Any]], p: Printer, sim: bool, tag: str) -> None:
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


def _overhead_table(lat: list[dict[str, Any]], p: Printer) -> None:
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


def _reference_tables(references: list[dict[str, Any]], p: Printer) -> None:
    for ref in references:
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


def _skipped_and_notes(data: dict[str, Any], p: Printer) -> None:
    if data.get("skipped"):
        p.heading("Skipped")
        for s in data["skipped"]:
            where = f"{s['family']}" + (f" / {s['case']}" if s.get("case") else "")
            p.line(f"  {where}: {s['reason']}")
    if data.get("notes"):
        p.heading("Notes")
        for note in data["notes"]:
            p.line(f"  - {note}")
