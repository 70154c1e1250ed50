"""`load`: open a file of AMDGPU code and pick the code object for a device."""
from __future__ import annotations

import os
import threading
from typing import Dict, List, Tuple, Union

from .bundle import COMPRESSED_MAGIC, BundleEntry, is_bundle, read_bundle
from .elf import CodeObject, read_header
from .errors import CodeObjectError, NoMatchingTargetError
from .target import TargetId, parse_target_id, select_target

#: Offload kinds whose entry ID may not carry the full target ID; ROCm reads
#: the target from the ELF header for these.
_LEGACY_KINDS = ("hip", "hcc")


class CodeObjectFile:
    """A clang offload bundle (plain or compressed) or a bare ELF code object.

    ``format`` is ``"bundle"``, ``"compressed-bundle"`` or ``"elf"``;
    ``entries`` lists every bundle entry (host entries included; empty for a
    bare ELF); ``targets`` the target IDs of the AMDGPU code objects, in file
    order.  `select` returns the `CodeObject` for a device.  A bare ELF is
    parsed at once; bundle entries are parsed on first use, then kept.
    """

    def __init__(self, data: bytes, source: str = "<bytes>") -> None:
        self.source = source
        self._lock = threading.Lock()
        self._parsed: Dict[int, CodeObject] = {}
        self.entries: Tuple[BundleEntry, ...] = ()
        data = bytes(data)
        if is_bundle(data):
            self.format = "compressed-bundle" if data[:4] == COMPRESSED_MAGIC else "bundle"
            self._data, entries = read_bundle(data)
            self.entries = tuple(entries)
            self._slots = [self._slot(e) for e in entries if e.target is not None and e.size]
        elif data[:4] == b"\x7fELF":
            self.format = "elf"
            self._data = data
            self._parsed[0] = CodeObject(data, source)  # the only one: parse it now
            self._slots = [(self._parsed[0].target, source, 0, len(data))]
        else:
            raise CodeObjectError(f"{source}: not a code object: expected "
                                  "'__CLANG_OFFLOAD_BUNDLE__', 'CCOB' or ELF magic at offset 0, "
                                  f"found {data[:8]!r}")
        self.targets: Tuple[TargetId, ...] = tuple(slot[0] for slot in self._slots)

    def __repr__(self) -> str:
        targets = [str(t) for t in self.targets]
        return f"<CodeObjectFile {self.source} {self.format} targets={targets}>"

    def _slot(self, entry: BundleEntry) -> Tuple[TargetId, str, int, int]:
        where = f"{self.source} entry {entry.index} ({entry.id})"
        target = entry.target
        if entry.kind in _LEGACY_KINDS:
            target = read_header(self._data[entry.offset:entry.offset + entry.size], where).target
        assert target is not None  # the caller passes only entries with a target
        return target, where, entry.offset, entry.size

    def code_object(self, index: int) -> CodeObject:
        """The code object for ``targets[index]``."""
        with self._lock:
            if index not in self._parsed:
                _, where, offset, size = self._slots[index]
                self._parsed[index] = CodeObject(self._data[offset:offset + size], where)
            return self._parsed[index]

    @property
    def code_objects(self) -> List[CodeObject]:
        """Every AMDGPU code object in the file, parsed."""
        return [self.code_object(i) for i in range(len(self._slots))]

    def find(self, device: Union[str, TargetId]) -> int:
        """Index in `targets` of the code object that runs on ``device``.

        ``device`` is a target ID such as ``gfx90a:sramecc+:xnack-``.
        Matching follows ROCm (see `TargetId.matches`): the first code object
        for the device's processor whose specified features agree, else the
        first matching generic one.  Raises `NoMatchingTargetError`, listing
        what the file contains, when none does.
        """
        dev = device if isinstance(device, TargetId) else parse_target_id(device)
        index = select_target(self.targets, dev)
        if index is None:
            raise NoMatchingTargetError(str(dev), [str(t) for t in self.targets], self.source)
        return index

    def select(self, device: Union[str, TargetId]) -> CodeObject:
        """The `CodeObject` that runs on ``device`` (see `find`)."""
        return self.code_object(self.find(device))


def load(data_or_path: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]
         ) -> CodeObjectFile:
    """Open a bundle or ELF code object from bytes or from a file path."""
    if isinstance(data_or_path, (bytes, bytearray, memoryview)):
        return CodeObjectFile(bytes(data_or_path))
    if isinstance(data_or_path, (str, os.PathLike)):
        path = os.fspath(data_or_path)
        with open(path, "rb") as f:
            return CodeObjectFile(f.read(), path)
    raise TypeError(f"load() takes bytes or a path, not {type(data_or_path).__name__}")
