"""`pointer_info`: what the HSA runtime knows about an address (hsa_amd_pointer_info).

::

    info = hsa.pointer_info(buf)          # or an int address, a cffi pointer, LockedMemory
    info.type, info.size, info.owner, info.accessible, info.agent_base, info.host_base

An address ROCr does not know is ``type == 'unknown'`` with the other
fields zero / None (not an error, as in ROCr).
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import hsa_error
from ._common import api, flag_names

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime

_TYPES = {0: "unknown", 1: "hsa", 2: "locked", 3: "graphics", 4: "ipc", 5: "vmem",
          6: "reserved_address"}   # 5, 6: HSA_EXT_POINTER_TYPE_HSA_VMEM / _RESERVED_ADDR (1.12)
_FLAGS = (("kernarg", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT"),
          ("fine_grained", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED"),
          ("coarse_grained", "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED"),
          ("extended_scope_fine_grained",
           "HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_EXTENDED_SCOPE_FINE_GRAINED"))

_libc = ctypes.CDLL(None)
_MALLOC = ctypes.cast(_libc.malloc, ctypes.c_void_p).value
_libc.free.argtypes = [ctypes.c_void_p]


@dataclass(frozen=True)
class PointerInfo:
    """hsa_amd_pointer_info_t, with agents as `rocpy.hsa.Agent` objects.

    ``type``: 'unknown', 'hsa' (pool/region memory), 'locked' (locked host
    memory), 'graphics', 'ipc', 'vmem'; ``agent_base`` / ``host_base``: the
    allocation's base as the agent and the host see it; ``size``: the
    allocation's bytes; ``owner``: the agent whose memory it is; ``accessible``:
    the agents that may access it; ``flags``: its pool's global flags
    (``'fine_grained'``, ``'coarse_grained'``, ``'kernarg'``, ...).
    """

    address: int
    type: str
    agent_base: int
    host_base: int
    size: int
    owner: Agent | None
    accessible: tuple[Agent, ...]
    flags: frozenset[str]

    @property
    def known(self) -> bool:
        """Whether ROCr knows the address (type other than 'unknown')."""
        return self.type != "unknown"

    @property
    def offset(self) -> int:
        """Where the address lies in its allocation (host view)."""
        return self.address - self.host_base if self.known else 0


def pointer_info(ptr: Any, runtime: Runtime | None = None) -> PointerInfo:
    """hsa_amd_pointer_info of `ptr` (a Buffer, LockedMemory, cffi pointer or int address).

    Agents are looked up in `runtime` (default: the Buffer's own, else
    `Runtime.current()`).
    """
    from .runtime import Runtime
    from .transfer import _address
    ffi, lib = api()
    address = _address(ptr, "ptr")
    if address == 0:
        raise ValueError("ptr is NULL")
    if runtime is None:
        agent = getattr(ptr, "agent", None) or getattr(ptr, "cpu", None)
        found: Runtime = agent.runtime if agent is not None else Runtime.current()
        runtime = found
    by_handle = {a._hv: a for a in runtime._listed_agents()}
    info = ffi.new("hsa_amd_pointer_info_t *")
    info.size = ffi.sizeof("hsa_amd_pointer_info_t")
    count = ffi.new("uint32_t *")
    agents = ffi.new("hsa_agent_t **")
    st = lib.hsa_amd_pointer_info(ffi.cast("void *", address), info,
                                  ffi.cast("void *(*)(size_t)", _MALLOC), count, agents)
    if st:
        raise hsa_error(st, "hsa_amd_pointer_info")
    try:
        accessible = tuple(by_handle[agents[0][i].handle] for i in range(count[0])
                           if agents[0][i].handle in by_handle)
    finally:
        if agents[0] != ffi.NULL:
            _libc.free(int(ffi.cast("uintptr_t", agents[0])))
    kind = _TYPES.get(int(info.type), f"type {int(info.type)}")
    if kind == "unknown":
        return PointerInfo(address, kind, 0, 0, 0, None, (), frozenset())
    return PointerInfo(address, kind,
                       int(ffi.cast("uintptr_t", info.agentBaseAddress)),
                       int(ffi.cast("uintptr_t", info.hostBaseAddress)),
                       int(info.sizeInBytes), by_handle.get(info.agentOwner.handle), accessible,
                       flag_names(int(info.global_flags), _FLAGS))
