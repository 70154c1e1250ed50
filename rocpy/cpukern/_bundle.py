"""The combined file: a clang offload bundle holding GPU code objects and a CPU build.

Entries: the (empty) host entry hipcc writes, one ``hipv4-amdgcn-amd-amdhsa--<target id>``
entry per GPU code object, and the CPU build under `BUNDLE_ID`, a kind real
runtimes do not look for (hipamd and ROCr pick ``hipv4``/``hip`` amdgcn entries
by target; clang-offload-bundler lists it like any other).
"""
from __future__ import annotations

import struct
from collections.abc import Mapping

from ..codeobject.bundle import read_bundle

#: must equal ROCPY_CPUKERN_BUNDLE_ID in rocpy/_native/cpukern/rocpy_cpukern.h
BUNDLE_ID = "host-x86_64-unknown-linux-gnu-rocpycpu"
_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
_ALIGN = 4096


def write_bundle(entries: list[tuple[str, bytes]]) -> bytes:
    """An uncompressed offload bundle of ``(id, data)`` entries, data 4 KiB-aligned
    (an empty entry, like the host's, points just past the header or the entry before)."""
    head = len(_MAGIC) + 8 + sum(24 + len(i.encode()) for i, _ in entries)
    pos, offsets = head, []
    for _, data in entries:
        if data:
            pos = (pos + _ALIGN - 1) // _ALIGN * _ALIGN
        offsets.append(pos)    # never 0: clang-offload-bundler stops reading at an offset of 0
        pos += len(data)
    out = bytearray(_MAGIC + struct.pack("<Q", len(entries)))
    for (eid, data), off in zip(entries, offsets):
        b = eid.encode()
        out += struct.pack("<QQQ", off, len(data), len(b)) + b
    for (_, data), off in zip(entries, offsets):
        if data:
            out += b"\0" * (off - len(out)) + data
    return bytes(out)


def combine(cpu: bytes, gpu: Mapping[str, bytes]) -> bytes:
    """One file of the GPU code objects (target id -> ELF) and the CPU build ``cpu``."""
    if not isinstance(cpu, (bytes, bytearray)) or bytes(cpu[:4]) != b"\x7fELF":
        raise ValueError("cpu must be the bytes of a CPU build (an ELF shared object)")
    entries: list[tuple[str, bytes]] = [("host-x86_64-unknown-linux-gnu-", b"")]
    for target, elf in gpu.items():
        if bytes(elf[:4]) != b"\x7fELF":
            raise ValueError(f"gpu[{target!r}] is not an ELF code object")
        entries.append((f"hipv4-amdgcn-amd-amdhsa--{target}", bytes(elf)))
    entries.append((BUNDLE_ID, bytes(cpu)))
    return write_bundle(entries)


def cpu_build_of(data: bytes) -> bytes | None:
    """The CPU build a combined file carries, or None."""
    if not bytes(data[:len(_MAGIC)]) == _MAGIC:
        return None
    data, entries = read_bundle(bytes(data))
    for e in entries:
        if e.id == BUNDLE_ID:
            return bytes(data[e.offset:e.offset + e.size])
    return None


def carries_cpu_build(data: bytes) -> bool:
    """Whether ``data`` is a bundle with a CPU build entry (a cheap look at its entry table)."""
    if bytes(data[:len(_MAGIC)]) != _MAGIC:
        return False
    try:
        _, entries = read_bundle(bytes(data))
    except Exception:      # a malformed bundle: the loader reports it
        return False
    return any(e.id == BUNDLE_ID for e in entries)
