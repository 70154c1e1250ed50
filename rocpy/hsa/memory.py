"""Memory: pools and regions, and the `Buffer`\\ s allocated from them.

::

    pool = gpu.pools(segment="global", fine_grained=False)[0]
    buf = pool.allocate(1 << 20)            # hsa_amd_memory_pool_allocate; freed at release
    buf.allow_access([cpu])                  # hsa_amd_agents_allow_access
    host = cpu.pools(kernarg=False, fine_grained=True)[0].allocate(1 << 20)
    host.numpy(np.float32)[:] = 1            # zero-copy view: the CPU may access it

Copies and fills are in `rocpy.hsa.transfer`, locked host memory in
`rocpy.hsa.locked`.

A Buffer holds its pool (which holds its agent, which holds the Runtime).
`Buffer.numpy` refuses memory the CPU may not access: coarse-grained GPU
memory always (copy it instead), fine-grained GPU memory until the CPU agent
was granted access.  Views keep the memory: a `close()` while views live
frees it after the last one; queued work does not keep it (close a buffer
only when no queued work uses it).
"""
from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import _args
from .._handle import Handle
from .._hostview import HostView
from ..errors import RocpyError, hsa_error
from ._address import Addressed
from ._common import Fixed, agent_handle, api, enum_name, flag_names, read_info, unsigned

if TYPE_CHECKING:
    from .agent import Agent, PoolAccess

_FLAGS = (("kernarg", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT"),
          ("fine_grained", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED"),
          ("coarse_grained", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED"),
          ("extended_scope_fine_grained", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED"))
_REGION_FLAGS = (("kernarg", "HSA_REGION_GLOBAL_FLAG_KERNARG"),
                 ("fine_grained", "HSA_REGION_GLOBAL_FLAG_FINE_GRAINED"),
                 ("coarse_grained", "HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED"),
                 ("extended_scope_fine_grained", "HSA_REGION_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED"))


class AccessError(RocpyError, PermissionError):
    """The CPU (or another agent) may not access this memory."""


def _segment_name(ctype: str, value: int, prefix: str) -> str:
    name = enum_name(ctype, value, prefix)
    return "kernarg" if name == "kargs" else name


class _MemoryPlace(Handle):
    """What pools and regions share: cached information, filtering, allocation."""

    _kind = "pool"

    def __init__(self, agent: Agent, handle: Any) -> None:
        self.agent = agent
        self._hv: int = handle.handle
        self._static: dict[str, Any] = {}
        super().__init__(handle, None)  # borrowed; refers to its agent by attribute (see Agent)

    def _require_open(self) -> Any:
        h = self._h
        if h is None:
            raise self._closed_error()
        self.agent._require_open()
        return h

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._hv == self._hv

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._hv))

    def __repr__(self) -> str:
        if self._h is None:
            return f"<hsa.{type(self).__name__} closed>"
        flags = ",".join(sorted(self.flags)) or "-"
        return (f"<hsa.{type(self).__name__} {self.segment} {flags} of {self.agent.type} "
                f"{self.agent.name!r}, {self.size} bytes>")

    def _fixed(self, name: str, attribute: str, kind: str) -> Any:
        try:
            return self._static[name]
        except KeyError:
            pass
        value = self._static[name] = self.info(attribute, kind)
        return value

    def _matches(self, segment: str | None, fine_grained: bool | None, kernarg: bool | None,
                 allocatable: bool | None) -> bool:
        if segment is not None:
            if segment not in ("global", "readonly", "private", "group", "kernarg"):
                raise ValueError(f"segment must be 'global', 'readonly', 'private', 'group' or "
                                 f"'kernarg', not {segment!r}")
            if self.segment != segment:
                return False
        flags = self.flags
        if fine_grained is not None and ("fine_grained" in flags) != bool(fine_grained):
            return False
        if kernarg is not None and ("kernarg" in flags) != bool(kernarg):
            return False
        if allocatable is not None and self.alloc_allowed != bool(allocatable):
            return False
        return True

    @property
    def fine_grained(self) -> bool:
        return "fine_grained" in self.flags

    @property
    def coarse_grained(self) -> bool:
        return "coarse_grained" in self.flags

    @property
    def kernarg(self) -> bool:
        return "kernarg" in self.flags

    @property
    def is_system(self) -> bool:
        """Whether the memory is host (system) memory: the pool of a CPU agent."""
        return self.agent.is_cpu

    # what Pool and Region answer, each from its own query
    @property
    def segment(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def flags(self) -> frozenset[str]:  # pragma: no cover - overridden
        raise NotImplementedError

    #: Bytes in the pool or region (each subclass's `Fixed` info attribute).
    size: Fixed[int]
    #: Whether `allocate` may be used (each subclass's `Fixed` info attribute).
    alloc_allowed: Fixed[bool]

    # the C calls behind `info` and `allocate`, by name
    _INFO_CALL = "hsa_amd_memory_pool_get_info"
    _ALLOCATE_CALL = "hsa_amd_memory_pool_allocate"

    def info(self, attribute: int | str, kind: str) -> Any:
        """One attribute (value or constant name) of the pool or region, decoded by `kind`."""
        h = self._require_open()
        _, lib = api()
        return read_info(getattr(lib, self._INFO_CALL), (h,), attribute, kind, self._INFO_CALL)

    def allocate(self, nbytes: int) -> Buffer:
        """``nbytes`` of this memory, owned by the returned `Buffer` (freed at its release).

        Args:
            nbytes: The size in bytes.

        Returns:
            The new `Buffer`.

        Raises:
            rocpy.OutOfMemoryError: the pool has not that much free memory.
            rocpy.HsaError: the allocation failed otherwise (the runtime's status).
        """
        h = self._require_open()
        ffi, lib = api()
        size = _size(nbytes)
        out = ffi.new("void **")
        st = self._allocate_into(lib, h, size, out)
        if st:
            raise hsa_error(st, self._ALLOCATE_CALL)
        return Buffer(self, int(ffi.cast("uintptr_t", out[0])), size, (self._free, lib, out[0]))

    @staticmethod
    def _allocate_into(lib: Any, h: Any, size: int, out: Any) -> int:  # pragma: no cover
        raise NotImplementedError

    @staticmethod
    def _free(lib: Any, ptr: Any) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class Pool(_MemoryPlace):
    """An AMD memory pool of an agent (``agent``).  Borrowed: the runtime owns it.

    `info` reads ``hsa_amd_memory_pool_get_info``; `allocate` is
    ``hsa_amd_memory_pool_allocate``.
    """

    @staticmethod
    def _allocate_into(lib: Any, h: Any, size: int, out: Any) -> int:
        result: int = lib.hsa_amd_memory_pool_allocate(h, size, 0, out)
        return result

    @staticmethod
    def _free(lib: Any, ptr: Any) -> None:
        st = lib.hsa_amd_memory_pool_free(ptr)
        if st:
            raise hsa_error(st, "hsa_amd_memory_pool_free")

    @property
    def segment(self) -> str:
        """``'global'``, ``'readonly'``, ``'private'`` or ``'group'``."""
        value = self._fixed("segment", "HSA_AMD_MEMORY_POOL_INFO_SEGMENT", "enum")
        return _segment_name("hsa_amd_segment_t", value, "HSA_AMD_SEGMENT_")

    @property
    def flags(self) -> frozenset[str]:
        """Global flags: ``'fine_grained'``, ``'coarse_grained'``, ``'kernarg'``, ..."""
        if self.segment != "global":
            return frozenset()
        mask = self._fixed("flags", "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS", "u32")
        return flag_names(mask, _FLAGS)

    size: Fixed[int] = Fixed("HSA_AMD_MEMORY_POOL_INFO_SIZE", "size")

    alloc_allowed: Fixed[bool] = Fixed("HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED", "bool",
                          "Whether `allocate` may be used (False for the group segment).")

    alloc_granule: Fixed[int] = Fixed("HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE", "size")

    alloc_alignment: Fixed[int] = Fixed("HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT", "size")

    alloc_max_size: Fixed[int] = Fixed("HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE", "size")

    accessible_by_all: Fixed[bool] = Fixed("HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL", "bool",
                              "Whether every agent may access the pool's memory.")

    def access(self, agent: Agent) -> PoolAccess:
        """How `agent` reaches this pool (see `rocpy.hsa.PoolAccess`)."""
        from .agent import pool_access
        return pool_access(agent, self._require_open())


class Region(_MemoryPlace):
    """An HSA region (the core API's memory view) as ``agent`` lists it.  Borrowed.

    `info` reads ``hsa_region_get_info``; `allocate` is ``hsa_memory_allocate``.
    """

    _INFO_CALL = "hsa_region_get_info"
    _ALLOCATE_CALL = "hsa_memory_allocate"

    @staticmethod
    def _allocate_into(lib: Any, h: Any, size: int, out: Any) -> int:
        result: int = lib.hsa_memory_allocate(h, size, out)
        return result

    @staticmethod
    def _free(lib: Any, ptr: Any) -> None:
        st = lib.hsa_memory_free(ptr)
        if st:
            raise hsa_error(st, "hsa_memory_free")

    @property
    def segment(self) -> str:
        """``'global'``, ``'readonly'``, ``'private'``, ``'group'`` or ``'kernarg'``."""
        value = self._fixed("segment", "HSA_REGION_INFO_SEGMENT", "enum")
        return _segment_name("hsa_region_segment_t", value, "HSA_REGION_SEGMENT_")

    @property
    def flags(self) -> frozenset[str]:
        """Global flags: ``'fine_grained'``, ``'coarse_grained'``, ``'kernarg'``."""
        if self.segment != "global":
            return frozenset()
        mask = self._fixed("flags", "HSA_REGION_INFO_GLOBAL_FLAGS", "u32")
        return flag_names(mask, _REGION_FLAGS)

    size: Fixed[int] = Fixed("HSA_REGION_INFO_SIZE", "size")

    alloc_allowed: Fixed[bool] = Fixed("HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED", "bool")

    alloc_granule: Fixed[int] = Fixed("HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE", "size")

    alloc_alignment: Fixed[int] = Fixed("HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT", "size")

    alloc_max_size: Fixed[int] = Fixed("HSA_REGION_INFO_ALLOC_MAX_SIZE", "size")

    host_accessible: Fixed[bool] = Fixed("HSA_AMD_REGION_INFO_HOST_ACCESSIBLE", "bool")

    @property
    def is_system(self) -> bool:
        """Whether the region is host memory (host-accessible)."""
        return self.host_accessible


def _size(nbytes: Any) -> int:
    if isinstance(nbytes, int) and not isinstance(nbytes, bool) and 0 < nbytes < 1 << 64:
        return nbytes
    nbytes = unsigned(nbytes, 64, "nbytes")   # TypeError, ValueError past size_t
    if nbytes == 0:
        raise ValueError("nbytes must be positive, got 0")
    result: int = nbytes
    return result


class Buffer(Addressed):
    """Memory allocated from a `Pool` or `Region`, freed when released.

    ``ptr`` is the address (an int; kernel arguments accept the Buffer
    itself), ``size`` the size asked for, ``pool`` where it came from.
    """

    def __init__(self, place: _MemoryPlace, ptr: int, size: int, release: tuple[Any, ...]) -> None:
        self.size = size
        self.pool = place
        self.agent: Agent = place.agent
        self._granted: set[int] = set()
        self._lock = threading.Lock()
        super().__init__(ptr, release, parents=(place.agent.runtime,))

    def __repr__(self) -> str:
        h = self._h
        state = "closed" if h is None else f"ptr={h:#x}"
        return f"<hsa.Buffer {state} {self.size} bytes from {self.pool!r}>"

    def allow_access(self, agents: Iterable[Agent]) -> None:
        """Let `agents` access this memory (hsa_amd_agents_allow_access)."""
        ptr = self._require_open()
        ffi, lib = api()
        agents = list(agents)
        if not agents:
            raise ValueError("allow_access needs at least one agent")
        handles = ffi.new("hsa_agent_t[]", len(agents))
        for i, a in enumerate(agents):
            handles[i] = agent_handle(a, "each of agents")
        st = lib.hsa_amd_agents_allow_access(len(agents), handles, ffi.NULL, ffi.cast("void *", ptr))
        if st:
            raise hsa_error(st, "hsa_amd_agents_allow_access")
        with self._lock:
            self._granted.update(a._hv for a in agents)

    def _reachable_by(self, agent: Any) -> bool:
        """Whether `agent` may access this memory: its owner, granted, or allowed by default.

        Region memory (hsa_memory_allocate) of the system is mapped to every
        agent; a pool's other agents need `allow_access` unless the pool
        allows them by default (ROCr amd_memory_region.cpp: pool memory is
        allocated restricted and mapped for an agent only at AllowAccess).
        """
        hv = agent._hv
        if hv == self.agent._hv or hv in self._granted:
            return True
        place = self.pool
        if isinstance(place, Pool):
            return place.access(agent).allowed
        return place.is_system

    def _check_cpu_access(self) -> None:
        place = self.pool
        if place.is_system:
            return
        if not place.fine_grained:
            raise AccessError(
                f"the CPU may not access this buffer: it is coarse-grained memory of "
                f"{place.agent.type} {place.agent.name!r}; copy it to host memory "
                "(hsa.copy / hsa.copy_async) or allocate from a fine-grained pool")
        if isinstance(place, Pool):
            for cpu in (a for a in place.agent.runtime._listed_agents() if a.is_cpu):
                if cpu._hv in self._granted:
                    return
                rule = place.access(cpu)
                if rule.allowed:
                    return
                if not rule.possible:
                    break
            raise AccessError("the CPU may not access this fine-grained GPU buffer until it is "
                              "granted access: buf.allow_access(rt.cpu_agents)")

    def numpy(self, dtype: Any = "uint8", count: int | None = None, offset: int = 0) -> Any:
        """A zero-copy numpy view (``count`` items of ``dtype`` from byte ``offset``).

        Only where the CPU may access the memory; raises `AccessError`
        otherwise.  The view keeps the memory: a `close` while views live
        frees it after the last one is gone.
        """
        import numpy as np
        ptr = self._require_open()
        self._check_cpu_access()
        dt = _args.dtype(dtype)
        offset = _args.integer(offset, "offset")
        if offset < 0 or offset > self.size:
            raise ValueError(f"offset {offset} is outside the buffer's {self.size} bytes")
        avail = (self.size - offset) // dt.itemsize
        n = avail if count is None else _args.integer(count, "count")
        if n < 0 or n > avail:
            raise ValueError(f"{n} items of {dt} from offset {offset} do not fit in "
                             f"{self.size} bytes")
        iface = {"data": (ptr + offset, False), "shape": (n,), "typestr": dt.str, "version": 3}
        if dt.fields is not None:
            iface["descr"] = dt.descr
        return np.asarray(HostView(self, iface))

    def fill(self, value: int, count: int | None = None) -> None:
        """Set ``count`` 32-bit words (default: the whole buffer) to ``value`` (hsa_amd_memory_fill)."""
        from .transfer import fill
        fill(self, value, count)

    def copy_from(self, src: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: this buffer's size) from `src` (hsa_memory_copy)."""
        from .transfer import copy
        copy(self, src, self.size if size is None else size)

    def copy_to(self, dst: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: this buffer's size) to `dst` (hsa_memory_copy)."""
        from .transfer import copy
        copy(dst, self, self.size if size is None else size)
