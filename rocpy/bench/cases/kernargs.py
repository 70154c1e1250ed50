"""Kernel argument packing (`rocpy.codeobject.KernargLayout`), no device involved.

The layout is ``vadd(const float*, const float*, float*, int)`` as clang lays
it out for code object v5: four explicit arguments and the hidden block
count, group size, remainder, offset and grid-dims slots in a 288-byte
segment.  Each case times, interleaved: ``rocpy`` (the public methods:
the packer generated for the layout), ``generic`` (one converter call per
argument, `KernargLayout._generic_pack`, the reference the generated packer
must equal), ``compiled`` (what `Kernel.launch`'s compiled path writes:
``rocpy._hot.Launcher.pack``, explicit bytes only; where the extension is
built) and ``struct.pack`` of the four values (the floor, the reference).
Every variant's bytes are checked against the generic packer's first.
"""
from __future__ import annotations

import struct
from typing import Any

from ..harness import Case
from . import Bench, Env

OPS = 1000
VADD_TYPES = ("float*", "float*", "float*", "int")
V5_VADD = [(0, 8, "global_buffer"), (8, 8, "global_buffer"), (16, 8, "global_buffer"),
           (24, 4, "by_value"),
           (32, 4, "hidden_block_count_x"), (36, 4, "hidden_block_count_y"),
           (40, 4, "hidden_block_count_z"), (44, 2, "hidden_group_size_x"),
           (46, 2, "hidden_group_size_y"), (48, 2, "hidden_group_size_z"),
           (50, 2, "hidden_remainder_x"), (52, 2, "hidden_remainder_y"),
           (54, 2, "hidden_remainder_z"), (72, 8, "hidden_global_offset_x"),
           (80, 8, "hidden_global_offset_y"), (88, 8, "hidden_global_offset_z"),
           (96, 2, "hidden_grid_dims"), (112, 8, "hidden_hostcall_buffer")]


class FakeBuffer:
    """Stands in for a device buffer: an integer ``.ptr`` (the packer's pointer route)."""

    def __init__(self, ptr: int) -> None:
        self.ptr = ptr


def _loop(fn: Any, ops: int, *args: Any, **kwargs: Any) -> Any:
    def run() -> None:
        for _ in range(ops):
            fn(*args, **kwargs)
    return run


def compiled_packer(layout: Any) -> Any:
    """``rocpy._hot.Launcher`` over ``layout`` (pack only: no function to launch), or
    None where the extension is not built.  `FakeBuffer` takes the ``.ptr`` route."""
    from rocpy import _hotpath
    from rocpy.codeobject.argconv import _POINTER_TYPES
    from rocpy.hip._launch_plan import _param_spec
    hot = _hotpath.module()
    if hot is None:
        return None
    return hot.Launcher(0, 0, 0, layout.size, layout._explicit_end, (0, 0, 0),
                        _param_spec(layout), None, _POINTER_TYPES, frozenset(), None, None)


def build(env: Env) -> list[Bench]:
    import numpy as np

    from rocpy.codeobject import KernargLayout
    ops = OPS if not env.plan.quick else OPS // 10
    layout = KernargLayout.from_params(V5_VADD, size=288, name="vadd", types=VADD_TYPES)
    grid, block = (1 << 20,), (256,)
    ints = (0x7F0000001000, 0x7F0000002000, 0x7F0000003000, 1 << 20)
    objects = (FakeBuffer(ints[0]), FakeBuffer(ints[1]), FakeBuffer(ints[2]), np.int32(1 << 20))
    floor = struct.Struct("<QQQi")
    compiled = compiled_packer(layout)
    end = layout._explicit_end
    benches = []
    for label, args in (("3 ints + int", ints), ("3 buffers + np.int32", objects)):
        want = layout._generic_pack(args, grid=grid, block=block)
        if layout.pack(args, grid=grid, block=block) != want:
            raise RuntimeError(f"the generated packer differs from the generic one ({label})")
        variants = {
            "struct.pack": _loop(floor.pack, ops, *ints),
            "rocpy": _loop(layout.pack, ops, args, grid=grid, block=block),
            "generic": _loop(layout._generic_pack, ops, args, grid=grid, block=block),
        }
        if compiled is not None:
            if compiled.pack(args) != want[:end]:
                raise RuntimeError(f"the compiled packer differs from the generic one ({label})")
            variants["compiled"] = _loop(compiled.pack, ops, args)
        benches.append(Bench(Case(f"pack, {label}", variants, reference="struct.pack", ops=ops),
                             "kernargs", "latency", {"calls": ops, "per": "pack",
                                                     "layout": repr(layout)},
                             title=f"KernargLayout.pack({label}) vs struct.pack"))
    buffer = bytearray(4096)
    benches.append(Bench(Case("pack_into bytearray", {
        "struct.pack": _loop(floor.pack_into, ops, buffer, 64, *ints),
        "rocpy": _loop(layout.pack_into, ops, buffer, 64, objects, grid=grid, block=block),
        "generic": _loop(layout._generic_pack_into, ops, buffer, 64, objects, grid=grid,
                         block=block),
    }, reference="struct.pack", ops=ops), "kernargs", "latency",
        {"calls": ops, "per": "pack", "layout": repr(layout)},
        title="KernargLayout.pack_into(bytearray) vs struct.pack_into"))
    return benches
