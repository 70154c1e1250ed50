"""Plots of ``rocpy bench`` results (matplotlib, Agg: no display needed).

Left: copy bandwidth against size, one line per direction and memory kind
(rocpy solid with its p10..p90 band; raw and peers dashed).  Right: the
latency cases as box plots, one box per variant ("arm"), in microseconds per
operation on a log scale.  The title names the backend; the stub's figures
are labelled a CPU simulation.

    python -m rocpy.bench.plot results.json out.png     # re-plot saved results
"""
from __future__ import annotations

import json
import sys
from typing import Any

SERIES_STYLE = {("H2D", "pinned"): "tab:blue", ("H2D", "pageable"): "tab:cyan",
                ("D2H", "pinned"): "tab:red", ("D2H", "pageable"): "tab:orange",
                ("D2D", "device"): "tab:green"}
#: Line style (bandwidth) and box colour (latency) of each variant; others: dashed, grey.
VARIANT_LINE: dict[str, Any] = {"rocpy": "-", "raw": "--", "CuPy": ":", "cuda.core": "-.",
                                "hip-python": (0, (5, 1, 1, 1)), "C loop": (0, (1, 1)),
                                "C": (0, (1, 1))}
VARIANT_COLOR = {"rocpy": "#9ecae1", "raw": "#d9d9d9", "CuPy": "#fdd0a2", "cuda.core": "#c7e9c0",
                 "hip-python": "#fcbba1", "C loop": "#dadaeb", "C": "#dadaeb"}


def title_of(data: dict[str, Any]) -> str:
    """The figure title: device, backend (the stub marked a simulation), date."""
    backend = data.get("backend") or {}
    device = data.get("device") or {}
    meta = data.get("meta") or {}
    dev = f"{device.get('name', '?')} ({device.get('target_id', '?')})"
    if data.get("simulation"):
        head = (f"rocpy bench on the stub backend: CPU SIMULATION of {dev} on "
                f"{meta.get('cpu', 'this CPU')}, not GPU figures")
    else:
        head = f"rocpy bench: {dev}, {backend.get('name', '?')} backend"
    return f"{head}\n{meta.get('date', '')}  {meta.get('platform', '')}"


def _bandwidth(ax: Any, cases: list[dict[str, Any]]) -> bool:
    lines: dict[tuple[str, str, str], list[tuple[int, float, float, float]]] = {}
    for c in cases:
        if c.get("kind") != "bandwidth" or not c.get("bytes_per_op"):
            continue
        p = c.get("params") or {}
        size = c["bytes_per_op"]
        for name, v in c["variants"].items():
            med, p10, p90 = v.get("median"), v.get("p10"), v.get("p90")
            if not med:
                continue
            # per-op time in the case's unit -> GB/s (bytes per ns); slower time = lower bandwidth
            scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[c.get("unit", "us")]
            gbps = size / (med * scale)
            lo = size / (p90 * scale) if p90 else gbps
            hi = size / (p10 * scale) if p10 else gbps
            key = (p.get("direction", "?"), p.get("memory", "?"), name)
            lines.setdefault(key, []).append((size, gbps, lo, hi))
    if not lines:
        ax.text(0.5, 0.5, "no copy cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return False
    order = list(SERIES_STYLE)

    def rank(key: tuple[str, str, str]) -> tuple[int, int, str]:
        series = (key[0], key[1])
        return (order.index(series) if series in order else len(order), key[2] != "rocpy", key[2])
    from matplotlib.lines import Line2D
    series_handles: dict[tuple[str, str], Any] = {}
    variant_handles: dict[str, Any] = {}
    for (direction, memory, variant), pts in sorted(lines.items(), key=lambda kv: rank(kv[0])):
        pts.sort()
        xs = [p[0] for p in pts]
        color = SERIES_STYLE.get((direction, memory), "tab:gray")
        mine = variant == "rocpy"
        style = VARIANT_LINE.get(variant, "--")
        ax.plot(xs, [p[1] for p in pts], marker="o" if mine else ".", markersize=4,
                linestyle=style, linewidth=1.6 if mine else 1.0, color=color,
                alpha=1.0 if mine else 0.75)
        if mine:
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=color, alpha=0.15,
                            linewidth=0)
        series_handles.setdefault((direction, memory), Line2D(
            [], [], color=color, marker="o", markersize=4, linewidth=1.6,
            label=direction if memory == "device" else f"{direction} {memory}"))
        if len({k[2] for k in lines}) > 1:
            variant_handles.setdefault(variant, Line2D([], [], color="dimgray", linestyle=style,
                                                       linewidth=1.6 if mine else 1.0,
                                                       label=variant))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("copy size (bytes)")
    ax.set_ylabel("GB/s (median; band: rocpy p10..p90)")
    ax.set_title("copy bandwidth")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(handles=list(series_handles.values()) + list(variant_handles.values()), fontsize=7,
              loc="best")
    from matplotlib import ticker
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(_size_tick))
    return True


def _size_tick(x: float, _pos: Any) -> str:
    n = round(x)
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g}{unit}"
    return str(n)


def _latency(ax: Any, cases: list[dict[str, Any]]) -> bool:
    labels, data, colors = [], [], []
    legend: dict[str, str] = {}          # variant -> its box colour, in order of appearance
    for c in cases:
        if c.get("kind") == "bandwidth":
            continue
        ops = c.get("ops", 1) or 1
        for name, v in c["variants"].items():
            samples = v.get("samples_ns") or []
            if not samples:
                continue
            data.append([s / ops / 1e3 for s in samples])   # ns per call -> us per op
            labels.append(f"{c['name']} [{name}]")
            colors.append(VARIANT_COLOR.get(name, "#eeeeee"))
            legend.setdefault(name, colors[-1])
    if not data:
        ax.text(0.5, 0.5, "no latency cases", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return False
    positions = list(range(len(data), 0, -1))    # first case on top
    style = {"positions": positions, "widths": 0.6, "showfliers": True, "patch_artist": True,
             "flierprops": {"markersize": 2, "alpha": 0.4}, "medianprops": {"color": "black"}}
    try:
        boxes = ax.boxplot(data, orientation="horizontal", **style)    # matplotlib 3.10+
    except TypeError:
        boxes = ax.boxplot(data, vert=False, **style)
    for patch, color in zip(boxes["boxes"], colors):
        patch.set_facecolor(color)
    ax.set_yticks(positions)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("microseconds per operation (log)")
    ax.set_title("latency per arm (box: quartiles, whiskers: 1.5 IQR)")
    ax.grid(True, axis="x", which="both", alpha=0.3)
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(facecolor=c, edgecolor="black", label=n) for n, c in legend.items()],
              title="variant", fontsize=7, title_fontsize=7, loc="best")
    return True


def plot(data: dict[str, Any], path: str) -> str:
    """Write the figure of ``data`` (``rocpy bench``'s JSON) to ``path``; return ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    cases = data.get("cases") or []
    n_lat = sum(len(c["variants"]) for c in cases if c.get("kind") != "bandwidth")
    height = max(6.0, 1.5 + 0.22 * n_lat)
    fig = Figure(figsize=(15, height), dpi=110)
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.15]})
    _bandwidth(left, cases)
    _latency(right, cases)
    fig.suptitle(title_of(data), fontsize=10, color="darkred" if data.get("simulation") else "black")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path)
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m rocpy.bench.plot RESULTS.json OUT.png", file=sys.stderr)
        return 2
    with open(args[0]) as f:
        plot(json.load(f), args[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
