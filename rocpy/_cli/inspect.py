"""``rocpy inspect FILE``: targets, kernels and kernel argument layouts of a code object."""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, Dict, List, Optional, TextIO

from ..codeobject import CodeObject, CodeObjectError, CodeObjectFile, KernelInfo, load
from ..codeobject import demangle, paramtypes
from . import stdout

NAME = "inspect"
HELP = "show the targets, kernels and argument layouts of a code object file"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``inspect`` on an argparse subparsers object."""
    parser: argparse.ArgumentParser = subparsers.add_parser(NAME, help=HELP, description=HELP + ".")
    parser.add_argument("file", help="offload bundle (.hsaco, .co, fat binary) or ELF code object")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--target", metavar="TARGET_ID",
                        help="only the code object serving this device, e.g. gfx90a:xnack-")
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace, out: Optional[TextIO] = None) -> int:
    """Inspect ``args.file``; return the exit status (0, or 1 on any error)."""
    out = stdout(out)
    try:
        f = load(args.file)
    except (OSError, CodeObjectError) as exc:
        print(f"rocpy inspect: error: {exc}", file=sys.stderr)
        return 1
    objects: List[Any] = []
    status = 0
    try:
        indices = [f.find(args.target)] if args.target else range(len(f.targets))
    except CodeObjectError as exc:
        print(f"rocpy inspect: error: {exc}", file=sys.stderr)
        return 1
    for i in indices:
        try:
            objects.append(f.code_object(i))
        except CodeObjectError as exc:
            objects.append(exc)
            status = 1
    if args.json:
        json.dump(_file_json(f, objects), out, indent=2)
        out.write("\n")
    else:
        _print_file(f, objects, out)
    return status


def _file_json(f: CodeObjectFile, objects: List[Any]) -> Dict[str, Any]:
    return {
        "file": f.source,
        "format": f.format,
        "entries": [{"index": e.index, "id": e.id, "offset": e.offset, "size": e.size,
                     "kind": e.kind, "target": str(e.target) if e.target else None}
                    for e in f.entries],
        "targets": [str(t) for t in f.targets],
        "code_objects": [{"error": str(o)} if isinstance(o, Exception) else _object_json(o)
                         for o in objects],
    }


def _object_json(co: CodeObject) -> Dict[str, Any]:
    return {
        "source": co.source,
        "target": str(co.target),
        "code_object_version": co.code_object_version,
        "e_flags": co.e_flags,
        "metadata_version": list(co.metadata.version),
        "kernels": [_kernel_json(k) for k in co.kernels.values()],
        "variables": [dataclasses.asdict(v) for v in co.variables.values()],
    }


def _kernel_json(k: KernelInfo) -> Dict[str, Any]:
    data = {f.name: getattr(k, f.name) for f in dataclasses.fields(k)
            if f.name not in ("raw", "descriptor", "args", "hidden_args")}
    data["demangled"] = _demangled(k.name)
    data["args"] = [dataclasses.asdict(a) for a in paramtypes.typed_args(k.args, k.name)]
    data["hidden_args"] = [dataclasses.asdict(a) for a in k.hidden_args]
    data["descriptor"] = k.descriptor.fields if k.descriptor else None
    return data


def _print_file(f: CodeObjectFile, objects: List[Any], out: TextIO) -> None:
    kind = {"bundle": "offload bundle", "compressed-bundle": "compressed offload bundle",
            "elf": "ELF code object"}[f.format]
    print(f"{f.source}: {kind}", file=out)
    for e in f.entries:
        print(f"  entry {e.index}: {e.id}  ({e.size} bytes at offset {e.offset})", file=out)
    for co in objects:
        print(file=out)
        if isinstance(co, Exception):
            print(f"error: {co}", file=out)
        else:
            _print_object(co, out)


def _print_object(co: CodeObject, out: TextIO) -> None:
    print(f"target {co.target}  (code object v{co.code_object_version}, "
          f"{len(co.kernels)} kernels)", file=out)
    for k in co.kernels.values():
        shown = _demangled(k.name)
        mangled = f", {k.name}" if shown is not None else ""
        print(f"\n  kernel {shown or k.name}  (symbol {k.symbol}{mangled})", file=out)
        regs = f"SGPR {k.sgpr_count}, VGPR {k.vgpr_count}"
        if k.agpr_count is not None:
            regs += f", AGPR {k.agpr_count}"
        if k.sgpr_spill_count or k.vgpr_spill_count:
            regs += f", spills {k.sgpr_spill_count or 0} SGPR / {k.vgpr_spill_count or 0} VGPR"
        stack = " + dynamic stack" if k.uses_dynamic_stack else ""
        print(f"    kernarg {k.kernarg_segment_size} bytes (align {k.kernarg_segment_align}), "
              f"LDS {k.group_segment_fixed_size} bytes, "
              f"scratch {k.private_segment_fixed_size} bytes{stack}", file=out)
        print(f"    wave{k.wavefront_size}, {regs}, max workgroup {k.max_flat_workgroup_size}",
              file=out)
        rows = [(str(a.index), str(a.offset), str(a.size), str(a.align), a.value_kind,
                 a.name or "", a.type_name or "") for a in paramtypes.typed_args(k.args, k.name) + k.hidden_args]
        if rows:
            _table(("#", "offset", "size", "align", "kind", "name", "type"), rows, out)
    if co.variables:
        print("\n  variables: " + ", ".join(f"{v.name} ({v.size} bytes)"
                                            for v in co.variables.values()), file=out)


def _demangled(name: str) -> Optional[str]:
    """A C++ kernel's signature as llvm-cxxfilt writes it; None for extern "C" names
    and names the demangler does not read (printed as they are)."""
    try:
        return str(demangle.demangle(name))
    except demangle.Unknown:
        return None


def _table(head: tuple[str, ...], rows: List[tuple[Any, ...]], out: TextIO) -> None:
    widths = [max(len(r[i]) for r in [head] + rows) for i in range(len(head))]
    for row in [head] + rows:
        cells = [c.rjust(w) if i < 4 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
        print("      " + "  ".join(cells).rstrip(), file=out)
