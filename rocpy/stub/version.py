"""Which ROCm release the stub runtime behaves as (``stub_version.c``).

The stub follows the release of the headers it was built against, or the one
``ROCPY_STUB_ROCM=<major>.<minor>`` names for both halves (read once, when the
stub first needs it).  The HIP half follows ``HIP_VERSION``, the HSA half the
HSA headers' own release (``HSA_AMD_INTERFACE_VERSION_MINOR``): the two differ
where a distribution pairs headers of two ROCm releases (Debian 13: HIP 5.7,
ROCr 6.1).  Behaviour that differs between releases is one row of the stub's
rules table each; :func:`rules` lists them.
"""
from __future__ import annotations

from typing import NamedTuple

from .control import _stub


class Rule(NamedTuple):
    """One behaviour change: what, from which release (until which, if it was
    undone: ``None`` when it still holds), where upstream."""
    name: str
    since: tuple[int, int]
    until: tuple[int, int] | None
    upstream: str
    active: bool          # in force for the emulated release


def _release(code: int) -> tuple[int, int]:
    return divmod(code, 100)


def rocm_version() -> tuple[int, int]:
    """The ROCm release the HIP half emulates, as ``(major, minor)``."""
    _, lib = _stub()
    return _release(lib.rocpy_stub_rocm_version())


def built_version() -> tuple[int, int]:
    """The release of the HIP headers the stub was compiled against."""
    _, lib = _stub()
    return _release(lib.rocpy_stub_rocm_built())


def hsa_version() -> tuple[int, int]:
    """The ROCm release the HSA half (ROCr) emulates, as ``(major, minor)``."""
    _, lib = _stub()
    return _release(lib.rocpy_stub_hsa_version())


def built_hsa_version() -> tuple[int, int]:
    """The release of the HSA headers the stub was compiled against."""
    _, lib = _stub()
    return _release(lib.rocpy_stub_hsa_built())


def rules() -> list[Rule]:
    """The stub's version-dependent rules, in table order."""
    ffi, lib = _stub()
    name, upstream = ffi.new("const char **"), ffi.new("const char **")
    since, until = ffi.new("int *"), ffi.new("int *")
    out = []
    for i in range(lib.rocpy_stub_rule_count()):
        lib.rocpy_stub_rule_info(i, name, since, until, upstream)
        out.append(Rule(ffi.string(name[0]).decode(), _release(since[0]),
                        _release(until[0]) if until[0] else None,
                        ffi.string(upstream[0]).decode(), bool(lib.rocpy_stub_rule_active(i))))
    return out
