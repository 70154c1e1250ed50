"""Memory and signals shared between processes (hsa_amd_ipc_memory_* / hsa_amd_ipc_signal_*).

::

    # exporter
    buf = gpu_pool.allocate(1 << 20)
    handle = hsa.ipc_export(buf)              # an IpcHandle: picklable, send it anywhere
    sig = hsa.Signal(1, ipc=True)
    sig_handle = sig.ipc_handle()

    # importer (another process)
    with hsa.IpcMemory.attach(handle) as mem:     # hsa_amd_ipc_memory_attach ... detach
        hsa.copy(host_buf, mem, mem.size)
    with hsa.Signal.attach(sig_handle) as s:      # hsa_amd_ipc_signal_attach ... destroy
        s.subtract(1)

Ownership (hsa_ext_amd.h at hsa_amd_ipc_memory_create: "a handle is valid
while the allocation it references remains accessible in any process"; KFD
reference-counts the shared buffer object): an `IpcHandle` is a value and
keeps nothing alive.  The exporter may free its Buffer at any time: that
ends its own mapping; every `IpcMemory` attached keeps the memory until it
is detached, and the handle still attaches while one does; once nobody has
the memory, attach raises ``HSA_STATUS_ERROR_INVALID_ARGUMENT``.  So attach
in the other process before the exporter frees (the header's advice).  An `IpcMemory` holds its Runtime and is detached exactly once
(``close``, ``with``, or when collected), whatever the order of closes in
either process.  Signals likewise: an attached signal keeps its value page
after the exporter destroys its own.

The importer maps the memory at an address of its own (in the exporting
process too).  ``agents`` names the agents to map it for (None: every GPU).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import hsa_error
from ._address import Addressed
from ._common import agent_handle, api

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime

_HANDLE_BYTES = 32      # hsa_amd_ipc_memory_t: uint32_t handle[8]


@dataclass(frozen=True)
class IpcHandle:
    """What a process needs to attach shared memory or a signal: ``data`` (the
    runtime's 32-byte ``hsa_amd_ipc_memory_t``), ``size`` in bytes and ``kind``
    (``'memory'`` or ``'signal'``).  Picklable; meaningful on the same machine."""

    data: bytes
    size: int
    kind: str = "memory"

    def __post_init__(self) -> None:
        if not isinstance(self.data, (bytes, bytearray)) or len(self.data) != _HANDLE_BYTES:
            raise ValueError(f"an IPC handle is {_HANDLE_BYTES} bytes, not "
                             f"{len(self.data) if isinstance(self.data, (bytes, bytearray)) else self.data!r}")
        if self.kind not in ("memory", "signal"):
            raise ValueError(f"kind must be 'memory' or 'signal', not {self.kind!r}")

    def _native(self) -> Any:
        ffi, _ = api()
        out = ffi.new("hsa_amd_ipc_memory_t *")
        ffi.memmove(out, bytes(self.data), _HANDLE_BYTES)
        return out

    @classmethod
    def _from_native(cls, native: Any, size: int, kind: str) -> IpcHandle:
        ffi, _ = api()
        return cls(bytes(ffi.buffer(native, _HANDLE_BYTES)), size, kind)


def ipc_export(buffer: Any, size: int | None = None) -> IpcHandle:
    """An `IpcHandle` for a pool allocation (hsa_amd_ipc_memory_create).

    ``size`` defaults to the buffer's; ROCr takes only an allocation's base
    and its full size (``HSA_STATUS_ERROR_INVALID_ARGUMENT`` otherwise).

    Args:
        buffer: An `rocpy.hsa.Buffer` from a pool.
        size: The bytes to share; None: the buffer's size.

    Returns:
        The `IpcHandle` (picklable) that `IpcMemory.attach` takes in another process.

    Raises:
        TypeError: ``buffer`` is not an `rocpy.hsa.Buffer`.
        rocpy.HsaError: ROCr refused (its status).
    """
    from .memory import Buffer
    if not isinstance(buffer, Buffer):
        raise TypeError(f"buffer must be an hsa.Buffer, not {type(buffer).__name__}")
    ptr = buffer._require_open()
    nbytes = buffer.size if size is None else _size(size)
    ffi, lib = api()
    out = ffi.new("hsa_amd_ipc_memory_t *")
    st = lib.hsa_amd_ipc_memory_create(ffi.cast("void *", ptr), nbytes, out)
    if st:
        raise hsa_error(st, "hsa_amd_ipc_memory_create")
    return IpcHandle._from_native(out, nbytes, "memory")


def _size(size: Any) -> int:
    if isinstance(size, bool) or not hasattr(type(size), "__index__"):
        raise TypeError(f"size must be an int, not {type(size).__name__}")
    size = size.__index__()
    if size <= 0 or size >= 1 << 64:
        raise ValueError(f"size must be positive and fit in size_t, got {size}")
    result: int = size
    return result


def _detach(lib: Any, ptr: Any) -> None:
    st = lib.hsa_amd_ipc_memory_detach(ptr)
    if st:
        raise hsa_error(st, "hsa_amd_ipc_memory_detach")


def attach_runtime(handle: Any, runtime: Any) -> Runtime:
    """The open `Runtime` an attach (`IpcMemory`, `Signal.attach`) makes its object
    under, after checking its arguments: ``handle`` an `IpcHandle`, ``runtime`` a
    `Runtime` or None (the current one)."""
    from .runtime import Runtime
    if not isinstance(handle, IpcHandle):
        raise TypeError(f"handle must be an hsa.IpcHandle, not {type(handle).__name__}")
    if runtime is not None and not isinstance(runtime, Runtime):
        raise TypeError(f"runtime must be an hsa.Runtime, not {type(runtime).__name__}")
    rt = runtime if runtime is not None else Runtime.current()
    rt._require_open()
    return rt


class IpcMemory(Addressed):
    """Memory another process exported, mapped here; detached at release.

    ``ptr`` is the address here (an int; `hsa.copy` and kernel arguments
    take the object itself), ``size`` the exported size, ``agents`` those it
    was mapped for (None: every GPU).
    """

    def __init__(self, handle: IpcHandle, agents: Sequence[Agent] | None = None, *,
                 runtime: Runtime | None = None) -> None:
        rt = attach_runtime(handle, runtime)
        ffi, lib = api()
        n = 0
        arr = ffi.NULL
        self.agents: list[Agent] | None = None if agents is None else list(agents)
        if self.agents is not None:
            if not self.agents:
                raise ValueError("agents must name at least one agent (None: every GPU)")
            n = len(self.agents)
            arr = ffi.new("hsa_agent_t[]", n)
            for i, a in enumerate(self.agents):
                arr[i] = agent_handle(a, "each of agents")
        out = ffi.new("void **")
        st = lib.hsa_amd_ipc_memory_attach(handle._native(), handle.size, n, arr, out)
        if st:
            raise hsa_error(st, "hsa_amd_ipc_memory_attach")
        self.size: int = handle.size
        super().__init__(int(ffi.cast("uintptr_t", out[0])), (_detach, lib, out[0]), parents=(rt,))

    @classmethod
    def attach(cls, handle: IpcHandle, agents: Sequence[Agent] | None = None, *,
               runtime: Runtime | None = None) -> IpcMemory:
        """Attach `handle` (hsa_amd_ipc_memory_attach): the same as the constructor."""
        return cls(handle, agents, runtime=runtime)

    def copy_from(self, src: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: all) from `src` into this memory (hsa_memory_copy)."""
        from .transfer import copy
        copy(self.ptr, src, self.size if size is None else size)

    def copy_to(self, dst: Any, size: int | None = None) -> None:
        """Copy ``size`` bytes (default: all) of this memory to `dst` (hsa_memory_copy)."""
        from .transfer import copy
        copy(dst, self.ptr, self.size if size is None else size)

    def __repr__(self) -> str:
        h = self._h
        state = "detached" if h is None else f"ptr={h:#x}"
        return f"<hsa.IpcMemory {state} {self.size} bytes>"
