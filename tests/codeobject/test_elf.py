"""ELF code objects: header, metadata, symbols and descriptors, checked against LLVM's tools."""
from __future__ import annotations

import dataclasses
import re
from typing import Dict, Optional

import pytest

from rocpy.codeobject import CodeObjectError, KernelArg, KernelInfo, load
from rocpy.codeobject.target import MACH_NAMES, SRAMECC_PROCESSORS, XNACK_PROCESSORS

# (artifact, index of the code object in it)
ELVES = [("hip-gfx90a", 0), ("hip-gfx908", 0), ("hip-gfx1030", 0), ("hip-gfx940", 0),
         ("hip-v4", 0), ("hip-v5", 0), ("hip-multi", 0), ("hip-multi", 1), ("cl-gfx1100-v5", 0),
         ("cl-gfx90a-v4", 0), ("cl-gfx90a-xnack-v3", 0), ("cl-gfx1030-v3", 0)]
REQUESTED_VERSION = {"hip-v4": 4, "hip-v5": 5, "cl-gfx1100-v5": 5, "cl-gfx90a-v4": 4,
                     "cl-gfx90a-xnack-v3": 3, "cl-gfx1030-v3": 3}

_KERNEL_KEYS = {f.name for f in dataclasses.fields(KernelInfo)} - {"args", "raw"}
_ARG_KEYS = {f.name for f in dataclasses.fields(KernelArg)} - {"index", "align"}


def amdhsa_directives(assembly: str) -> Dict[str, Dict[str, int]]:
    """Per kernel: ``.amdhsa_*`` directive values, plus ``SGPRBlocks``/``VGPRBlocks`` comments."""
    kernels: Dict[str, Dict[str, int]] = {}
    current: Optional[Dict[str, int]] = None
    for line in assembly.splitlines():
        text = line.strip()
        if text.startswith(".amdhsa_kernel "):
            current = kernels.setdefault(text.split()[1], {})
        elif text.startswith(".amdhsa_") and current is not None:
            name, value = text.split()[:2]
            current[name[len(".amdhsa_"):]] = int(value, 0)
        elif current is not None and re.match(r"; [SV]GPRBlocks: \d+", text):
            key, value = text[2:].split(": ")
            current[key] = int(value)
    return kernels


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _code_object(artifacts, name, index):
    f = load(artifacts.get(name))
    if index >= len(f.targets):
        pytest.skip(f"{name} has {len(f.targets)} code objects")
    return f.code_object(index)


@pytest.mark.parametrize("name,index", ELVES)
def test_metadata_matches_readelf(artifacts, llvm, elf_path, name, index):
    co = _code_object(artifacts, name, index)
    expected = llvm.metadata(elf_path(name, index))
    assert co.metadata.raw == expected
    assert list(co.metadata.version) == expected["amdhsa.version"]
    assert co.metadata.target == expected.get("amdhsa.target")
    assert len(co.kernels) == len(expected["amdhsa.kernels"])
    compared = 0
    for raw in expected["amdhsa.kernels"]:
        kernel = co.kernels[raw[".name"]]
        for key, value in raw.items():
            if key[1:] in _KERNEL_KEYS:
                assert _plain(getattr(kernel, key[1:])) == value, (kernel.name, key)
                compared += 1
        args = sorted(kernel.args + kernel.hidden_args, key=lambda a: a.index)
        assert len(args) == len(raw.get(".args", []))
        for arg, raw_arg in zip(args, raw.get(".args", [])):
            for key, value in raw_arg.items():
                assert key[1:] in _ARG_KEYS, f"unparsed argument field {key}"
                assert getattr(arg, key[1:]) == value, (kernel.name, arg.index, key)
                compared += 1
            assert arg.offset % arg.align == 0 and arg.size % arg.align == 0
    assert compared > 20


@pytest.mark.parametrize("name,index", ELVES)
def test_header_matches_readobj(artifacts, llvm, elf_path, name, index):
    co = _code_object(artifacts, name, index)
    abi, flags = llvm.header_flags(elf_path(name, index))
    assert co.code_object_version == abi + 2
    if name in REQUESTED_VERSION:
        assert co.code_object_version == REQUESTED_VERSION[name]
    mach = next(f for f in flags if f.startswith("EF_AMDGPU_MACH_AMDGCN_"))
    processor = mach[len("EF_AMDGPU_MACH_AMDGCN_"):].lower().replace("_", "-")
    assert co.target.processor == processor
    assert processor in MACH_NAMES.values()
    for feature, supported in (("xnack", XNACK_PROCESSORS), ("sramecc", SRAMECC_PROCESSORS)):
        tag = f"EF_AMDGPU_FEATURE_{feature.upper()}"
        if co.code_object_version == 3:
            want = (f"{tag}_V3" in flags) if processor in supported else None
        else:
            want = {f"{tag}_ON_V4": True, f"{tag}_OFF_V4": False}.get(
                next((f for f in flags if f.startswith(tag)), ""))
        assert getattr(co.target, feature) == want, feature


@pytest.mark.parametrize("name,index", ELVES)
def test_symbols_match_readelf(artifacts, llvm, elf_path, name, index):
    co = _code_object(artifacts, name, index)
    rows = llvm.symbols(elf_path(name, index))
    mine = [(s.name, s.value, s.size, s.type, s.binding, s.visibility, s.section_index)
            for s in co.symbols]
    assert sorted(mine) == sorted(rows)
    by_name = {s.name: s for s in co.symbols}
    for kernel in co.kernels.values():
        kd = by_name[kernel.symbol]
        assert (kd.type, kd.size) == ("OBJECT", 64)
        code = by_name[kernel.name]
        assert code.type == "FUNC"
        assert kernel.descriptor_address == kd.value
        assert kd.value + kernel.descriptor.kernel_code_entry_byte_offset == code.value
    assert not any(v.endswith(".kd") for v in co.variables)


def test_variables(artifacts):
    co = load(artifacts.get("hip-gfx90a")).code_object(0)
    assert co.variables["table"].size == 16 * 4
    assert co.variables["table"].type == "OBJECT"


@pytest.mark.parametrize("name,index", ELVES)
def test_descriptor_agrees_with_metadata(artifacts, name, index):
    co = _code_object(artifacts, name, index)
    for k in co.kernels.values():
        kd = k.descriptor
        assert kd.group_segment_fixed_size == k.group_segment_fixed_size
        assert kd.private_segment_fixed_size == k.private_segment_fixed_size
        assert kd.kernarg_size == k.kernarg_segment_size
        assert kd.wavefront_size == k.wavefront_size
        if k.uses_dynamic_stack is not None:
            assert kd.uses_dynamic_stack == k.uses_dynamic_stack


@pytest.mark.parametrize("asm,binary", [("hip-v5.s", "hip-v5"), ("hip-gfx1030.s", "hip-gfx1030")])
def test_descriptor_matches_assembler_directives(artifacts, asm, binary):
    directives = amdhsa_directives(artifacts.get(asm).read_text())
    co = load(artifacts.get(binary)).code_object(0)
    assert set(directives) == set(co.kernels)
    aliases = {"system_sgpr_private_segment_wavefront_offset": "enable_private_segment",
               "SGPRBlocks": "granulated_wavefront_sgpr_count",
               "VGPRBlocks": "granulated_workitem_vgpr_count"}
    for name, wanted in directives.items():
        fields = co.kernels[name].descriptor.fields
        compared = 0
        for directive, value in wanted.items():
            key = aliases.get(directive, directive)
            if key in fields:
                assert fields[key] == value, (name, directive)
                compared += 1
        assert compared >= 30, (name, sorted(set(wanted) - set(fields)))


def test_code_object_v2_is_refused(artifacts):
    with pytest.raises(CodeObjectError, match="code object v2 is not supported"):
        load(artifacts.get("cl-gfx900-v2"))


def test_wave32_and_names_from_opencl(artifacts):
    co = load(artifacts.get("cl-gfx1100-v5")).select("gfx1100")
    clk = co.kernels["clk"]
    assert clk.wavefront_size == 32 and clk.descriptor.fields["wavefront_size32"] == 1
    by_name = {a.name: a for a in clk.args}
    assert by_name["a"].is_const and by_name["a"].is_restrict and by_name["a"].access == "read_only"
    assert by_name["vol"].is_volatile
    assert by_name["tmp"].value_kind == "dynamic_shared_pointer"
    assert by_name["tmp"].pointee_align == 4
    assert by_name["v4"].align == 16 and by_name["s"].align == 8
    assert [a.value_kind for a in co.kernels["wide"].hidden_args][:3] == [
        "hidden_block_count_x", "hidden_block_count_y", "hidden_block_count_z"]
