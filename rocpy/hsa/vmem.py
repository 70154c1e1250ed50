"""Virtual memory: reserved address ranges, physical memory, mappings, per-agent access.

::

    va = hsa.AddressRange(1 << 21)                   # hsa_amd_vmem_address_reserve
    mem = hsa.PhysicalMemory(gpu_pool, 1 << 21)      # hsa_amd_vmem_handle_create
    m = va.map(mem)                                  # hsa_amd_vmem_map (no access yet)
    m.set_access({gpu: "rw", cpu: "ro"})             # hsa_amd_vmem_set_access
    m.access(gpu)                                    # hsa_amd_vmem_get_access -> 'rw'
    m.close(); mem.close(); va.close()               # unmap, handle release, address free

The calls exist from ROCm 6.0's hsa_ext_amd.h; built against older headers
every object raises `NotSupportedError` naming the missing function.  A
`Mapping` holds its range and its memory (closing them first waits for the
mapping: ROCr refuses to free a range still mapped, and keeps released
memory until it is unmapped).  Access is per mapping; ``'none'`` removes it.
On the stub a mapping is host memory (a memfd): a GPU's permission is what
its kernels and copy engines check; the CPU's is recorded but not enforced
(the stub's GPUs are CPU threads that need the pages).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping as MappingType
from typing import TYPE_CHECKING, Any

from .. import _args
from .._handle import Handle
from ..errors import hsa_error
from . import _features
from ._common import agent_handle, api

if TYPE_CHECKING:
    from .agent import Agent
    from .memory import Pool
    from .runtime import Runtime

_PERMS = {"none": "HSA_ACCESS_PERMISSION_NONE", "ro": "HSA_ACCESS_PERMISSION_RO",
          "wo": "HSA_ACCESS_PERMISSION_WO", "rw": "HSA_ACCESS_PERMISSION_RW"}


def _vh(handle: int) -> Any:
    """An hsa_amd_vmem_alloc_handle_t (passed by value)."""
    ffi, _ = api()
    return ffi.new("hsa_amd_vmem_alloc_handle_t *", {"handle": handle})[0]


def _call(name: str, *args: Any) -> None:
    st = _features.function(name)(*args)
    if st:
        raise hsa_error(st, name)


def _memory_type(name: str) -> int:
    """An ``hsa_amd_memory_type_t`` value by name (ROCm 6 headers on; older ones lack it)."""
    _, lib = api()
    value: int = getattr(lib, name)
    return value


def _free_range(lib: Any, va: Any, size: int) -> None:
    st = lib.hsa_amd_vmem_address_free(va, size)
    if st:
        raise hsa_error(st, "hsa_amd_vmem_address_free")


def _release_handle(lib: Any, handle: int) -> None:
    st = lib.hsa_amd_vmem_handle_release(_vh(handle))
    if st:
        raise hsa_error(st, "hsa_amd_vmem_handle_release")


def _unmap(lib: Any, va: Any, size: int) -> None:
    st = lib.hsa_amd_vmem_unmap(va, size)
    if st:
        raise hsa_error(st, "hsa_amd_vmem_unmap")


class AddressRange(Handle):
    """Reserved virtual addresses (hsa_amd_vmem_address_reserve[_align]), freed at release.

    ``address``: where it should be (0: anywhere; ROCr takes another place
    when that one is taken), ``alignment``: a power of two (0: a page).
    """

    def __init__(self, size: int, *, address: int = 0, alignment: int = 0,
                 runtime: Runtime | None = None) -> None:
        from .runtime import Runtime
        _features.function("hsa_amd_vmem_address_reserve")
        ffi, lib = api()
        size = _args.unsigned(size, 64, "size")
        if not size:
            raise ValueError("size must be positive")
        address = _args.unsigned(address, 64, "address")
        alignment = _args.unsigned(alignment, 64, "alignment")
        if alignment & (alignment - 1):
            raise ValueError(f"alignment must be a power of two, not {alignment}")
        runtime = runtime or Runtime.current()
        out = ffi.new("void **")
        if alignment:
            _call("hsa_amd_vmem_address_reserve_align", out, size, address, alignment, 0)
        else:
            _call("hsa_amd_vmem_address_reserve", out, size, address, 0)
        self.size = size
        self.runtime = runtime
        super().__init__(int(ffi.cast("uintptr_t", out[0])), (_free_range, lib, out[0], size),
                         parents=(runtime,))

    @property
    def address(self) -> int:
        """The range's first address."""
        result: int = self._require_open()
        return result

    def map(self, memory: PhysicalMemory, *, offset: int = 0, size: int | None = None) -> Mapping:
        """Map `memory` at ``address + offset`` (hsa_amd_vmem_map); no agent may access it yet."""
        return Mapping(self, memory, offset=offset, size=size)

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"{self._h:#x}"
        return f"<hsa.AddressRange {state} {self.size} bytes>"


class PhysicalMemory(Handle):
    """Memory of a GPU pool with no address (hsa_amd_vmem_handle_create), released at release.

    ``size`` must be whole pages of the pool (its allocation granule);
    ``pinned`` asks MEMORY_TYPE_PINNED.
    """

    def __init__(self, pool: Pool, size: int, *, pinned: bool = False,
                 _imported: int | None = None) -> None:
        from .memory import Pool
        _features.function("hsa_amd_vmem_handle_create")
        ffi, lib = api()
        if not isinstance(pool, Pool):
            raise TypeError(f"pool must be an hsa.Pool, not {type(pool).__name__}")
        size = _args.unsigned(size, 64, "size")
        if _imported is None:
            if not size:
                raise ValueError("size must be positive")
            out = ffi.new("hsa_amd_vmem_alloc_handle_t *")
            kind = _memory_type("MEMORY_TYPE_PINNED" if pinned else "MEMORY_TYPE_NONE")
            _call("hsa_amd_vmem_handle_create", pool._require_open(), size,
                  kind, 0, out)
            handle = int(out.handle)
        else:
            handle = _imported
        self.pool = pool
        self.size = size
        self.pinned: bool = bool(pinned)
        super().__init__(handle, (_release_handle, lib, handle), parents=(pool.agent.runtime,))

    def export(self) -> int:
        """A file descriptor sharing this memory (hsa_amd_vmem_export_shareable_handle);
        the caller owns it (``os.close``)."""
        ffi, _ = api()
        fd = ffi.new("int *")
        _call("hsa_amd_vmem_export_shareable_handle", fd, _vh(self._require_open()), 0)
        return int(fd[0])

    @classmethod
    def import_fd(cls, fd: int, runtime: Runtime | None = None) -> PhysicalMemory:
        """The memory `fd` (from `export`) shares (hsa_amd_vmem_import_shareable_handle);
        `fd` stays the caller's."""
        from .runtime import Runtime
        ffi, lib = api()
        _features.function("hsa_amd_vmem_import_shareable_handle")
        fd = _args.integer(fd, "fd", 0, (1 << 31) - 1)
        out = ffi.new("hsa_amd_vmem_alloc_handle_t *")
        _call("hsa_amd_vmem_import_shareable_handle", fd, out)
        handle = int(out.handle)
        pool_out = ffi.new("hsa_amd_memory_pool_t *")
        kind = ffi.new("hsa_amd_memory_type_t *")
        st = _features.function("hsa_amd_vmem_get_alloc_properties_from_handle")(out[0], pool_out, kind)
        if st:
            _features.function("hsa_amd_vmem_handle_release")(out[0])
            raise hsa_error(st, "hsa_amd_vmem_get_alloc_properties_from_handle")
        runtime = runtime or Runtime.current()
        pool = next((p for a in runtime._listed_agents() for p in a.pools()
                     if p._require_open().handle == pool_out.handle), None)
        if pool is None:
            _features.function("hsa_amd_vmem_handle_release")(out[0])
            raise RuntimeError("the imported memory's pool is not one of this runtime's")
        size = os.fstat(fd).st_size
        return cls(pool, size, pinned=int(kind[0]) == _memory_type("MEMORY_TYPE_PINNED"), _imported=handle)

    def __repr__(self) -> str:
        state = "closed " if self._h is None else ""
        return f"<hsa.PhysicalMemory {state}{self.size} bytes of {self.pool!r}>"


class Mapping(Handle):
    """`PhysicalMemory` mapped into an `AddressRange` (hsa_amd_vmem_map), unmapped at release."""

    def __init__(self, where: AddressRange, memory: PhysicalMemory, *, offset: int = 0,
                 size: int | None = None) -> None:
        _features.function("hsa_amd_vmem_map")
        ffi, lib = api()
        if not isinstance(where, AddressRange):
            raise TypeError(f"the range must be an hsa.AddressRange, not {type(where).__name__}")
        if not isinstance(memory, PhysicalMemory):
            raise TypeError(f"memory must be an hsa.PhysicalMemory, not {type(memory).__name__}")
        base = where._require_open()
        handle = memory._require_open()
        offset = _args.unsigned(offset, 64, "offset")
        size = memory.size if size is None else _args.unsigned(size, 64, "size")
        if not size:
            raise ValueError("size must be positive")
        if offset + size > where.size:
            raise ValueError(f"offset {offset} + size {size} is past the range's {where.size} bytes")
        va = ffi.cast("void *", base + offset)
        _call("hsa_amd_vmem_map", va, size, 0, _vh(handle), 0)
        self.size = size
        self.range = where
        self.memory = memory
        super().__init__(base + offset, (_unmap, lib, va, size), parents=(where, memory))

    @property
    def address(self) -> int:
        """Where the memory is mapped."""
        result: int = self._require_open()
        return result

    # the property's getter itself (mypy reads a property in its class body as a method)
    __int__: Callable[[Mapping], int] = address.fget  # type: ignore[attr-defined]
    __index__: Callable[[Mapping], int] = address.fget  # type: ignore[attr-defined]

    def set_access(self, access: MappingType[Agent, str] | Iterable[Agent], perm: str = "rw") -> None:
        """Grant agents access (hsa_amd_vmem_set_access): ``{agent: 'rw'|'ro'|'wo'|'none'}``,
        or a list of agents and one permission."""
        ffi, lib = api()
        va = self._require_open()
        pairs = list(access.items()) if isinstance(access, MappingType) else \
            [(a, perm) for a in access]
        if not pairs:
            raise ValueError("set_access needs at least one agent")
        desc = ffi.new("hsa_amd_memory_access_desc_t[]", len(pairs))
        for i, (agent, p) in enumerate(pairs):
            if p not in _PERMS:
                raise ValueError(f"permission must be one of {tuple(_PERMS)}, not {p!r}")
            desc[i].agent_handle = agent_handle(agent, "each agent")
            desc[i].permissions = getattr(lib, _PERMS[p])
        _call("hsa_amd_vmem_set_access", ffi.cast("void *", va), self.size, desc, len(pairs))

    def access(self, agent: Agent) -> str:
        """The GPU agent's permission here (hsa_amd_vmem_get_access): 'none', 'ro', 'wo', 'rw'."""
        ffi, lib = api()
        va = self._require_open()
        out = ffi.new("hsa_access_permission_t *")
        _call("hsa_amd_vmem_get_access", ffi.cast("void *", va), out,
              agent_handle(agent, "agent"))
        return next(k for k, c in _PERMS.items() if getattr(lib, c) == out[0])

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"{self._h:#x}"
        return f"<hsa.Mapping {state} {self.size} bytes>"
