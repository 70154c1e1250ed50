"""Clang offload bundles: ``__CLANG_OFFLOAD_BUNDLE__`` and compressed ``CCOB``.

An uncompressed bundle is::

    "__CLANG_OFFLOAD_BUNDLE__"  u64 entry count
    per entry: u64 offset, u64 size, u64 ID length, ID bytes
    entry data at the offsets (from the start of the bundle)

Entry IDs are ``<kind>-<triple>-<target ID>``, for instance
``hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`` or
``host-x86_64-unknown-linux``.

A compressed bundle (``clang-offload-bundler --compress``, ``hipcc
--offload-compress``) wraps one uncompressed bundle::

    "CCOB" u16 version, u16 method (0 zlib, 1 zstd),
    v2: u32 total file size   v3: u64 total file size
    v1/v2: u32 uncompressed size   v3: u64 uncompressed size
    u64 hash (truncated MD5 of the uncompressed bundle), compressed data

All integers are little-endian.  Every offset and size is checked against
the data before it is used, and decompression stops at `MAX_DECOMPRESSED`.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import List, Optional, Tuple

from .errors import CodeObjectError, InvalidTargetIdError
from .target import TargetId, parse_target_id

BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
#: Largest decompressed bundle accepted (bytes).
MAX_DECOMPRESSED = 1 << 30
_ENTRY_HEAD = struct.Struct("<QQQ")
_CCOB_HEADERS = {  # version -> (layout after magic+version+method, header size)
    1: (struct.Struct("<IQ"), 20),
    2: (struct.Struct("<IIQ"), 24),
    3: (struct.Struct("<QQQ"), 32),
}
_METHODS = {0: "zlib", 1: "zstd"}


@dataclass(frozen=True)
class BundleEntry:
    """One entry of an offload bundle.

    ``offset`` and ``size`` locate its data in the (decompressed) bundle;
    ``kind`` is the offload kind (``hipv4``, ``hip``, ``openmp``, ``host``);
    ``target`` is the parsed target ID for ``amdgcn`` entries, else None.
    """

    index: int
    id: str
    offset: int
    size: int
    kind: str
    target: Optional[TargetId]


def is_bundle(data: bytes) -> bool:
    """True when ``data`` starts like an uncompressed or compressed bundle."""
    return data[:len(BUNDLE_MAGIC)] == BUNDLE_MAGIC or data[:4] == COMPRESSED_MAGIC


def read_bundle(data: bytes) -> Tuple[bytes, List[BundleEntry]]:
    """Parse a bundle; return the uncompressed bundle bytes and its entries."""
    if data[:4] == COMPRESSED_MAGIC:
        data = decompress(data)
    if data[:len(BUNDLE_MAGIC)] != BUNDLE_MAGIC:
        raise CodeObjectError("not a clang offload bundle: missing "
                              "'__CLANG_OFFLOAD_BUNDLE__' magic at offset 0")
    return data, _entries(data)


def _entries(data: bytes) -> List[BundleEntry]:
    size = len(data)
    pos = len(BUNDLE_MAGIC)
    if size < pos + 8:
        raise CodeObjectError(f"truncated offload bundle: {size} bytes, header needs {pos + 8}")
    (count,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    room = (size - pos) // _ENTRY_HEAD.size
    if count > room:
        raise CodeObjectError(f"offload bundle header at offset {pos - 8} claims {count} "
                              f"entries; {size} bytes hold at most {room}")
    raw = []
    for i in range(count):
        if pos + _ENTRY_HEAD.size > size:
            raise CodeObjectError(f"offload bundle entry {i}: header at offset {pos} "
                                  f"runs past the end ({size} bytes)")
        offset, length, id_len = _ENTRY_HEAD.unpack_from(data, pos)
        pos += _ENTRY_HEAD.size
        if id_len > size - pos:
            raise CodeObjectError(f"offload bundle entry {i}: ID of {id_len} bytes at offset "
                                  f"{pos} runs past the end ({size} bytes)")
        try:
            entry_id = data[pos:pos + id_len].decode("ascii")
        except UnicodeDecodeError:
            raise CodeObjectError(f"offload bundle entry {i}: ID at offset {pos} "
                                  "is not ASCII") from None
        pos += id_len
        raw.append((i, entry_id, offset, length))
    header_end = pos
    for i, entry_id, offset, length in raw:
        if offset > size or length > size - offset:
            raise CodeObjectError(f"offload bundle entry {i} ({entry_id!r}): data at offset "
                                  f"{offset}, {length} bytes, runs past the end ({size} bytes)")
        if length and offset < header_end:
            raise CodeObjectError(f"offload bundle entry {i} ({entry_id!r}): data at offset "
                                  f"{offset} overlaps the bundle header (ends at {header_end})")
    used = sorted((offset, length, i) for i, _, offset, length in raw if length)
    for (off_a, len_a, a), (off_b, _, b) in zip(used, used[1:]):
        if off_a + len_a > off_b:
            raise CodeObjectError(f"offload bundle entries {a} and {b} overlap: "
                                  f"[{off_a}, {off_a + len_a}) and [{off_b}, ...)")
    return [_entry(i, entry_id, offset, length) for i, entry_id, offset, length in raw]


def _entry(index: int, entry_id: str, offset: int, size: int) -> BundleEntry:
    kind, _, rest = entry_id.partition("-")
    target = None
    if rest.startswith("amdgcn-"):
        try:
            target = parse_target_id(rest)
        except InvalidTargetIdError as exc:
            raise CodeObjectError(f"offload bundle entry {index} ({entry_id!r}): {exc}") from None
    return BundleEntry(index, entry_id, offset, size, kind, target)


def decompress(data: bytes) -> bytes:
    """Decompress a ``CCOB`` compressed bundle (versions 1 to 3)."""
    if len(data) < 8:
        raise CodeObjectError(f"truncated compressed bundle: {len(data)} bytes")
    version, method = struct.unpack_from("<HH", data, 4)
    if version not in _CCOB_HEADERS:
        raise CodeObjectError(f"compressed bundle: unsupported version {version} at offset 4 "
                              "(known: 1, 2, 3)")
    layout, header_size = _CCOB_HEADERS[version]
    if len(data) < header_size:
        raise CodeObjectError(f"truncated compressed bundle: {len(data)} bytes, "
                              f"version {version} header needs {header_size}")
    fields = layout.unpack_from(data, 8)
    end = len(data)
    if version >= 2:
        end = fields[0]
        if not header_size <= end <= len(data):
            raise CodeObjectError(f"compressed bundle: total size {end} at offset 8 does not "
                                  f"fit the data ({len(data)} bytes)")
    expected = fields[-2]
    if expected > MAX_DECOMPRESSED:
        raise CodeObjectError(f"compressed bundle: uncompressed size {expected} exceeds the "
                              f"limit of {MAX_DECOMPRESSED} bytes")
    if method not in _METHODS:
        raise CodeObjectError(f"compressed bundle: unknown compression method {method} "
                              "at offset 6 (0 zlib, 1 zstd)")
    payload = data[header_size:end]
    out = _inflate(method, payload, expected + 1)
    if len(out) != expected:
        raise CodeObjectError(f"compressed bundle: {_METHODS[method]} data decompresses to "
                              f"{len(out)}{'+' if len(out) > expected else ''} bytes, "
                              f"header says {expected}")
    return out


def _inflate(method: int, payload: bytes, limit: int) -> bytes:
    """Decompress at most ``limit`` bytes of ``payload``."""
    if method == 0:
        try:
            return zlib.decompressobj().decompress(payload, limit)
        except zlib.error as exc:
            raise CodeObjectError(f"compressed bundle: corrupt zlib data: {exc}") from None
    try:
        import zstandard
    except ImportError:
        raise CodeObjectError("compressed bundle uses zstd: install the 'zstandard' "
                              "package to read it") from None
    chunks, total = [], 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(payload) as reader:
            while total < limit:
                chunk = reader.read(limit - total)
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
    except zstandard.ZstdError as exc:
        raise CodeObjectError(f"compressed bundle: corrupt zstd data: {exc}") from None
    return b"".join(chunks)
