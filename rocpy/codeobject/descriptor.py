"""The 64-byte AMDHSA kernel descriptor found at each kernel's ``.kd`` symbol.

Layout (LLVM AMDGPUUsage, "Kernel Descriptor")::

    0  u32 group_segment_fixed_size     4  u32 private_segment_fixed_size
    8  u32 kernarg_size                16  i64 kernel_code_entry_byte_offset
    44 u32 compute_pgm_rsrc3           48  u32 compute_pgm_rsrc1
    52 u32 compute_pgm_rsrc2           56  u16 kernel_code_properties
    58 u16 kernarg_preload

`KernelDescriptor.fields` decodes the bit fields under the names of the
assembler's ``.amdhsa_*`` directives, for the processor's generation.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Dict, Tuple

from .errors import CodeObjectError

SIZE = 64
_LAYOUT = struct.Struct("<IIIIq20xIIIHH4x")

# (name, first bit, width, first generation, last generation); generations
# are the gfx major versions: 6 to 8 (GCN), 9, 10, 11, 12.
_Field = Tuple[str, int, int, int, int]
_RSRC1: Tuple[_Field, ...] = (
    ("granulated_workitem_vgpr_count", 0, 6, 6, 99),
    ("granulated_wavefront_sgpr_count", 6, 4, 6, 99),
    ("priority", 10, 2, 6, 99),
    ("float_round_mode_32", 12, 2, 6, 99),
    ("float_round_mode_16_64", 14, 2, 6, 99),
    ("float_denorm_mode_32", 16, 2, 6, 99),
    ("float_denorm_mode_16_64", 18, 2, 6, 99),
    ("priv", 20, 1, 6, 99),
    ("dx10_clamp", 21, 1, 6, 11),
    ("debug_mode", 22, 1, 6, 99),
    ("ieee_mode", 23, 1, 6, 11),
    ("bulky", 24, 1, 6, 99),
    ("cdbg_user", 25, 1, 6, 99),
    ("fp16_overflow", 26, 1, 9, 99),
    ("workgroup_processor_mode", 29, 1, 10, 99),
    ("memory_ordered", 30, 1, 10, 99),
    ("forward_progress", 31, 1, 10, 99),
)
_RSRC2: Tuple[_Field, ...] = (
    ("enable_private_segment", 0, 1, 6, 99),
    ("user_sgpr_count", 1, 5, 6, 99),
    ("enable_trap_handler", 6, 1, 6, 99),
    ("system_sgpr_workgroup_id_x", 7, 1, 6, 99),
    ("system_sgpr_workgroup_id_y", 8, 1, 6, 99),
    ("system_sgpr_workgroup_id_z", 9, 1, 6, 99),
    ("system_sgpr_workgroup_info", 10, 1, 6, 99),
    ("system_vgpr_workitem_id", 11, 2, 6, 99),
    ("exception_address_watch", 13, 1, 6, 99),
    ("exception_memory", 14, 1, 6, 99),
    ("granulated_lds_size", 15, 9, 6, 99),
    ("exception_fp_ieee_invalid_op", 24, 1, 6, 99),
    ("exception_fp_denorm_src", 25, 1, 6, 99),
    ("exception_fp_ieee_div_zero", 26, 1, 6, 99),
    ("exception_fp_ieee_overflow", 27, 1, 6, 99),
    ("exception_fp_ieee_underflow", 28, 1, 6, 99),
    ("exception_fp_ieee_inexact", 29, 1, 6, 99),
    ("exception_int_div_zero", 30, 1, 6, 99),
)
_PROPERTIES: Tuple[_Field, ...] = (
    ("user_sgpr_private_segment_buffer", 0, 1, 6, 99),
    ("user_sgpr_dispatch_ptr", 1, 1, 6, 99),
    ("user_sgpr_queue_ptr", 2, 1, 6, 99),
    ("user_sgpr_kernarg_segment_ptr", 3, 1, 6, 99),
    ("user_sgpr_dispatch_id", 4, 1, 6, 99),
    ("user_sgpr_flat_scratch_init", 5, 1, 6, 99),
    ("user_sgpr_private_segment_size", 6, 1, 6, 99),
    ("wavefront_size32", 10, 1, 10, 99),
    ("uses_dynamic_stack", 11, 1, 6, 99),
)
_PRELOAD: Tuple[_Field, ...] = (
    ("user_sgpr_kernarg_preload_length", 0, 7, 9, 99),
    ("user_sgpr_kernarg_preload_offset", 7, 9, 9, 99),
)
# compute_pgm_rsrc3 differs by processor: accumulation VGPRs on gfx90a/gfx94x/gfx950.
_RSRC3_ACCUM = (("tg_split", 16, 1, 9, 9),)
_RSRC3_GFX10 = (("shared_vgpr_count", 0, 4, 10, 11),)


def generation(processor: str) -> int:
    """The gfx major version of a processor name: ``gfx90a`` -> 9, ``gfx1100`` -> 11."""
    rest = processor[3:]
    if rest.endswith("-generic"):  # gfx9-4-generic, gfx10-3-generic
        return int(rest.split("-")[0])
    return int(rest[:-2])


def has_accumulation_vgprs(processor: str) -> bool:
    """True for processors with AGPRs in the unified VGPR file (gfx90a, gfx94x, gfx950)."""
    return processor in ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx9-4-generic")


@dataclass(frozen=True)
class KernelDescriptor:
    """A decoded kernel descriptor; ``processor`` selects the bit-field meanings."""

    group_segment_fixed_size: int
    private_segment_fixed_size: int
    kernarg_size: int
    kernel_code_entry_byte_offset: int
    compute_pgm_rsrc1: int
    compute_pgm_rsrc2: int
    compute_pgm_rsrc3: int
    kernel_code_properties: int
    kernarg_preload: int
    processor: str

    @classmethod
    def from_bytes(cls, data: bytes, processor: str) -> "KernelDescriptor":
        """Decode 64 bytes; ``processor`` is the code object's (``gfx90a``)."""
        if len(data) != SIZE:
            raise CodeObjectError(f"kernel descriptor needs {SIZE} bytes, got {len(data)}")
        (group, private, kernarg, _reserved, entry, rsrc3, rsrc1, rsrc2, props,
         preload) = _LAYOUT.unpack(data)
        return cls(group, private, kernarg, entry, rsrc1, rsrc2, rsrc3, props, preload,
                   processor)

    @property
    def wavefront_size(self) -> int:
        """32 or 64, from ``kernel_code_properties``."""
        return 32 if self.kernel_code_properties & (1 << 10) else 64

    @property
    def uses_dynamic_stack(self) -> bool:
        """Whether the kernel needs a dynamically sized stack."""
        return bool(self.kernel_code_properties & (1 << 11))

    @property
    def fields(self) -> Dict[str, int]:
        """Every bit field, named as the ``.amdhsa_*`` assembler directives."""
        gen = generation(self.processor)
        out: Dict[str, int] = {
            "group_segment_fixed_size": self.group_segment_fixed_size,
            "private_segment_fixed_size": self.private_segment_fixed_size,
            "kernarg_size": self.kernarg_size,
        }
        rsrc3: Tuple[_Field, ...] = ()
        if has_accumulation_vgprs(self.processor):
            out["accum_offset"] = ((self.compute_pgm_rsrc3 & 0x3F) + 1) * 4
            rsrc3 = _RSRC3_ACCUM
        elif gen >= 10:
            rsrc3 = _RSRC3_GFX10
        for value, table in ((self.compute_pgm_rsrc1, _RSRC1), (self.compute_pgm_rsrc2, _RSRC2),
                             (self.compute_pgm_rsrc3, rsrc3),
                             (self.kernel_code_properties, _PROPERTIES),
                             (self.kernarg_preload, _PRELOAD)):
            for name, shift, width, first, last in table:
                if first <= gen <= last:
                    out[name] = (value >> shift) & ((1 << width) - 1)
        return out
