"""Locked (pinned) host memory: `lock` and `LockedMemory` (hsa_amd_memory_lock / unlock).

::

    with hsa.lock(array, agents=[gpu]) as ptr:
        hsa.copy_async(buf, ptr, n, src_agent=cpu, completion=sig)
        sig.wait("eq", 0)
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .._handle import Handle
from ..errors import hsa_error
from ._common import agent_handle, api

if TYPE_CHECKING:
    from .agent import Agent


def _unlock(lib: Any, ptr: Any, _keep: Any) -> None:
    """Release recipe; `_keep` is the cffi buffer, held until the memory is unlocked."""
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
            handles = ffi.new("hsa_agent_t[]", len(agents))
            for i, a in enumerate(agents):
                handles[i] = agent_handle(a, "each of agents")
            runtime = agents[0].runtime
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
        self.host_ptr: int = int(ffi.cast("uintptr_t", host_ptr))
        self.cpu: Agent = cpus[0]
        self.agents: tuple[Agent, ...] = tuple(agents or ())
        # the recipe holds the cffi buffer: the memory stays until unlocked
        super().__init__(int(ffi.cast("uintptr_t", out[0])), (_unlock, lib, host_ptr, cbuf),
                         parents=(runtime,))

    @property
    def ptr(self) -> int:
        """The agents' address (raises `rocpy.ClosedError` once unlocked)."""
        result: int = self._require_open()
        return result

    # the property's getter itself (mypy reads a property in its class body as a method)
    __int__: Callable[[LockedMemory], int] = ptr.fget  # type: ignore[attr-defined]
    __index__: Callable[[LockedMemory], int] = ptr.fget  # type: ignore[attr-defined]

    def __enter__(self) -> int:  # type: ignore[override]
        """``with hsa.lock(array) as ptr``: the agents' pointer."""
        result: int = self._require_open()
        return result

    def __repr__(self) -> str:
        h = self._h
        state = "closed" if h is None else f"ptr={h:#x}"
        return f"<hsa.LockedMemory {state} {self.size} bytes>"


def lock(host: Any, agents: Sequence[Agent] | None = None) -> LockedMemory:
    """Lock `host` (any writable contiguous buffer: numpy array, bytearray) for `agents`.

    ``agents`` None locks for every GPU.  Use as a context manager::

        with hsa.lock(array, [gpu]) as ptr:
            hsa.copy_async(buf, ptr, n, src_agent=cpu, completion=sig)
            sig.wait("eq", 0)
    """
    return LockedMemory(host, agents)
