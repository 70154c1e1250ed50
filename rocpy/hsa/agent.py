"""`Agent`: a CPU or GPU of the HSA runtime, with typed information.

Agents are listed by their `Runtime` (``rt.agents``, ``rt.gpu_agents``);
rocpy never destroys them (they are the runtime's), but each holds its
Runtime, so the runtime stays up while an agent is used::

    gpu = rt.gpu_agents[0]
    gpu.name, gpu.target, gpu.wavefront_size, gpu.compute_units
    pool = gpu.pools(segment="global", fine_grained=False)[0]
    gpu.access(pool)              # PoolAccess(access='allowed_by_default', hops=0, links=())
    q = gpu.create_queue(size=4096)

Information that never changes is read once and kept.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._handle import Handle
from ..errors import ClosedError, hsa_error
from ._common import Fixed, api, const, enum_name, flag_names, list_handles, read_info

if TYPE_CHECKING:
    from .memory import Pool, Region
    from .queue import Queue
    from .runtime import Runtime

_FEATURES = (("kernel_dispatch", "HSA_AGENT_FEATURE_KERNEL_DISPATCH"),
             ("agent_dispatch", "HSA_AGENT_FEATURE_AGENT_DISPATCH"))

_ACCESS = {"HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED": "never_allowed",
           "HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT": "allowed_by_default",
           "HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT": "disallowed_by_default"}

_LINK_TYPES = {"HSA_AMD_LINK_INFO_TYPE_HYPERTRANSPORT": "hypertransport",
               "HSA_AMD_LINK_INFO_TYPE_QPI": "qpi", "HSA_AMD_LINK_INFO_TYPE_PCIE": "pcie",
               "HSA_AMD_LINK_INFO_TYPE_INFINBAND": "infiniband",
               "HSA_AMD_LINK_INFO_TYPE_XGMI": "xgmi"}


@dataclass(frozen=True)
class LinkInfo:
    """One hop between an agent and a memory pool (hsa_amd_memory_pool_link_info_t)."""

    type: str                   # 'pcie', 'xgmi', ... or the number
    min_latency: int            # ns
    max_latency: int
    min_bandwidth: int          # MB/s
    max_bandwidth: int
    atomic_32bit: bool
    atomic_64bit: bool
    coherent: bool
    numa_distance: int


@dataclass(frozen=True)
class PoolAccess:
    """How an agent reaches a memory pool (hsa_amd_agent_memory_pool_get_info).

    ``access`` is ``'allowed_by_default'``, ``'disallowed_by_default'``
    (allowed after `Buffer.allow_access`) or ``'never_allowed'``; ``hops`` the
    number of links on the way (0: the agent's own memory), ``links`` each hop.
    """

    access: str
    hops: int
    links: tuple[LinkInfo, ...]

    @property
    def allowed(self) -> bool:
        """Whether the agent may access the pool's memory without being granted access."""
        return self.access == "allowed_by_default"

    @property
    def possible(self) -> bool:
        """Whether the agent may access it at all (by default or once granted)."""
        return self.access != "never_allowed"


def pool_access(agent: Agent, pool_handle: Any) -> PoolAccess:
    """`PoolAccess` of `agent` to the pool with handle cdata `pool_handle`."""
    ffi, lib = api()
    call = "hsa_amd_agent_memory_pool_get_info"
    h = agent._require_open()
    fn = lib.hsa_amd_agent_memory_pool_get_info
    access = read_info(fn, (h, pool_handle), lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, "enum", call)
    hops = read_info(fn, (h, pool_handle), lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, "u32",
                     call)
    links: list[LinkInfo] = []
    if hops:
        buf = ffi.new("hsa_amd_memory_pool_link_info_t[]", hops)
        st = fn(h, pool_handle, lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, buf)
        if st:
            raise hsa_error(st, call)
        for i in range(hops):
            li = buf[i]
            kind = ffi.string(ffi.cast("hsa_amd_link_info_type_t", li.link_type))
            links.append(LinkInfo(_LINK_TYPES.get(kind, str(li.link_type)), li.min_latency,
                                  li.max_latency, li.min_bandwidth, li.max_bandwidth,
                                  bool(li.atomic_support_32bit), bool(li.atomic_support_64bit),
                                  bool(li.coherent_support), li.numa_distance))
    name = ffi.string(ffi.cast("hsa_amd_memory_pool_access_t", access))
    return PoolAccess(_ACCESS.get(name, str(access)), hops, tuple(links))


def _isa_name(isa: Any) -> str:
    """The name of the ISA with handle cdata `isa` (hsa_isa_get_info_alt)."""
    ffi, lib = api()
    n = read_info(lib.hsa_isa_get_info_alt, (isa,), lib.HSA_ISA_INFO_NAME_LENGTH, "u32",
                  "hsa_isa_get_info_alt")
    buf = ffi.new("char[]", n + 1)
    st = lib.hsa_isa_get_info_alt(isa, lib.HSA_ISA_INFO_NAME, buf)
    if st:
        raise hsa_error(st, "hsa_isa_get_info_alt")
    result: str = ffi.string(buf, n).decode()
    return result


class Agent(Handle):
    """An HSA agent (CPU or GPU).  Borrowed: the runtime owns it; ``runtime`` is its `Runtime`."""

    def __init__(self, runtime: Runtime, handle: Any) -> None:
        self.runtime = runtime
        self._hv: int = handle.handle
        self._lock = threading.Lock()
        self._static: dict[str, Any] = {}
        self._pools: list[Pool] | None = None
        self._regions: list[Region] | None = None
        # Borrowed, with no Handle parents: the Runtime caches its agents and an
        # agent refers to its Runtime by attribute only, so the pair is an
        # ordinary cycle the collector frees.  Objects that own native handles
        # hold the Runtime as their parent themselves.
        super().__init__(handle, None)

    def _require_open(self) -> Any:
        h = self._h
        if h is None:
            raise self._closed_error()
        if self.runtime._released():
            raise ClosedError("hsa.Agent is no longer valid: the HSA runtime it came from was "
                              "shut down")
        return h

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Agent) and other._hv == self._hv

    def __hash__(self) -> int:
        return hash(("hsa.Agent", self._hv))

    def __repr__(self) -> str:
        if self._h is None:
            return "<hsa.Agent closed>"
        return f"<hsa.Agent {self.type} {self.name!r} handle={self._hv:#x}>"

    # ---- information ---------------------------------------------------------------

    def info(self, attribute: int | str, kind: str) -> Any:
        """One ``hsa_agent_get_info`` attribute (value or constant name) decoded by `kind`.

        Kinds are those of ``read_info`` (``u32``, ``str64``, ``bool``, ...);
        for attributes the typed properties lack.
        """
        h = self._require_open()
        _, lib = api()
        return read_info(lib.hsa_agent_get_info, (h,), attribute, kind, "hsa_agent_get_info")

    def _fixed(self, name: str, attribute: str, kind: str, default: int | None = None) -> Any:
        """A constant attribute, read once."""
        try:
            return self._static[name]
        except KeyError:
            pass
        attr = const(attribute, default)
        if attr is None:
            raise AttributeError(f"these HSA headers have no {attribute}")
        value = self._static[name] = self.info(attr, kind)
        return value

    name: Fixed[str] = Fixed("HSA_AGENT_INFO_NAME", "str64",
                 "The agent's name: the processor (``'gfx90a'``) on a GPU, the CPU's model on a CPU.")

    vendor_name: Fixed[str] = Fixed("HSA_AGENT_INFO_VENDOR_NAME", "str64")

    product_name: Fixed[str] = Fixed("HSA_AMD_AGENT_INFO_PRODUCT_NAME", "str64",
                         "The marketing name (``'AMD Instinct MI210'``).")

    @property
    def type(self) -> str:
        """``'cpu'``, ``'gpu'``, ``'dsp'`` (or ``'aie'`` on newer runtimes)."""
        try:
            result: str = self._static["type"]
            return result
        except KeyError:
            value = self._fixed("device", "HSA_AGENT_INFO_DEVICE", "enum")
            kind = self._static["type"] = enum_name("hsa_device_type_t", value, "HSA_DEVICE_TYPE_")
            return kind

    @property
    def is_gpu(self) -> bool:
        """Whether this is a GPU agent (``HSA_DEVICE_TYPE_GPU``)."""
        return self.type == "gpu"

    @property
    def is_cpu(self) -> bool:
        """Whether this is a CPU agent (``HSA_DEVICE_TYPE_CPU``)."""
        return self.type == "cpu"

    node: Fixed[int] = Fixed("HSA_AGENT_INFO_NODE", "u32", "The topology node (KFD node id).")

    uuid: Fixed[str] = Fixed("HSA_AMD_AGENT_INFO_UUID", "str64",
                 "``'GPU-<hex>'`` for GPUs; ROCr gives CPUs ``'CPU-XX'``.")

    @property
    def features(self) -> frozenset[str]:
        """``{'kernel_dispatch'}`` for agents with an AQL packet processor."""
        mask = self._fixed("feature", "HSA_AGENT_INFO_FEATURE", "enum")
        return flag_names(mask, _FEATURES)

    @property
    def profile(self) -> str:
        """``'base'`` (discrete GPUs) or ``'full'``."""
        value = self._fixed("profile", "HSA_AGENT_INFO_PROFILE", "enum")
        return enum_name("hsa_profile_t", value, "HSA_PROFILE_")

    @property
    def isa_name(self) -> str | None:
        """The full ISA name (``'amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-'``); None on a CPU."""
        try:
            result: str | None = self._static["isa_name"]
            return result
        except KeyError:
            pass
        isa = self._fixed("isa", "HSA_AGENT_INFO_ISA", "hsa_isa_t")
        name = _isa_name(isa) if isa.handle else None
        self._static["isa_name"] = name
        return name

    @property
    def isas(self) -> list[str]:
        """Every ISA the agent supports, by name (hsa_agent_iterate_isas), preferred first."""
        _, lib = api()
        isas = list_handles(lib.rocpy_hsa_list_isas, (self._require_open(),), "hsa_isa_t",
                            "hsa_agent_iterate_isas", guess=4)
        return [_isa_name(isa) for isa in isas]

    @property
    def caches(self) -> list[tuple[str, int, int]]:
        """The agent's caches as ``(name, level, size in bytes)`` (hsa_agent_iterate_caches)."""
        ffi, lib = api()
        out = []
        for cache in list_handles(lib.rocpy_hsa_list_caches, (self._require_open(),),
                                  "hsa_cache_t", "hsa_agent_iterate_caches"):
            get = lib.hsa_cache_get_info
            n = read_info(get, (cache,), lib.HSA_CACHE_INFO_NAME_LENGTH, "u32", "hsa_cache_get_info")
            # hsa.h documents a char array; ROCr (core::Cache::GetInfo) writes a
            # pointer to its own string.  Room for either, read as ROCr writes it.
            buf = ffi.new("char[]", max(n + 1, ffi.sizeof("char *")))
            st = get(cache, lib.HSA_CACHE_INFO_NAME, buf)
            if st:
                raise hsa_error(st, "hsa_cache_get_info")
            name_ptr = ffi.cast("const char **", buf)[0]
            name = "" if name_ptr == ffi.NULL else ffi.string(name_ptr, n).decode("utf-8", "replace")
            out.append((name,
                        read_info(get, (cache,), lib.HSA_CACHE_INFO_LEVEL, "u8", "hsa_cache_get_info"),
                        read_info(get, (cache,), lib.HSA_CACHE_INFO_SIZE, "u32", "hsa_cache_get_info")))
        return out

    @property
    def target(self) -> str | None:
        """The target ID code objects are matched against (``'gfx90a:sramecc+:xnack-'``)."""
        isa = self.isa_name
        if isa is None:
            return None
        return isa.split("--", 1)[1] if "--" in isa else isa

    wavefront_size: Fixed[int] = Fixed("HSA_AGENT_INFO_WAVEFRONT_SIZE", "u32")

    workgroup_max_size: Fixed[int] = Fixed("HSA_AGENT_INFO_WORKGROUP_MAX_SIZE", "u32")

    workgroup_max_dim: Fixed[tuple[int, ...]] = Fixed("HSA_AGENT_INFO_WORKGROUP_MAX_DIM", "u16x3")

    grid_max_size: Fixed[int] = Fixed("HSA_AGENT_INFO_GRID_MAX_SIZE", "u32")

    grid_max_dim: Fixed[tuple[int, ...]] = Fixed("HSA_AGENT_INFO_GRID_MAX_DIM", "u32x3")

    compute_units: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT", "u32")

    simds_per_cu: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU", "u32")

    max_waves_per_cu: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU", "u32")

    max_clock_mhz: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY", "u32")

    chip_id: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_CHIP_ID", "u32")

    cacheline_size: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_CACHELINE_SIZE", "u32")

    bdf_id: Fixed[int] = Fixed("HSA_AMD_AGENT_INFO_BDFID", "u32",
                   "PCI bus/device/function, as ``(bus << 8) | (device << 3) | function``.")

    queues_max: Fixed[int] = Fixed("HSA_AGENT_INFO_QUEUES_MAX", "u32",
                       "How many queues the agent can have at once (0: it has no AQL processor).")

    queue_min_size: Fixed[int] = Fixed("HSA_AGENT_INFO_QUEUE_MIN_SIZE", "u32",
                           "The smallest queue, in packets (a power of two).")

    queue_max_size: Fixed[int] = Fixed("HSA_AGENT_INFO_QUEUE_MAX_SIZE", "u32",
                           "The largest queue, in packets (a power of two).")

    @property
    def queue_type(self) -> str:
        """The queue types the agent supports: ``'multi'`` or ``'single'``."""
        value = self._fixed("queue_type", "HSA_AGENT_INFO_QUEUE_TYPE", "enum")
        return enum_name("hsa_queue_type_t", value, "HSA_QUEUE_TYPE_")

    @property
    def cache_sizes(self) -> tuple[int, int, int, int]:
        """L1..L4 data cache sizes in bytes (0 where absent; HSA_AGENT_INFO_CACHE_SIZE)."""
        ffi, lib = api()
        h = self._require_open()
        buf = ffi.new("uint32_t[4]")
        st = lib.hsa_agent_get_info(h, lib.HSA_AGENT_INFO_CACHE_SIZE, buf)
        if st:
            raise hsa_error(st, "hsa_agent_get_info")
        return tuple(buf)

    def extension_supported(self, extension: int | str, major: int = 1, minor: int = 0) -> bool:
        """Whether the agent supports `extension` (id or name) at ``major.minor``."""
        from .runtime import extension_id
        h = self._require_open()
        ffi, lib = api()
        out = ffi.new("bool *")
        st = lib.hsa_agent_extension_supported(extension_id(extension), h, major, minor, out)
        if st:
            raise hsa_error(st, "hsa_agent_extension_supported")
        return bool(out[0])

    # ---- memory ----------------------------------------------------------------------

    def _cached(self, which: str, make: Any, lister: Any, ctype: str, call: str) -> list[Any]:
        items = getattr(self, which)
        if items is None:
            found = list_handles(lister, (self._require_open(),), ctype, call)
            fresh = [make(self, h) for h in found]
            with self._lock:
                if getattr(self, which) is None:
                    setattr(self, which, fresh)
                items = getattr(self, which)
        result: list[Any] = items
        return result

    def _all_pools(self) -> list[Pool]:
        from .memory import Pool
        _, lib = api()
        return self._cached("_pools", Pool, lib.rocpy_hsa_list_memory_pools,
                            "hsa_amd_memory_pool_t", "hsa_amd_agent_iterate_memory_pools")

    def pools(self, *, segment: str | None = None, fine_grained: bool | None = None,
              kernarg: bool | None = None, allocatable: bool | None = None) -> list[Pool]:
        """The agent's AMD memory pools, filtered.

        ``segment``: ``'global'``, ``'readonly'``, ``'private'`` or ``'group'``;
        ``fine_grained`` True/False; ``kernarg``: pools that hold kernel
        arguments; ``allocatable``: pools the runtime allocates from.  None
        leaves a criterion out.

        Args:
            segment: The pool's segment, or None for any.
            fine_grained: Fine-grained (True) or coarse-grained (False) pools only.
            kernarg: Pools that hold (True) or do not hold (False) kernel arguments.
            allocatable: Pools the runtime allocates from (True) or not (False).

        Returns:
            The matching `Pool` objects, in the runtime's order.
        """
        self._require_open()
        return [p for p in self._all_pools() if p._matches(segment, fine_grained, kernarg,
                                                           allocatable)]

    def regions(self, *, segment: str | None = None, fine_grained: bool | None = None,
                kernarg: bool | None = None, allocatable: bool | None = None) -> list[Region]:
        """The agent's HSA regions (the core API's view of memory), filtered like `pools`."""
        from .memory import Region
        _, lib = api()
        regions = self._cached("_regions", Region, lib.rocpy_hsa_list_regions, "hsa_region_t",
                               "hsa_agent_iterate_regions")
        return [r for r in regions if r._matches(segment, fine_grained, kernarg, allocatable)]

    def access(self, pool: Pool) -> PoolAccess:
        """How this agent reaches `pool`: access rule, link hops and each link's properties."""
        return pool_access(self, pool._require_open())

    # ---- queues ----------------------------------------------------------------------

    def create_queue(self, size: int | None = None, *, kind: str = "multi",
                     on_error: Any = None, **options: Any) -> Queue:
        """A new AQL queue on this agent; see `rocpy.hsa.Queue` for the options.

        ``size`` in packets (a power of two; default 4096, within the agent's
        limits), ``kind`` ``'multi'`` or ``'single'``, ``on_error(exc)`` called
        on rocpy's dispatcher thread when the queue fails.

        Args:
            size: Packets in the ring (a power of two); None: 4096.
            kind: ``'multi'`` (several producers) or ``'single'``.
            on_error: Called with the exception when the queue fails.
            **options: `rocpy.hsa.Queue`'s keyword options (``cu_mask``,
                ``priority``, ``profiling``, ...).

        Returns:
            The new `rocpy.hsa.Queue`, owned (``close`` or ``with``).

        Raises:
            rocpy.HsaError: ``hsa_queue_create`` failed (the runtime's status).
        """
        from .queue import Queue
        return Queue(self, size=size, kind=kind, on_error=on_error, **options)
