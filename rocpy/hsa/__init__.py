"""The HSA runtime from Python: agents, memory, signals, AQL queues, executables.

::

    from rocpy import hsa
    with hsa.Runtime() as rt:                              # hsa_init / hsa_shut_down
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        pool = gpu.pools(segment="global", fine_grained=False)[0]
        buf = pool.allocate(1 << 20); buf.allow_access([cpu])
        sig = hsa.Signal(1)                                # load/store/add/cas/... and waits
        q = gpu.create_queue(size=4096)                    # AQL ring, doorbell
        exe = hsa.Executable.load(gpu, "vadd.hsaco"); k = exe.kernel("vadd")
        q.dispatch(k, grid=(n,), workgroup=(256,), args=(...), completion_signal=sig)
        sig.wait("eq", 0, timeout=1.0)

Every object owning a native handle (Buffer, Signal, SignalGroup, Queue,
Executable, LockedMemory, IpcMemory) holds its `Runtime`, so HSA is never shut down under it; what
queued work uses (kernels, argument buffers, completion signals) lives until
the work is done.  Each is released once (``close()``, ``with``, or when
collected, by rocpy's reaper thread) and refuses use once closed.  Agents,
pools and kernels are the runtime's own objects, borrowed.  Failing calls
raise `rocpy.HsaError` subclasses.

Between processes: `ipc_export` / `IpcMemory` and ``Signal(ipc=True)`` /
`Signal.attach` (`rocpy.hsa.ipc`); GPU memory faults reach
`Runtime.on_system_event` handlers (`rocpy.hsa.events`).

``rocpy.hsa.lib`` / ``rocpy.hsa.ffi`` are the raw cffi module: every
function, type and constant of ``hsa.h`` and ``hsa_ext_amd.h``.  HSA exists
on the ``amd`` and ``stub`` backends, not on ``nvidia``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _backend
from .agent import Agent, LinkInfo, PoolAccess
from .copy_engine import CopyTime, copy_on_engine, copy_profiling, copy_time, engine_status
from .dispatch import Dispatch
from .events import MemoryFault, SystemEvent
from .executable import Executable, Kernel
from .ipc import IpcHandle, IpcMemory, ipc_export
from .locked import LockedMemory, lock
from .memory import AccessError, Buffer, Pool, Region
from .pointer import PointerInfo, pointer_info
from ._queue_control import CUMaskReducedWarning
from .queue import DispatchTime, Queue
from .runtime import Runtime
from .signal import Signal, WaitTimeout
from .signal_group import SignalGroup
from .svm import SvmAttributes, svm_attributes, svm_prefetch, svm_set_attributes
from .transfer import copy, copy_async, fill
from .vmem import AddressRange, Mapping, PhysicalMemory

__all__ = [
    "AccessError", "AddressRange", "Agent", "Buffer", "CUMaskReducedWarning", "CopyTime", "Dispatch",
    "DispatchTime", "Executable", "IpcHandle", "IpcMemory", "Kernel", "LinkInfo", "LockedMemory", "Mapping",
    "MemoryFault", "PhysicalMemory", "PointerInfo", "Pool", "PoolAccess", "Queue", "Region", "Runtime", "Signal",
    "SignalGroup", "SvmAttributes", "SystemEvent", "WaitTimeout", "copy", "copy_async", "copy_on_engine",
    "copy_profiling", "copy_time", "engine_status", "fill", "ipc_export", "lock", "pointer_info",
    "svm_attributes", "svm_prefetch", "svm_set_attributes",
]

if TYPE_CHECKING:
    # the raw cffi module as type checkers see it: the stub the build writes next to the
    # compiled module (rocpy/_build/typestub.py)
    from .._lib_stub import ffi as ffi, lib as lib


def __getattr__(name: str) -> Any:
    if name in ("lib", "ffi"):
        backend = _backend.current()
        if not backend.has_hsa:
            raise AttributeError(
                f"the HSA runtime does not exist on the {backend.name!r} backend "
                "(HSA is AMD-only; use rocpy.hip)")
        globals()["lib"], globals()["ffi"] = backend.lib, backend.ffi
        return globals()[name]
    raise AttributeError(f"module 'rocpy.hsa' has no attribute {name!r}")
