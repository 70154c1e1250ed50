"""Fuzz the readers with mutated real code objects: only `CodeObjectError` may come out.

Mutations (byte flips, stored words, truncation, splices, insertions) aim at
the places where sizes and offsets live: ELF, section and program headers,
the metadata note, symbol tables, bundle and CCOB headers.  The example
budget keeps the whole module under about 20 s.
"""
from __future__ import annotations

import struct

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from rocpy.codeobject import CodeObjectError, argconv, load  # noqa: E402

EXAMPLES = 700
WORDS = [0, 1, 7, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 40, (1 << 64) - 1]


def hotspots(data: bytes) -> list:
    """Offsets of headers and tables inside ``data`` (an ELF, bundle or CCOB)."""
    spots = [0, 24, 32]
    elf_at = data.find(b"\x7fELF")
    while elf_at >= 0:
        spots += [elf_at, elf_at + 32, elf_at + 40, elf_at + 48, elf_at + 56]
        try:
            shoff, = struct.unpack_from("<Q", data, elf_at + 40)
            shnum, = struct.unpack_from("<H", data, elf_at + 60)
            for i in range(min(shnum, 64)):
                header = elf_at + shoff + 64 * i
                offset, = struct.unpack_from("<Q", data, header + 24)
                spots += [header, header + 24, header + 32, header + 56, elf_at + offset]
        except struct.error:
            pass  # a "\x7fELF" whose tables lie past the end: aim at what was found so far
        elf_at = data.find(b"\x7fELF", elf_at + 1)
    for marker in (b"amdhsa.kernels", b".args", b".kernarg_segment_size", b".kd\0", b".offset"):
        at = data.find(marker)
        if at >= 0:
            spots.append(at)
    return sorted({s for s in spots if 0 <= s < len(data)})


def mutations(size: int, spots: list):
    position = st.one_of(st.integers(0, size - 1),
                         st.builds(lambda s, d: min(max(s + d, 0), size - 1),
                                   st.sampled_from(spots), st.integers(-16, 80)))
    word = st.tuples(st.sampled_from(WORDS + [-1]), st.sampled_from([1, 2, 4, 8]))
    one = st.one_of(
        st.tuples(st.just("flip"), position, st.integers(1, 255)),
        st.tuples(st.just("word"), position, word),
        st.tuples(st.just("truncate"), position),
        st.tuples(st.just("splice"), position, position, st.integers(1, 256)),
        st.tuples(st.just("insert"), position, st.binary(min_size=1, max_size=24)),
    )
    return st.lists(one, min_size=1, max_size=4)


def mutate(data: bytes, ops) -> bytes:
    out = bytearray(data)
    for op in ops:
        if not out:
            break
        at = min(op[1], len(out) - 1)
        if op[0] == "flip":
            out[at] ^= op[2]
        elif op[0] == "word":
            value, width = op[2]
            out[at:at + width] = (value % (1 << (8 * width))).to_bytes(width, "little")
        elif op[0] == "truncate":
            del out[at:]
        elif op[0] == "splice":
            src = min(op[2], len(out) - 1)
            out[at:at + op[3]] = out[src:src + op[3]]
        else:
            out[at:at] = op[2]
    return bytes(out)


def exercise(data: bytes) -> int | None:
    """Read everything a user can reach; pack arguments for every kernel.

    Returns how many kernels were packed, or None when the reader refused
    ``data`` with `CodeObjectError`, the one error allowed; any other raises.
    """
    packed = 0
    try:
        f = load(data)
        [str(t) for t in f.targets]
        for co in f.code_objects:
            for kernel in co.kernels.values():
                if kernel.descriptor is not None:
                    assert kernel.descriptor.fields["kernarg_size"] >= 0
                args = [0 if argconv.slot(p).what in ("pointer", "integer", "float")
                        else bytes(p.size) for p in kernel.layout.params]
                blob = kernel.layout.pack(args, grid=(64, 2), block=(32, 2))
                assert len(blob) == kernel.kernarg_segment_size
                packed += 1
    except CodeObjectError:
        return None
    return packed


@pytest.fixture(scope="module")
def seeds(artifacts, make_ccob):
    bundle = artifacts.data("hip-v5")
    return {
        "elf": load(bundle).code_object(0).data,
        "bundle": bundle,
        "ccob": make_ccob(artifacts.data("hip-gfx90a"), version=2, method=0),
        "opencl": load(artifacts.get("cl-gfx1100-v5")).code_object(0).data,
    }


@pytest.mark.parametrize("seed", ["elf", "bundle", "opencl", "ccob"])
def test_mutated_inputs_raise_only_code_object_error(seeds, seed):
    data = seeds[seed]
    # the unmutated seed reads cleanly and has kernels: mutations start from a valid input
    assert exercise(data), f"the {seed} seed does not read cleanly"

    @settings(max_examples=EXAMPLES if seed != "ccob" else EXAMPLES // 4, deadline=None,
              suppress_health_check=list(HealthCheck), database=None)
    @given(mutations(len(data), hotspots(data)))
    def check(ops):
        exercise(mutate(data, ops))

    check()
