"""``rocpy info``: the backend taken and why, runtime versions, devices, HSA agents and pools.

What ``rocminfo`` and ``hipInfo`` show, gathered by `rocpy.info.collect`:
tables through rich when it is installed and the output is a terminal,
plain text otherwise (``--plain`` forces it), JSON with ``--json``.

The table helpers (`Printer`, `format_table`, `fmt_bytes`) are `rocpy._text`'s,
shared with ``rocpy bench`` and the benchmark harness.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from .._text import Printer, fmt_bytes, format_table, use_rich  # noqa: F401  (re-exported)
from . import stdout

NAME = "info"
HELP = "show the backend, runtime versions, devices, HSA agents and memory pools"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``info`` on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=HELP + ".")
    parser.add_argument("--json", action="store_true", help="print JSON (schema rocpy.info/1)")
    parser.add_argument("--plain", action="store_true",
                        help="plain text even where rich is installed and this is a terminal")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print what `rocpy.info.collect` finds; return 0 (1 if no backend loads)."""
    from ..info import collect
    out = stdout(out)
    data = collect()
    if args.json:
        json.dump(data, out, indent=2)
        out.write("\n")
    else:
        render(data, Printer(out, plain=args.plain))
    return 0 if data["backend"].get("name") else 1


def _yes(v: Any) -> str:
    if v is None:
        return "-"
    return "yes" if v else "no"


# ---- rocpy info's report ----------------------------------------------------------------

_DEVICE_ROWS = (
    ("name", "name", str), ("target ID", "target_id", str), ("PCI bus", "pci_bus_id", str),
    ("compute units", "compute_units", str), ("wavefront size", "wavefront_size", str),
    ("clock", "clock_mhz", lambda v: f"{v} MHz"),
    ("memory", "total_memory", fmt_bytes), ("memory free", "free_memory", fmt_bytes),
    ("memory clock", "memory_clock_mhz", lambda v: f"{v} MHz"),
    ("memory bus", "memory_bus_width", lambda v: f"{v} bit"),
    ("L2 cache", "l2_cache", fmt_bytes),
    ("LDS per block", "shared_memory_per_block", fmt_bytes),
    ("registers per block", "registers_per_block", str),
    ("max threads per block", "max_threads_per_block", str),
    ("max block", "max_block_dims", lambda v: " x ".join(map(str, v))),
    ("max grid", "max_grid_dims", lambda v: " x ".join(map(str, v))),
    ("concurrent kernels", "concurrent_kernels", _yes),
    ("managed memory", "managed_memory", _yes), ("ECC", "ecc", _yes),
    ("large BAR", "large_bar", _yes), ("integrated", "integrated", _yes),
    ("stream priorities", "stream_priorities",
     lambda v: f"{v[0]} (low) .. {v[1]} (high)" if len(v) == 2 else "-"),
)

_AGENT_ROWS = (
    ("name", "name", str), ("marketing name", "product_name", str), ("vendor", "vendor_name", str),
    ("type", "type", lambda v: str(v).upper()), ("node", "node", str), ("UUID", "uuid", str),
    ("target ID", "target", str), ("profile", "profile", str),
    ("compute units", "compute_units", str), ("SIMDs per CU", "simds_per_cu", str),
    ("max waves per CU", "max_waves_per_cu", str), ("wavefront size", "wavefront_size", str),
    ("max clock", "max_clock_mhz", lambda v: f"{v} MHz"), ("chip ID", "chip_id", lambda v: f"{v:#x}"),
    ("BDF", "bdf_id", lambda v: f"{v >> 8:02x}:{v >> 3 & 31:02x}.{v & 7}"),
    ("cacheline", "cacheline_size", lambda v: f"{v} B"),
    ("caches L1/L2/L3", "cache_sizes", lambda v: " / ".join(fmt_bytes(x) for x in v[:3])),
    ("workgroup max", "workgroup_max_size", str),
    ("workgroup dims", "workgroup_max_dim", lambda v: " x ".join(map(str, v))),
    ("grid max", "grid_max_size", str),
    ("queues max", "queues_max", str),
    ("queue size", "queue_min_size", None),      # filled from min/max below
    ("queue type", "queue_type", str),
    ("features", "features", lambda v: ", ".join(v) or "-"),
)

_ACCESS = {"allowed_by_default": "yes", "disallowed_by_default": "grant", "never_allowed": "never"}


def _cell(d: dict[str, Any], key: str, fmt: Any) -> str:
    v = d.get(key)
    if v is None or fmt is None:
        return "-"
    try:
        result: str = fmt(v)
        return result
    except (TypeError, ValueError, IndexError):
        return str(v)


def _backend_lines(data: dict[str, Any], p: Printer) -> None:
    b, v, h = data["backend"], data.get("versions", {}), data["host"]
    if b.get("simulation"):
        p.heading(f"rocpy {h['rocpy']}: backend {b['name']} -- CPU SIMULATION, no GPU is used; "
                  "numbers and devices are simulated", warning=True)
    else:
        p.heading(f"rocpy {h['rocpy']}: backend {b.get('name')}")
    p.line(f"  why: {b.get('reason')}")
    tried = b.get("tried") or {}
    for name, why in tried.items():
        if name != b.get("name"):
            p.line(f"  tried {name}: {why}")
    parts = []
    if v.get("hip_runtime"):
        label = "CUDA runtime (through HIP)" if b.get("name") == "nvidia" else "HIP runtime"
        parts.append(f"{label} {v['hip_runtime']}")
    if v.get("hip_driver"):
        parts.append(f"driver {v['hip_driver']}")
    if v.get("hip_headers"):
        parts.append(f"built against HIP {v['hip_headers']}")
    if v.get("hsa"):
        parts.append(f"HSA {v['hsa']} ({v.get('hsa_build') or 'build unknown'})")
    if v.get("stub_rocm"):
        parts.append("emulating ROCm {hip} (HIP), {hsa} (HSA)".format(**v["stub_rocm"]))
    if parts:
        p.line("  versions: " + ", ".join(parts))
    libs = b.get("libraries") or {}
    if libs and b.get("name") != "stub":
        p.line("  libraries: " + ", ".join(f"{k} {path}" for k, path in libs.items()))
    missing = b.get("missing_functions") or []
    if missing:
        p.line(f"  {len(missing)} declared functions missing from the library "
               f"(return hipErrorNotSupported): {', '.join(missing[:6])}"
               + (", ..." if len(missing) > 6 else ""))
    p.line(f"  host: {h.get('cpu')}, {h.get('cpu_count')} CPUs, {fmt_bytes(h.get('memory'))}, "
           f"{h.get('platform')}, {h.get('python')}")


def _block(p: Printer, title: str, rows: Sequence[tuple[str, str]]) -> None:
    """One device or agent as rocminfo lays it out: a title, then one ``key  value`` line
    per property (vertical, so any number of GPUs fits and scripts can parse it)."""
    width = max(len(label) for label, _ in rows)
    p.line(f"  {title}")
    for label, value in rows:
        p.line(f"    {label:<{width}}  {value}")
    p.line()


def render(data: dict[str, Any], p: Printer) -> None:
    """Print `rocpy.info.collect`'s data."""
    if not data["backend"].get("name"):
        h = data["host"]
        p.heading(f"rocpy {h['rocpy']}: no backend can run", warning=True)
        p.line(f"  {data['backend'].get('reason')}")
        p.line("  (unset ROCPY_BACKEND, or set it to auto, to fall back to the stub runtime)")
        p.line(f"  host: {h.get('cpu')}, {h.get('cpu_count')} CPUs, {fmt_bytes(h.get('memory'))}, "
               f"{h.get('platform')}, {h.get('python')}")
        return
    _backend_lines(data, p)
    sim = " (simulated)" if data.get("simulation") else ""
    hip = data.get("hip") or {}
    devices = hip.get("devices") or []
    p.heading(f"HIP devices: {hip.get('device_count', 0)}{sim}")
    for d in devices:
        _block(p, f"Device {d['index']}",
               [(label, _cell(d, key, fmt)) for label, key, fmt in _DEVICE_ROWS])
    peer = hip.get("peer_access") or []
    if len(peer) > 1:
        header = ["can access"] + [f"Device {j}" for j in range(len(peer))]
        rows: list[list[Any]] = [[f"Device {i}"] + ["-" if v is None else _yes(v) for v in row]
                for i, row in enumerate(peer)]
        p.table(header, rows, title="  Peer access (row device can access column device's memory)")

    hsa = data.get("hsa") or {}
    if not hsa.get("available"):
        p.heading("HSA: not available")
        p.line(f"  {hsa.get('reason')}")
    else:
        s = hsa["system"]
        freq = s.get("timestamp_frequency_hz")
        xnack = s.get("xnack_enabled")
        p.heading(f"HSA runtime {s.get('version')} ({s.get('build')}){sim}")
        p.line("  " + ", ".join([
            f"timestamp {freq / 1e6:g} MHz" if freq else "timestamp -",
            f"SVM {_yes(s.get('svm_supported'))}",
            f"XNACK {'-' if xnack is None else _yes(xnack)}",
            f"{s.get('machine_model')} model, {s.get('endianness')} endian",
            "extensions: " + (", ".join(s.get("extensions") or []) or "-")]))
        agents = hsa.get("agents") or []
        if agents:
            p.heading(f"HSA agents: {len(agents)}{sim}")
            for a in agents:
                queue = (f"{a.get('queue_min_size')} .. {a.get('queue_max_size')} packets"
                         if a.get("queue_max_size") else "-")
                _block(p, f"Agent {a['index']}",
                       [(label, queue if key == "queue_min_size" else _cell(a, key, fmt))
                        for label, key, fmt in _AGENT_ROWS])
                pools = a.get("pools") or []
                if not pools:
                    continue
                names = ", ".join(f"{b['index']}" for b in agents)
                header = ["#", "segment", "flags", "size", "alloc", "granule", "align",
                          "max alloc", "all", f"access by agent {names}"]
                rows = []
                for i, pool in enumerate(pools):
                    acc = pool.get("access") or {}
                    access = " ".join(f"{k}:{_ACCESS.get(v['access'], v['access'])}"
                                      for k, v in acc.items())
                    rows.append([i, pool.get("segment") or "-",
                                 ",".join(pool.get("flags") or []) or "-",
                                 fmt_bytes(pool.get("size")), _yes(pool.get("allocatable")),
                                 fmt_bytes(pool.get("granule")) if pool.get("allocatable") else "-",
                                 fmt_bytes(pool.get("alignment")) if pool.get("allocatable") else "-",
                                 fmt_bytes(pool.get("alloc_max_size")) if pool.get("allocatable")
                                 else "-",
                                 _yes(pool.get("accessible_by_all")), access or "-"])
                p.table(header, rows, align="lll" + "r" * 6 + "l",
                        title=f"  Memory pools of agent {a['index']} ({a.get('name')}); "
                              "access: yes = by default, grant = after allow_access")
    errors = data.get("errors") or []
    if errors:
        p.heading(f"Could not read {len(errors)} value(s):")
        for e in errors:
            p.line(f"  {e['where']}: {e['error']}")
