"""Micro-benchmark: microseconds per kernel argument pack (`KernargLayout.pack`).

The default layout is ``vadd(const float*, const float*, float*, int)`` as
clang lays it out for code object v5: four explicit arguments and the
hidden block count, group size, remainder, offset and grid-dims slots in a
288-byte segment.  ``--file F --kernel K [--target T]`` measures a kernel of a
real code object instead.  A bare ``struct.pack`` of the same values is the
floor.  Each case runs twice: through the public methods (the packer
generated for the layout) and through the generic path (one converter call
per argument, `KernargLayout._generic_pack`), the reference the generated
packer must equal.

    python benchmarks/bench_kernargs.py [--json results/kernargs.json]
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import struct
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rocpy.codeobject import KernargLayout, load  # noqa: E402

V5_VADD = [(0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 8, "global_buffer"),
           (24, 4, "by_value"),
           (32, 4, "hidden_block_count_x"), (36, 4, "hidden_block_count_y"),
           (40, 4, "hidden_block_count_z"), (44, 2, "hidden_group_size_x"),
           (46, 2, "hidden_group_size_y"), (48, 2, "hidden_group_size_z"),
           (50, 2, "hidden_remainder_x"), (52, 2, "hidden_remainder_y"),
           (54, 2, "hidden_remainder_z"), (72, 8, "hidden_global_offset_x"),
           (80, 8, "hidden_global_offset_y"), (88, 8, "hidden_global_offset_z"),
           (96, 2, "hidden_grid_dims"), (112, 8, "hidden_hostcall_buffer")]


class Buffer:
    """Stands in for a device buffer: an integer ``.ptr``."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


def per_call_us(fn, repeat: int = 5, number: int = 20000) -> float:
    """Best of ``repeat`` runs, in microseconds per call."""
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number * 1e6


def _compiled_packer(layout: KernargLayout):
    """``rocpy._hot.Launcher`` over ``layout`` (pack only: no function to launch), or
    None where the extension is not built.  ``Buffer`` here takes the ``.ptr`` route."""
    from rocpy import _hotpath
    from rocpy.codeobject.argconv import _POINTER_TYPES
    from rocpy.hip._launch_plan import _param_spec
    hot = _hotpath.module()
    if hot is None:
        return None
    return hot.Launcher(0, 0, 0, layout.size, layout._explicit_end, (0, 0, 0),
                        _param_spec(layout), None, _POINTER_TYPES, frozenset(), None, None)


VADD_TYPES = ("float*", "float*", "float*", "int")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", help="code object file with the kernel to measure")
    parser.add_argument("--kernel", default="vadd", help="kernel name (with --file)")
    parser.add_argument("--target", help="target ID to select from --file (default: first)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    opts = parser.parse_args()

    if opts.file:
        f = load(opts.file)
        co = f.select(opts.target) if opts.target else f.code_object(0)
        info = co.kernels[opts.kernel]
        # vadd's types (extern "C": the code object has none) so plain ints convert
        layout = info.layout if len(info.args) != 4 else \
            KernargLayout.from_metadata(info, VADD_TYPES)
    else:
        layout = KernargLayout.from_params(V5_VADD, size=288, name="vadd", types=VADD_TYPES)
    nargs = len(layout.params)
    if nargs != 4:
        print(f"{layout.name} takes {nargs} arguments; the benchmark passes 4", file=sys.stderr)
        return 2
    grid, block = (1 << 20,), (256,)
    ints = (0x7F0000001000, 0x7F0000002000, 0x7F0000003000, 1 << 20)
    objects = (Buffer(ints[0]), Buffer(ints[1]), Buffer(ints[2]), np.int32(1 << 20))
    buffer = bytearray(4096)
    floor = struct.Struct("<QQQi")
    cases = [
        ("pack, 3 ints + int",
         lambda: layout.pack(ints, grid=grid, block=block),
         lambda: layout._generic_pack(ints, grid=grid, block=block)),
        ("pack, 3 buffers + np.int32",
         lambda: layout.pack(objects, grid=grid, block=block),
         lambda: layout._generic_pack(objects, grid=grid, block=block)),
        ("pack_into bytearray",
         lambda: layout.pack_into(buffer, 64, objects, grid=grid, block=block),
         lambda: layout._generic_pack_into(buffer, 64, objects, grid=grid, block=block)),
    ]
    floor_us = per_call_us(lambda: floor.pack(*ints))
    rows = []
    for name, fast, generic in cases:
        rows += [(name, per_call_us(fast)), (f"{name} (generic)", per_call_us(generic))]
    compiled = _compiled_packer(layout)
    if compiled is not None:   # what Kernel.launch's compiled path writes (explicit bytes)
        for name, args in (("compiled pack, 3 ints + int", ints),
                           ("compiled pack, 3 buffers + np.int32", objects)):
            assert compiled.pack(args) == layout.pack(args, grid=grid, block=block)[
                :layout._explicit_end], name
            rows.append((name, per_call_us(lambda args=args: compiled.pack(args))))
    rows.append(("struct.pack of the 4 values (floor)", floor_us))
    print(f"{layout!r}  (Python {platform.python_version()}, {platform.machine()})")
    width = max(len(name) for name, _ in rows)
    for name, us in rows:
        print(f"  {name:<{width}}  {us:6.2f} us  {us / floor_us:5.1f}x floor")
    if opts.json:
        Path(opts.json).write_text(json.dumps({
            "benchmark": "kernargs", "layout": repr(layout),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "machine": platform.machine(), "python": platform.python_version(),
            "results_us": dict(rows)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
