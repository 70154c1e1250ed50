"""Which symbols a shared library really exports (a header may declare more)."""
from __future__ import annotations

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection


def exported_functions(path: str) -> set[str]:
    """Names of the defined, dynamically exported symbols of the ELF ``path``."""
    names: set[str] = set()
    with open(path, "rb") as f:
        elf = ELFFile(f)
        for section in elf.iter_sections():
            if not isinstance(section, SymbolTableSection) or section.name != ".dynsym":
                continue
            for sym in section.iter_symbols():
                if sym["st_shndx"] != "SHN_UNDEF" and sym.name:
                    names.add(sym.name.split("@")[0])
    return names
