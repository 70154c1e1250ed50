"""The object symbols of a compiled code object, read with pyelftools (not rocpy's
reader): what ROCr's loader and hipamd's module loader make symbols and device
globals of.  Compilers add objects of their own (HIP 5.2's hipcc: three weak
``__HIP_Coordinates<...>::x``; clang 17: none), so tests count them here instead
of writing them down."""
from __future__ import annotations

import io


def object_symbols(elf: bytes) -> set[str]:
    """Defined global and weak ``STT_OBJECT`` symbols, from .symtab, else .dynsym
    (kernel descriptors ``*.kd`` included)."""
    from elftools.elf.elffile import ELFFile
    f = ELFFile(io.BytesIO(elf))
    table = f.get_section_by_name(".symtab") or f.get_section_by_name(".dynsym")
    return {s.name for s in table.iter_symbols()
            if s["st_info"]["type"] == "STT_OBJECT" and s["st_info"]["bind"] != "STB_LOCAL"
            and s["st_shndx"] not in ("SHN_UNDEF", "SHN_ABS")}


def variables(elf: bytes) -> set[str]:
    """The object symbols that are not kernel descriptors: the module's globals."""
    return {n for n in object_symbols(elf) if not n.endswith(".kd")}
