"""Memory: pools and regions, owned `Buffer`\\ s, copies, fills and locked host memory.

::

    pool = gpu.pools(segment="global", fine_grained=False)[0]
    buf = pool.allocate(1 << 20)            # hsa_amd_memory_pool_allocate; freed at release
    buf.allow_access([cpu])                  # hsa_amd_agents_allow_access
    host = cpu.pools(kernarg=False, fine_grained=True)[0].allocate(1 << 20)
    host.numpy(np.float32)[:] = 1            # zero-copy view: the CPU may access it
    hsa.copy_async(buf, host, 1 << 20, completion=sig)     # the copy engine
    with hsa.lock(array, agents=[gpu]) as ptr: ...         # hsa_amd_memory_lock / unlock

A Buffer holds its pool (which holds its agent, which holds the Runtime).
`Buffer.numpy` refuses memory the CPU may not access: coarse-grained GPU
memory always (copy it instead), fine-grained GPU memory until the CPU agent
was granted access.  Views keep their Buffer alive, but `close()` frees now:
close a buffer only when no view and no queued work uses it.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .. import _reaper
from .._handle import Handle
from ..errors import RocpyError, hsa_error
from ._common import api, const, flag_names, read_info

if TYPE_CHECKING:
    from .agent import Agent, PoolAccess
    from .signal import Signal

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


def _segment_name(value: int, prefix: str) -> str:
    ffi, _ = api()
    name = ffi.string(ffi.cast("hsa_amd_segment_t" if prefix.startswith("HSA_AMD")
                               else "hsa_region_segment_t", value))
    if isinstance(name, str) and name.startswith(prefix):
        name = name[len(prefix):].lower()
        return "kernarg" if name == "kargs" else name
    return str(value)


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
        return type(other) is type(self) and other._hv == self._hv  # type: ignore[attr-defined]

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

    @property
    def size(self) -> int:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def alloc_allowed(self) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def info(self, attribute: int | str, kind: str) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def allocate(self, nbytes: int) -> Buffer:  # pragma: no cover - overridden
        raise NotImplementedError


class Pool(_MemoryPlace):
    """An AMD memory pool of an agent (``agent``).  Borrowed: the runtime owns it."""

    def info(self, attribute: int | str, kind: str) -> Any:
        """One ``hsa_amd_memory_pool_get_info`` attribute (value or constant name), by `kind`."""
        h = self._require_open()
        _, lib = api()
        if isinstance(attribute, str):
            value = const(attribute)
            if value is None:
                raise ValueError(f"these HSA headers have no {attribute}")
            attribute = value
        return read_info(lib.hsa_amd_memory_pool_get_info, (h,), attribute, kind,
                         "hsa_amd_memory_pool_get_info")

    @property
    def segment(self) -> str:
        """``'global'``, ``'readonly'``, ``'private'`` or ``'group'``."""
        value = self._fixed("segment", "HSA_AMD_MEMORY_POOL_INFO_SEGMENT", "enum")
        return _segment_name(value, "HSA_AMD_SEGMENT_")

    @property
    def flags(self) -> frozenset[str]:
        """Global flags: ``'fine_grained'``, ``'coarse_grained'``, ``'kernarg'``, ..."""
        if self.segment != "global":
            return frozenset()
        mask = self._fixed("flags", "HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS", "u32")
        return flag_names(mask, _FLAGS)

    @property
    def size(self) -> int:
        return self._fixed("size", "HSA_AMD_MEMORY_POOL_INFO_SIZE", "size")

    @property
    def alloc_allowed(self) -> bool:
        """Whether `allocate` may be used (False for the group segment)."""
        return self._fixed("alloc_allowed", "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED", "bool")

    @property
    def alloc_granule(self) -> int:
        return self._fixed("alloc_granule", "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE", "size")

    @property
    def alloc_alignment(self) -> int:
        return self._fixed("alloc_alignment", "HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT",
                           "size")

    @property
    def alloc_max_size(self) -> int:
        return self._fixed("alloc_max_size", "HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE", "size")

    @property
    def accessible_by_all(self) -> bool:
        """Whether every agent may access the pool's memory."""
        return self._fixed("accessible_by_all", "HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL", "bool")

    def access(self, agent: Agent) -> PoolAccess:
        """How `agent` reaches this pool (see `rocpy.hsa.PoolAccess`)."""
        from .agent import pool_access
        return pool_access(agent, self._require_open())

    def allocate(self, nbytes: int) -> Buffer:
        """``nbytes`` of this pool (hsa_amd_memory_pool_allocate), owned by the `Buffer`."""
        h = self._require_open()
        ffi, lib = api()
        size = _size(nbytes)
        out = ffi.new("void **")
        st = lib.hsa_amd_memory_pool_allocate(h, size, 0, out)
        if st:
            raise hsa_error(st, "hsa_amd_memory_pool_allocate")
        return Buffer(self, int(ffi.cast("uintptr_t", out[0])), size, (_pool_free, lib, out[0]))


class Region(_MemoryPlace):
    """An HSA region (the core API's memory view) as ``agent`` lists it.  Borrowed."""

    def info(self, attribute: int | str, kind: str) -> Any:
        """One ``hsa_region_get_info`` attribute (value or constant name), by `kind`."""
        h = self._require_open()
        _, lib = api()
        if isinstance(attribute, str):
            value = const(attribute)
            if value is None:
                raise ValueError(f"these HSA headers have no {attribute}")
            attribute = value
        return read_info(lib.hsa_region_get_info, (h,), attribute, kind, "hsa_region_get_info")

    @property
    def segment(self) -> str:
        value = self._fixed("segment", "HSA_REGION_INFO_SEGMENT", "enum")
        return _segment_name(value, "HSA_REGION_SEGMENT_")

    @property
    def flags(self) -> frozenset[str]:
        if self.segment != "global":
            return frozenset()
        mask = self._fixed("flags", "HSA_REGION_INFO_GLOBAL_FLAGS", "u32")
        return flag_names(mask, _REGION_FLAGS)

    @property
    def size(self) -> int:
        return self._fixed("size", "HSA_REGION_INFO_SIZE", "size")

    @property
    def alloc_allowed(self) -> bool:
        return self._fixed("alloc_allowed", "HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED", "bool")

    @property
    def alloc_granule(self) -> int:
        return self._fixed("alloc_granule", "HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE", "size")

    @property
    def alloc_alignment(self) -> int:
        return self._fixed("alloc_alignment", "HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT", "size")

    @property
    def alloc_max_size(self) -> int:
        return self._fixed("alloc_max_size", "HSA_REGION_INFO_ALLOC_MAX_SIZE", "size")

    @property
    def host_accessible(self) -> bool:
        return self._fixed("host_accessible", "HSA_AMD_REGION_INFO_HOST_ACCESSIBLE", "bool")

    @property
    def is_system(self) -> bool:
        return self.host_accessible

    def allocate(self, nbytes: int) -> Buffer:
        """``nbytes`` of this region (hsa_memory_allocate), owned by the `Buffer`."""
        h = self._require_open()
        ffi, lib = api()
        size = _size(nbytes)
        out = ffi.new("void **")
        st = lib.hsa_memory_allocate(h, size, out)
        if st:
            raise hsa_error(st, "hsa_memory_allocate")
        return Buffer(self, int(ffi.cast("uintptr_t", out[0])), size, (_region_free, lib, out[0]))


def _size(nbytes: Any) -> int:
    if isinstance(nbytes, bool) or not isinstance(nbytes, int):
        try:
            nbytes = nbytes.__index__()
        except AttributeError:
            raise TypeError(f"nbytes must be an int, not {type(nbytes).__name__}") from None
    if nbytes <= 0:
        raise ValueError(f"nbytes must be positive, got {nbytes}")
    return nbytes


def _pool_free(lib: Any, ptr: Any) -> None:
    st = lib.hsa_amd_memory_pool_free(ptr)
    if st:
        raise hsa_error(st, "hsa_amd_memory_pool_free")


def _region_free(lib: Any, ptr: Any) -> None:
    st = lib.hsa_memory_free(ptr)
    if st:
        raise hsa_error(st, "hsa_memory_free")


class Buffer(Handle):
    """Memory allocated from a `Pool` or `Region`, freed when released.

    ``ptr`` is the address (an int; kernel arguments accept the Buffer
    itself), ``size`` the size asked for, ``pool`` where it came from.
    """

    def __init__(self, place: _MemoryPlace, ptr: int, size: int, release: tuple[Any, ...]) -> None:
        self.ptr = ptr
        self.size = size
        self.pool = place
        self.agent = place.agent
        self._granted: set[int] = set()
        self._lock = threading.Lock()
        super().__init__(ptr, release, parents=(place.agent.runtime,))

    @property
    def nbytes(self) -> int:
        return self.size

    def __int__(self) -> int:
        return self._require_open()

    __index__ = __int__

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"ptr={self.ptr:#x}"
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
            handles[i] = a._require_open()
        st = lib.hsa_amd_agents_allow_access(len(agents), handles, ffi.NULL, ffi.cast("void *", ptr))
        if st:
            raise hsa_error(st, "hsa_amd_agents_allow_access")
        with self._lock:
            self._granted.update(a._hv for a in agents)

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
        otherwise.  The view keeps this Buffer alive (but not after `close`).
        """
        import numpy as np
        ptr = self._require_open()
        self._check_cpu_access()
        dt = np.dtype(dtype)
        if offset < 0 or offset > self.size:
            raise ValueError(f"offset {offset} is outside the buffer's {self.size} bytes")
        avail = (self.size - offset) // dt.itemsize
        n = avail if count is None else count
        if n < 0 or n > avail:
            raise ValueError(f"{n} items of {dt} from offset {offset} do not fit in "
                             f"{self.size} bytes")
        ffi, _ = api()
        # the cdata's destructor closure holds the Buffer: the view keeps it alive
        owner = ffi.gc(ffi.cast("char *", ptr + offset), lambda _p, _keep=self: None)
        return np.frombuffer(ffi.buffer(owner, n * dt.itemsize), dtype=dt, count=n)

    def fill(self, value: int, count: int | None = None) -> None:
        """Set ``count`` 32-bit words (default: the whole buffer) to ``value`` (hsa_amd_memory_fill)."""
        fill(self, value, count)

    def copy_from(self, src: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: this buffer's size) from `src` (hsa_memory_copy)."""
        copy(self, src, self.size if size is None else size)

    def copy_to(self, dst: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: this buffer's size) to `dst` (hsa_memory_copy)."""
        copy(dst, self, self.size if size is None else size)


# ---- copies and fills ------------------------------------------------------------------

def _address(x: Any, what: str) -> int:
    """The address of a Buffer, LockedMemory, cffi pointer or int."""
    if isinstance(x, (Buffer, LockedMemory)):
        return x._require_open()
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    ffi, _ = api()
    if isinstance(x, ffi.CData):
        return int(ffi.cast("uintptr_t", x))
    raise TypeError(f"{what} must be an hsa.Buffer, a locked host pointer, a cffi pointer or "
                    f"an int address, not {type(x).__name__}")


def _agent_of(x: Any, given: Agent | None, what: str) -> Any:
    if given is not None:
        return given._require_open()
    if isinstance(x, Buffer):
        return x.agent._require_open()
    if isinstance(x, LockedMemory):
        return x.cpu._require_open()
    raise ValueError(f"{what}: the agent of a raw address must be given ({what}_agent=)")


def copy(dst: Any, src: Any, size: int) -> None:
    """Copy `size` bytes now (hsa_memory_copy; blocks until done).

    `dst` and `src` are Buffers, locked host memory, cffi pointers or int
    addresses.
    """
    ffi, lib = api()
    d, s = _address(dst, "dst"), _address(src, "src")
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    _check_fits(dst, size, "dst")
    _check_fits(src, size, "src")
    st = lib.hsa_memory_copy(ffi.cast("void *", d), ffi.cast("void *", s), size)
    if st:
        raise hsa_error(st, "hsa_memory_copy")


def _check_fits(x: Any, size: int, what: str) -> None:
    n = getattr(x, "size", None) if isinstance(x, (Buffer, LockedMemory)) else None
    if n is not None and size > n:
        raise ValueError(f"{what} has {n} bytes, the copy is {size} bytes")


def copy_async(dst: Any, src: Any, size: int, *, completion: Signal, deps: Sequence[Signal] = (),
               dst_agent: Agent | None = None, src_agent: Agent | None = None) -> None:
    """Copy `size` bytes on the copy engine (hsa_amd_memory_async_copy).

    Starts once every signal in `deps` is 0; decrements `completion` when
    done.  The agents default to the buffers' owners (the CPU for locked
    host memory); give them for raw addresses.  Buffers, locked memory and
    signals stay alive until `completion` drops to 0 or below.
    """
    ffi, lib = api()
    d, s = _address(dst, "dst"), _address(src, "src")
    if size < 0:
        raise ValueError(f"size must be non-negative, got {size}")
    _check_fits(dst, size, "dst")
    _check_fits(src, size, "src")
    da, sa = _agent_of(dst, dst_agent, "dst"), _agent_of(src, src_agent, "src")
    done = completion._use()
    deps = list(deps)
    handles = ffi.new("hsa_signal_t[]", max(len(deps), 1))
    for i, dep in enumerate(deps):
        handles[i] = dep._use()
    st = lib.hsa_amd_memory_async_copy(ffi.cast("void *", d), da, ffi.cast("void *", s), sa, size,
                                       len(deps), handles if deps else ffi.NULL, done)
    if st:
        raise hsa_error(st, "hsa_amd_memory_async_copy")
    _reaper.keep_alive_until(completion._reached_zero, dst, src, completion, deps)


def fill(dst: Any, value: int, count: int | None = None) -> None:
    """Set `count` 32-bit words at `dst` to `value` (hsa_amd_memory_fill).

    `count` defaults to the whole Buffer (its size must be a multiple of 4).
    """
    ffi, lib = api()
    d = _address(dst, "dst")
    if count is None:
        n = getattr(dst, "size", None)
        if n is None:
            raise ValueError("fill of a raw address needs count=")
        if n % 4:
            raise ValueError(f"the buffer's {n} bytes are not whole 32-bit words: pass count=")
        count = n // 4
    if count < 0:
        raise ValueError(f"count must be non-negative, got {count}")
    _check_fits(dst, count * 4, "dst")
    if not 0 <= value < 1 << 32:
        raise ValueError(f"value must fit in 32 bits unsigned, got {value}")
    st = lib.hsa_amd_memory_fill(ffi.cast("void *", d), value, count)
    if st:
        raise hsa_error(st, "hsa_amd_memory_fill")


# ---- locked host memory ------------------------------------------------------------------

def _unlock(lib: Any, ptr: Any) -> None:
    st = lib.hsa_amd_memory_unlock(ptr)
    if st:
        raise hsa_error(st, "hsa_amd_memory_unlock")


class LockedMemory(Handle):
    """Host memory locked (pinned) for agents: hsa_amd_memory_lock until release.

    ``ptr`` is the agents' address of the memory (what kernels and copies
    use); ``host_ptr`` the host address; ``size`` in bytes.  It holds the
    host object, so the memory stays valid while locked.
    """

    def __init__(self, host: Any, agents: Sequence[Agent] | None = None) -> None:
        from .runtime import Runtime
        ffi, lib = api()
        view = memoryview(host)
        if view.readonly:
            raise ValueError("cannot lock read-only memory")
        if not view.contiguous:
            raise ValueError("cannot lock non-contiguous memory")
        size = view.nbytes
        if size == 0:
            raise ValueError("cannot lock an empty buffer")
        cbuf = ffi.from_buffer(view)
        agents = list(agents) if agents is not None else None
        if agents:
            runtime = agents[0].runtime
            handles = ffi.new("hsa_agent_t[]", len(agents))
            for i, a in enumerate(agents):
                handles[i] = a._require_open()
        else:
            runtime = Runtime.current()
            handles = ffi.NULL
        cpus = [a for a in runtime._listed_agents() if a.is_cpu]
        if not cpus:
            raise RuntimeError("the HSA runtime lists no CPU agent")
        out = ffi.new("void **")
        host_ptr = ffi.cast("void *", cbuf)
        st = lib.hsa_amd_memory_lock(host_ptr, size, handles, len(agents) if agents else 0, out)
        if st:
            raise hsa_error(st, "hsa_amd_memory_lock")
        self.host = host
        self._cbuf = cbuf
        self._view = view
        self.size = size
        self.host_ptr = int(ffi.cast("uintptr_t", host_ptr))
        self.ptr = int(ffi.cast("uintptr_t", out[0]))
        self.cpu = cpus[0]
        self.agents = tuple(agents or ())
        # the recipe holds the cffi buffer: the memory stays until unlocked
        super().__init__(self.ptr, (_unlock_keep, lib, host_ptr, cbuf), parents=(runtime,))

    def __enter__(self) -> int:  # type: ignore[override]
        """``with hsa.lock(array) as ptr``: the agents' pointer."""
        return self._require_open()

    def __int__(self) -> int:
        return self._require_open()

    __index__ = __int__

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"ptr={self.ptr:#x}"
        return f"<hsa.LockedMemory {state} {self.size} bytes>"


def _unlock_keep(lib: Any, ptr: Any, _keep: Any) -> None:
    _unlock(lib, ptr)


def lock(host: Any, agents: Sequence[Agent] | None = None) -> LockedMemory:
    """Lock `host` (any writable contiguous buffer: numpy array, bytearray) for `agents`.

    ``agents`` None locks for every GPU.  Use as a context manager::

        with hsa.lock(array, [gpu]) as ptr:
            hsa.copy_async(buf, ptr, n, src_agent=cpu, completion=sig)
            sig.wait("eq", 0)
    """
    return LockedMemory(host, agents)
