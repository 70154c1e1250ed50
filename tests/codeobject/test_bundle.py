"""Offload bundles, plain and compressed, checked against clang-offload-bundler."""
from __future__ import annotations

import struct

import pytest

from rocpy.codeobject import CodeObjectError, load
from rocpy.codeobject.bundle import MAX_DECOMPRESSED

MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def test_entries_match_bundler_listing(artifacts, llvm):
    path = artifacts.get("hip-multi")
    f = load(path)
    assert f.format == "bundle"
    assert sorted(e.id for e in f.entries) == sorted(llvm.bundle_ids(path))
    host = [e for e in f.entries if e.kind == "host"]
    assert len(host) == 1 and host[0].size == 0 and host[0].target is None
    assert len(f.targets) == len(f.entries) - 1


def test_code_objects_match_unbundled(artifacts, llvm, tmp_path):
    path = artifacts.get("hip-multi")
    f = load(path)
    amd = [e for e in f.entries if e.target is not None]
    for i, entry in enumerate(amd):
        expected = llvm.unbundle(path, entry.id, tmp_path / f"{i}.o")
        co = f.code_object(i)
        assert co.data == expected
        assert co.target == entry.target, entry.id   # the ELF header agrees with the entry ID


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", [0, 1], ids=["zlib", "zstd"])
def test_compressed_bundle(artifacts, version, method, make_ccob):
    plain = artifacts.data("hip-multi")
    f = load(make_ccob(plain, version, method))
    assert f.format == "compressed-bundle"
    ref = load(plain)
    assert f.targets == ref.targets
    assert [e.id for e in f.entries] == [e.id for e in ref.entries]
    assert [c.data for c in f.code_objects] == [c.data for c in ref.code_objects]


def test_compressed_bundle_from_compiler(artifacts):
    path = artifacts.get("hip-compressed")   # skips where hipcc lacks --offload-compress
    f = load(path)
    assert f.format == "compressed-bundle"
    assert "vadd" in f.select("gfx90a:sramecc+:xnack-").kernels


def test_legacy_entry_kind_takes_target_from_elf(artifacts, make_bundle):
    elf = load(artifacts.get("cl-gfx90a-xnack-v3")).code_object(0).data
    f = load(make_bundle([("host-x86_64-unknown-linux", b""),
                          ("hip-amdgcn-amd-amdhsa-gfx90a", elf)]))
    (target,) = f.targets
    assert str(target) == "gfx90a:sramecc+:xnack+"


def test_load_from_path_and_bytes(artifacts):
    path = artifacts.get("hip-gfx90a")
    assert load(path).targets == load(str(path)).targets == load(path.read_bytes()).targets
    assert load(bytearray(path.read_bytes())).targets == load(memoryview(path.read_bytes())).targets
    with pytest.raises(TypeError, match="bytes or a path"):
        load(42)


# --- bad input -------------------------------------------------------------

@pytest.fixture(scope="module")
def elf(artifacts):
    return load(artifacts.get("hip-gfx90a")).code_object(0).data


def _entry_field(bundle, entry, field):
    """Offset of field (0 offset, 1 size, 2 ID length) of an entry in make_bundle output."""
    pos = len(MAGIC) + 8
    for _ in range(entry):
        pos += 24 + struct.unpack_from("<Q", bundle, pos + 16)[0]
    return pos + 8 * field


def _patch(data, offset, fmt, value):
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize("data,problem", [
    (b"", "not a code object"),
    (b"\x00" * 64, "not a code object"),
    (b"PK\x03\x04 a zip file", "not a code object"),
    (MAGIC + b"\x01\x00", "truncated offload bundle"),
    (MAGIC + struct.pack("<Q", 1 << 40), "claims 1099511627776 entries"),
    (b"CCOB\x01", "truncated compressed bundle"),
])
def test_bad_containers(data, problem):
    with pytest.raises(CodeObjectError, match=problem):
        load(data)


def test_bundle_entry_out_of_range(elf, make_bundle):
    bundle = make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", elf)])
    bad = _patch(bundle, _entry_field(bundle, 0, 0), "<Q", len(bundle) - 100)
    with pytest.raises(CodeObjectError, match=r"entry 0 .*runs past the end"):
        load(bad)
    bad = _patch(bundle, _entry_field(bundle, 0, 1), "<Q", 1 << 62)
    with pytest.raises(CodeObjectError, match=r"entry 0 .*runs past the end"):
        load(bad)


def test_bundle_entry_id_out_of_range(elf, make_bundle):
    bundle = make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", elf)])
    bad = _patch(bundle, _entry_field(bundle, 0, 2), "<Q", 1 << 50)
    with pytest.raises(CodeObjectError, match=r"entry 0: ID of \d+ bytes .*runs past the end"):
        load(bad)


def test_bundle_entries_overlap(elf, make_bundle):
    bundle = make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", elf),
                          ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", elf)])
    first = struct.unpack_from("<Q", bundle, _entry_field(bundle, 0, 0))[0]
    bad = _patch(bundle, _entry_field(bundle, 1, 0), "<Q", first + 8)
    with pytest.raises(CodeObjectError, match="entries 0 and 1 overlap"):
        load(bad)


def test_bundle_entry_overlapping_header(elf, make_bundle):
    bundle = make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", elf)])
    bad = _patch(bundle, _entry_field(bundle, 0, 0), "<Q", 8)
    with pytest.raises(CodeObjectError, match="overlaps the bundle header"):
        load(bad)


def test_bundle_entry_with_bad_target_id(elf, make_bundle):
    with pytest.raises(CodeObjectError, match=r"entry 0 .*gfx90a:xnack\?"):
        load(make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack?", elf)]))


def test_bundle_entry_not_elf(make_bundle):
    f = load(make_bundle([("hipv4-amdgcn-amd-amdhsa--gfx90a", b"not an elf at all" * 8)]))
    with pytest.raises(CodeObjectError, match=r"entry 0 .*not an ELF file"):
        f.code_object(0)


@pytest.mark.parametrize("mutate,problem", [
    (lambda c: c[:4] + struct.pack("<H", 9) + c[6:], "unsupported version 9"),
    (lambda c: c[:6] + struct.pack("<H", 7) + c[8:], "unknown compression method 7"),
    (lambda c: c[:8] + struct.pack("<Q", 1 << 40) + c[16:], r"total size \d+ at offset 8"),
    (lambda c: c[:16] + struct.pack("<Q", 1 << 40) + c[24:], "exceeds the limit"),
    (lambda c: c[:40] + b"\xff" * 16 + c[56:], "corrupt zstd data"),
    (lambda c: c[:16] + struct.pack("<Q", 100) + c[24:], "header says 100"),
])
def test_bad_compressed_bundle(artifacts, mutate, problem, make_ccob):
    ccob = make_ccob(artifacts.data("hip-gfx90a"), version=3, method=1)
    with pytest.raises(CodeObjectError, match=problem):
        load(mutate(ccob))


def test_compressed_bundle_truncated_zlib(artifacts, make_ccob):
    ccob = make_ccob(artifacts.data("hip-gfx90a"), version=1, method=0)
    with pytest.raises(CodeObjectError, match="decompresses to"):
        load(ccob[:len(ccob) // 2])
    with pytest.raises(CodeObjectError, match="exceeds the limit"):
        load(make_ccob(b"x", version=3, method=0, size=MAX_DECOMPRESSED + 1))
