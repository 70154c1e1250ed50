"""Corrupt ELF code objects and metadata: `CodeObjectError` naming the problem, never a crash."""
from __future__ import annotations

import copy
import struct

import msgpack
import pytest

from rocpy.codeobject import CodeObjectError, load
from rocpy.codeobject.metadata import MAX_KERNARG_SIZE, parse_metadata

SHT_NOTE, SHT_SYMTAB = 7, 2


@pytest.fixture(scope="module")
def elf(artifacts):
    """A real gfx90a code object (v5, with argument names)."""
    return load(artifacts.get("hip-v5")).code_object(0).data


def sections(data):
    """(index, header offset, sh_type, sh_offset, sh_size) for each section."""
    shoff, = struct.unpack_from("<Q", data, 40)
    shnum, = struct.unpack_from("<H", data, 60)
    out = []
    for i in range(shnum):
        at = shoff + 64 * i
        sh_type, = struct.unpack_from("<I", data, at + 4)
        offset, size = struct.unpack_from("<QQ", data, at + 24)
        out.append((i, at, sh_type, offset, size))
    return out


def patch(data, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def note_offset(data):
    return next(off for _, _, t, off, _ in sections(data) if t == SHT_NOTE)


def raises(data, problem):
    with pytest.raises(CodeObjectError, match=problem) as info:
        load(data)
    return info.value


def test_truncated_elf(elf):
    raises(elf[:40], r"truncated ELF header \(40 bytes")
    raises(elf[:len(elf) // 2], "runs past the end of the file|does not fit the file")


@pytest.mark.parametrize("offset,fmt,value,problem", [
    (4, "B", 1, "not a 64-bit little-endian ELF"),
    (18, "<H", 62, r"not an AMDGPU code object \(e_machine 62"),
    (7, "B", 65, r"OS ABI 65 \(AMDGPU PAL\) is not supported"),
    (8, "B", 0, "EI_ABIVERSION 0: code object v2 is not supported"),
    (8, "B", 9, "EI_ABIVERSION 9: unknown code object version"),
    (48, "<I", 0xEE, "unknown processor EF_AMDGPU_MACH 0xee"),
    (40, "<Q", 1 << 60, "section header table .* does not fit the file"),
    (58, "<H", 40, "section header table .* does not fit"),
    (62, "<H", 999, "section name table index 999"),
    (32, "<Q", 1 << 61, "program header table .* does not fit the file"),
])
def test_bad_header(elf, offset, fmt, value, problem):
    raises(patch(elf, offset, fmt, value), problem)


def test_section_out_of_range(elf):
    index, at, *_ = sections(elf)[2]
    raises(patch(elf, at + 24, "<Q", len(elf) - 4), rf"section {index} \(\d+ bytes at offset "
                                                     rf"{len(elf) - 4}\) runs past the end")
    raises(patch(elf, at + 32, "<Q", 1 << 62), rf"section {index} .* runs past the end")


def test_symbol_table_with_bad_entry_size(elf):
    index, at, *_ = next(s for s in sections(elf) if s[2] == SHT_SYMTAB)
    raises(patch(elf, at + 56, "<Q", 0), rf"symbol table section {index} has entry size 0")


def test_missing_metadata_note(elf):
    raises(patch(elf, note_offset(elf) + 8, "<I", 33),
           r"no NT_AMDGPU_METADATA note \(type 32, owner 'AMDGPU'\)")


def test_note_running_past_its_section(elf):
    at = note_offset(elf)
    raises(patch(elf, at + 4, "<I", 0xFFFFFFF0), rf"note at offset {at} .* runs past its section")


def test_malformed_msgpack(elf):
    raises(patch(elf, note_offset(elf) + 20, "B", 0xC1), "NT_AMDGPU_METADATA: malformed msgpack")


def test_missing_descriptor_symbol(elf):
    raises(elf.replace(b"vadd.kd\0", b"vadd.kX\0"),
           r"kernel 'vadd': descriptor symbol 'vadd.kd' not found")


def test_descriptor_outside_its_section(elf):
    from elftools.elf.elffile import ELFFile
    import io
    symtab = ELFFile(io.BytesIO(elf)).get_section_by_name(".symtab")
    index = next(i for i, s in enumerate(symtab.iter_symbols()) if s.name == "vadd.kd")
    entry = symtab["sh_offset"] + 24 * index
    raises(patch(elf, entry + 8, "<Q", 1 << 40), r"'vadd.kd' at 0x10000000000 lies outside")
    raises(patch(elf, entry + 6, "<H", 0), r"'vadd.kd' is not in a section with data")


# --- metadata --------------------------------------------------------------

@pytest.fixture(scope="module")
def doc(elf):
    return load(elf).code_object(0).metadata.raw


def _parse(doc, edit):
    changed = copy.deepcopy(doc)
    edit(changed)
    return parse_metadata(msgpack.packb(changed), "note")


def _kernel(d, name="vadd"):
    return next(k for k in d["amdhsa.kernels"] if k[".name"] == name)


@pytest.mark.parametrize("edit,problem", [
    (lambda d: _kernel(d).update({".kernarg_segment_size": 1 << 40}),
     rf"kernel 'vadd': .kernarg_segment_size is 1099511627776, outside 0..{MAX_KERNARG_SIZE}"),
    (lambda d: _kernel(d).update({".group_segment_fixed_size": -1}), "outside 0.."),
    (lambda d: _kernel(d).update({".kernarg_segment_align": 3}), "3 is not a power of two"),
    (lambda d: _kernel(d).pop(".wavefront_size"), "kernel 'vadd': missing .wavefront_size"),
    (lambda d: _kernel(d).pop(".name"), r"amdhsa.kernels\[0\]: missing .name"),
    (lambda d: _kernel(d)[".args"][0].update({".size": "8"}),
     r"kernel 'vadd': .args\[0\] \('a'\): .size is '8', expected an integer"),
    (lambda d: _kernel(d)[".args"][3].update({".offset": 4096}),
     r".args\[3\] \('n'\): 4 bytes at offset 4096 run past the kernarg segment \(288 bytes\)"),
    (lambda d: _kernel(d)[".args"][0].pop(".value_kind"),
     r".args\[0\] \('a'\): missing .value_kind"),
    (lambda d: _kernel(d).update({".args": {"x": 1}}), ".args is {'x': 1}, expected a list"),
    (lambda d: d.update({"amdhsa.kernels": [5]}), r"amdhsa.kernels\[0\] is 5, expected dict"),
    (lambda d: d.pop("amdhsa.version"), "missing amdhsa.version"),
    (lambda d: d.update({"amdhsa.printf": [1]}), r"amdhsa.printf\[0\] is 1, expected str"),
])
def test_bad_metadata_values(doc, edit, problem):
    with pytest.raises(CodeObjectError, match=problem):
        _parse(doc, edit)


@pytest.mark.parametrize("blob,problem", [
    (b"", "malformed msgpack"),
    (b"\x81\xa1a", "malformed msgpack"),                  # truncated map
    (msgpack.packb({"a": 1}) + b"junk", "malformed msgpack .*ExtraData"),
    (b"\xdd\xff\xff\xff\xff", "malformed msgpack"),       # array of 4G items, no data
    (b"\x91" * 100_000, "malformed msgpack"),             # nesting too deep
    (msgpack.packb([1, 2]), "expected a map, found list"),
    (msgpack.packb({"amdhsa.version": [1, 2], "amdhsa.kernels": [{}]}), "missing .name"),
])
def test_bad_metadata_encoding(blob, problem):
    with pytest.raises(CodeObjectError, match=problem):
        parse_metadata(blob, "note")


def test_metadata_layout_overlap(doc, elf):
    def overlap(d):
        _kernel(d)[".args"][1][".offset"] = 4
    meta = _parse(doc, overlap)
    vadd = next(k for k in meta.kernels if k.name == "vadd")
    with pytest.raises(CodeObjectError, match="overlaps the previous one"):
        _ = vadd.layout
