"""AMDGPU ELF code objects: header, target, symbols, metadata note, kernel descriptors.

The header's ``e_flags`` carry the processor (``EF_AMDGPU_MACH``) and the
``xnack``/``sramecc`` settings, encoded one way for code object v3 (one bit
each: on, or off where the processor supports the feature) and another for v4
and later (two bits each: unsupported, any, off, on); ``EI_ABIVERSION`` gives
the code object version (1 -> v3, 2 -> v4, 3 -> v5, 4 -> v6).

pyelftools walks sections and symbols; before it reads anything, the section
and program header tables and every section's extent are checked against the
file length, so a corrupt file raises `CodeObjectError`, never an over-read.
"""
from __future__ import annotations

import contextlib
import io
import struct
from dataclasses import dataclass, replace
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from elftools.common.exceptions import ELFError
from elftools.construct import ConstructError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from . import descriptor as _kd
from .errors import CodeObjectError
from .metadata import CodeObjectMetadata, KernelInfo, parse_metadata
from .target import MACH_NAMES, SRAMECC_PROCESSORS, XNACK_PROCESSORS, TargetId

EM_AMDGPU = 224
ELFOSABI_AMDGPU_HSA = 64
NT_AMDGPU_METADATA = 32
#: EI_ABIVERSION -> code object version, for ELFOSABI_AMDGPU_HSA.
CODE_OBJECT_VERSIONS = {1: 3, 2: 4, 3: 5, 4: 6}

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_PHDR = struct.Struct("<IIQQQQQQ")
_NOTE = struct.Struct("<III")
_SHT_NOTE, _SHT_NOBITS, _SHT_SYMTAB, _SHT_DYNSYM = 7, 8, 2, 11
_PT_NOTE = 4
_OSABI_NAMES = {0: "System V", 65: "AMDGPU PAL", 66: "AMDGPU Mesa3D"}


class _Section(NamedTuple):
    """A raw ELF64 section header."""

    name: int
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    addralign: int
    entsize: int


@dataclass(frozen=True)
class Symbol:
    """An ELF symbol.

    ``type`` is ``FUNC``, ``OBJECT`` ...; ``binding`` ``GLOBAL``, ``WEAK`` or
    ``LOCAL``; ``section`` and ``section_index`` are None for undefined and
    absolute symbols.
    """

    name: str
    value: int
    size: int
    type: str
    binding: str
    visibility: str
    section: Optional[str]
    section_index: Optional[int]


@dataclass(frozen=True)
class ElfHeader:
    """What `read_header` finds: target, code object version and raw ``e_flags``."""

    target: TargetId
    code_object_version: int
    e_flags: int


def _feature_v4(flags: int, shift: int) -> Optional[bool]:
    """Two-bit v4+ feature field: 0 unsupported, 1 any -> None; 2 off; 3 on."""
    return {2: False, 3: True}.get((flags >> shift) & 3)


def read_header(data: bytes, where: str = "ELF") -> ElfHeader:
    """Check the ELF header of an AMDHSA code object and decode its target."""
    if len(data) < _EHDR.size:
        raise CodeObjectError(f"{where}: truncated ELF header ({len(data)} bytes, need 64)")
    ident, _type, machine, _version, _entry, _phoff, _shoff, flags, *_ = _EHDR.unpack_from(data)
    if ident[:4] != b"\x7fELF":
        raise CodeObjectError(f"{where}: not an ELF file (magic {ident[:4]!r} at offset 0)")
    if ident[4] != 2 or ident[5] != 1:
        raise CodeObjectError(f"{where}: not a 64-bit little-endian ELF (EI_CLASS {ident[4]}, "
                              f"EI_DATA {ident[5]})")
    if machine != EM_AMDGPU:
        raise CodeObjectError(f"{where}: not an AMDGPU code object (e_machine {machine}, "
                              f"expected EM_AMDGPU {EM_AMDGPU})")
    osabi, abiversion = ident[7], ident[8]
    if osabi != ELFOSABI_AMDGPU_HSA:
        raise CodeObjectError(f"{where}: OS ABI {osabi} ({_OSABI_NAMES.get(osabi, 'unknown')}) "
                              "is not supported; only AMDHSA (64)")
    if abiversion not in CODE_OBJECT_VERSIONS:
        detail = "code object v2 is not supported (v3 and later are)" if abiversion == 0 \
            else "unknown code object version"
        raise CodeObjectError(f"{where}: EI_ABIVERSION {abiversion}: {detail}")
    version = CODE_OBJECT_VERSIONS[abiversion]
    processor = MACH_NAMES.get(flags & 0xFF)
    if processor is None:
        raise CodeObjectError(f"{where}: unknown processor EF_AMDGPU_MACH {flags & 0xFF:#x} "
                              f"in e_flags {flags:#x}")
    if version == 3:
        sramecc = bool(flags & 0x200) if processor in SRAMECC_PROCESSORS else None
        xnack = bool(flags & 0x100) if processor in XNACK_PROCESSORS else None
    else:
        sramecc, xnack = _feature_v4(flags, 10), _feature_v4(flags, 8)
    return ElfHeader(TargetId(processor, sramecc, xnack), version, flags)


class CodeObject:
    """One AMDGPU ELF code object (code object v3 to v6).

    Attributes: ``data`` (the ELF bytes), ``target`` (`TargetId` from
    ``e_flags``), ``code_object_version``, ``e_flags``, ``metadata``
    (`CodeObjectMetadata`), ``kernels`` (name -> `KernelInfo` with its
    kernel descriptor), ``symbols`` (every `Symbol` of ``.symtab``, else
    ``.dynsym``) and ``variables`` (global and weak data objects other than
    kernel descriptors, by name).  Raises `CodeObjectError` for anything that
    cannot be read.
    """

    def __init__(self, data: bytes, source: str = "<bytes>") -> None:
        self.data: bytes = bytes(data)
        self.source = source
        header = read_header(self.data, source)
        self.target: TargetId = header.target
        self.code_object_version: int = header.code_object_version
        self.e_flags: int = header.e_flags
        self._sections = _section_headers(self.data, source)
        with _elf_errors(source):
            elf = ELFFile(io.BytesIO(self.data))
            self._names = [s.name for s in elf.iter_sections()]
            self.symbols: tuple[Symbol, ...] = tuple(_symbols(elf, self._names, self._sections))
        self.metadata: CodeObjectMetadata = parse_metadata(
            self._metadata_note(), f"{source}: NT_AMDGPU_METADATA")
        self.variables: Dict[str, Symbol] = {
            s.name: s for s in self.symbols
            if s.type == "OBJECT" and s.binding in ("GLOBAL", "WEAK") and s.section
            and not s.name.endswith(".kd")}
        by_name: Dict[str, Symbol] = {}
        for sym in self.symbols:
            by_name.setdefault(sym.name, sym)
        self.kernels: Dict[str, KernelInfo] = {k.name: self._with_descriptor(k, by_name)
                                               for k in self.metadata.kernels}

    def __repr__(self) -> str:
        return (f"<CodeObject {self.target} v{self.code_object_version} "
                f"kernels={sorted(self.kernels)}>")

    def _metadata_note(self) -> bytes:
        for name, desc in self._notes():
            if name == b"AMDGPU" and desc[0] == NT_AMDGPU_METADATA:
                return desc[1]
        raise CodeObjectError(f"{self.source}: no NT_AMDGPU_METADATA note (type "
                              f"{NT_AMDGPU_METADATA}, owner 'AMDGPU') in the ELF")

    def _notes(self) -> Iterator[Tuple[bytes, Tuple[int, bytes]]]:
        regions = [(sh.offset, sh.size, 8 if sh.addralign == 8 else 4)
                   for sh in self._sections if sh.type == _SHT_NOTE]
        if not self._sections:
            regions = [(off, size, 8 if align == 8 else 4)
                       for off, size, align in _note_segments(self.data, self.source)]
        for offset, size, align in regions:
            yield from _parse_notes(self.data, offset, size, align, self.source)

    def _with_descriptor(self, kernel: KernelInfo, symbols: Dict[str, Symbol]) -> KernelInfo:
        where = f"{self.source}: kernel {kernel.name!r}"
        sym = symbols.get(kernel.symbol)
        if sym is None:
            raise CodeObjectError(f"{where}: descriptor symbol {kernel.symbol!r} not found")
        section = None if sym.section_index is None else self._sections[sym.section_index]
        if section is None or section.type == _SHT_NOBITS:
            raise CodeObjectError(f"{where}: {kernel.symbol!r} is not in a section with data")
        start = sym.value - section.addr
        if not 0 <= start <= section.size - _kd.SIZE:
            raise CodeObjectError(f"{where}: {kernel.symbol!r} at {sym.value:#x} lies outside "
                                  f"its section {sym.section!r}")
        raw = self.data[section.offset + start:section.offset + start + _kd.SIZE]
        kd = _kd.KernelDescriptor.from_bytes(raw, self.target.processor)
        return replace(kernel, descriptor=kd, descriptor_address=sym.value)


@contextlib.contextmanager
def _elf_errors(where: str) -> Iterator[None]:
    """Turn pyelftools' failures on corrupt input into `CodeObjectError`."""
    try:
        yield
    except CodeObjectError:
        raise
    except (ELFError, ConstructError, struct.error, ValueError, IndexError, KeyError,
            UnicodeDecodeError, ZeroDivisionError, OverflowError, AssertionError) as exc:
        raise CodeObjectError(f"{where}: corrupt ELF ({type(exc).__name__}: {exc})") from None


def _section_headers(data: bytes, where: str) -> List[_Section]:
    """Raw section headers, each checked to lie inside ``data``."""
    fields = _EHDR.unpack_from(data)
    phoff, shoff = fields[5], fields[6]
    phentsize, phnum, shentsize, shnum, shstrndx = fields[9:14]
    if phnum and (phentsize != _PHDR.size or phoff + phnum * _PHDR.size > len(data)):
        raise CodeObjectError(f"{where}: program header table ({phnum} x {phentsize} bytes at "
                              f"offset {phoff}) does not fit the file ({len(data)} bytes)")
    if not shoff:
        return []
    if shentsize != _SHDR.size or not shnum or shoff + shnum * _SHDR.size > len(data):
        raise CodeObjectError(f"{where}: section header table ({shnum} x {shentsize} bytes at "
                              f"offset {shoff}) does not fit the file ({len(data)} bytes)")
    if shstrndx >= shnum:
        raise CodeObjectError(f"{where}: section name table index {shstrndx} is not below "
                              f"the section count {shnum}")
    headers = [_Section(*_SHDR.unpack_from(data, shoff + i * _SHDR.size)) for i in range(shnum)]
    for i, sh in enumerate(headers):
        if sh.type != _SHT_NOBITS and (sh.offset > len(data) or sh.size > len(data) - sh.offset):
            raise CodeObjectError(f"{where}: section {i} ({sh.size} bytes at offset {sh.offset}) "
                                  f"runs past the end of the file ({len(data)} bytes)")
        if sh.type in (_SHT_SYMTAB, _SHT_DYNSYM) and (sh.entsize != 24 or sh.link >= shnum):
            raise CodeObjectError(f"{where}: symbol table section {i} has entry size "
                                  f"{sh.entsize} (expected 24) or string table index {sh.link}")
    return headers


def _note_segments(data: bytes, where: str) -> Iterator[Tuple[int, int, int]]:
    fields = _EHDR.unpack_from(data)
    phoff, phnum = fields[5], fields[10]
    for i in range(phnum):
        p_type, _fl, offset, _va, _pa, filesz, _mem, align = _PHDR.unpack_from(
            data, phoff + i * _PHDR.size)
        if p_type == _PT_NOTE:
            if offset > len(data) or filesz > len(data) - offset:
                raise CodeObjectError(f"{where}: note segment {i} ({filesz} bytes at offset "
                                      f"{offset}) runs past the end of the file")
            yield offset, filesz, align


def _parse_notes(data: bytes, offset: int, size: int, align: int,
                 where: str) -> Iterator[Tuple[bytes, Tuple[int, bytes]]]:
    """Yield (owner name, (type, descriptor)) for each note in a region."""
    pos, end = offset, offset + size
    while pos + _NOTE.size <= end:
        namesz, descsz, ntype = _NOTE.unpack_from(data, pos)
        name_at = pos + _NOTE.size
        desc_at = name_at + -(-namesz // align) * align
        next_at = desc_at + -(-descsz // align) * align
        if desc_at + descsz > end:
            raise CodeObjectError(f"{where}: note at offset {pos} (name {namesz} bytes, "
                                  f"descriptor {descsz} bytes) runs past its section, which "
                                  f"ends at offset {end}")
        yield data[name_at:name_at + namesz].rstrip(b"\0"), (ntype, data[desc_at:desc_at + descsz])
        pos = next_at


def _symbols(elf: ELFFile, names: List[str], sections: List[_Section]) -> Iterator[Symbol]:
    tables = [s for s in elf.iter_sections() if isinstance(s, SymbolTableSection)]
    preferred = [t for t in tables if t.header["sh_type"] == "SHT_SYMTAB"] or tables
    for table in preferred[:1]:
        for sym in table.iter_symbols():
            if not sym.name:
                continue
            shndx = sym["st_shndx"]
            index = shndx if isinstance(shndx, int) and shndx < len(sections) else None
            yield Symbol(sym.name, sym["st_value"], sym["st_size"],
                         _label(sym["st_info"]["type"], "STT_"),
                         _label(sym["st_info"]["bind"], "STB_"),
                         _label(sym["st_other"]["visibility"], "STV_"),
                         None if index is None else names[index], index)


def _label(value: object, prefix: str) -> str:
    """``STT_FUNC`` -> ``FUNC``; pyelftools gives unknown values as numbers."""
    text = str(value)
    return text[len(prefix):] if text.startswith(prefix) else text
