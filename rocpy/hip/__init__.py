"""HIP: devices, contexts, memory, streams, events, modules, graphs, hipRTC.

The Pythonic layer over HIP (ARCHITECTURE.md, "rocpy.hip")::

    from rocpy.hip import Device, Context, Stream, Module
    dev = Device(0)
    with dev.create_stream(non_blocking=True) as s:
        buf = dev.context.alloc(n * 4)
        buf.copy_from(host_array, stream=s)
        k = Module.load("vadd.hsaco", dev)["vadd"]
        k.launch(n // 256, 256, (a, b, buf, np.int32(n)), stream=s)

Every object that owns a native handle is a `rocpy._handle.Handle` (close
once, parents outlive children, finalizers on rocpy's reaper thread); every
failure raises a `rocpy.HipError` subclass; nothing returns a status.

``rocpy.hip.lib`` / ``rocpy.hip.ffi`` are the raw cffi module: every
function, type and constant of ``hip_runtime_api.h`` and ``hiprtc.h`` is
there.  ``rocpy.hip.missing`` lists the functions the header declares but
the loaded library does not export; calling one returns
``hipErrorNotSupported``.  ``rocpy.hip.stub_unsupported`` maps each HIP
function the stub runtime cannot model (textures, OpenGL, ...) to the reason;
those return hipamd's status for an unsupported feature there (empty on real
backends).  Importing this package loads no backend; the first use does.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import _backend
from ._api import forget_current_device
from ._dlpack import from_dlpack
from .context import Context
from .device import Device, MemInfo, device_count
from .event import Event
from .graph import Graph, GraphExec, GraphNode
from ._launcher import LaunchConfig, launch
from .memory import Buffer, DeviceBuffer, HostBuffer, ManagedBuffer, TypedBuffer
from .module import Kernel, KernelNotFoundError, Module
from .program import Program
from .linker import Linker
from .stream import Stream

__all__ = [
    "Buffer", "Context", "Device", "DeviceBuffer", "Event", "Graph", "GraphExec", "GraphNode",
    "HostBuffer", "Kernel", "KernelNotFoundError", "LaunchConfig", "ManagedBuffer", "MemInfo", "Module",
    "Linker", "Program", "Stream", "TypedBuffer", "device_count", "forget_current_device", "from_dlpack", "launch",
]

if TYPE_CHECKING:
    # the raw cffi module as type checkers see it: the stub the build writes next to the
    # compiled module (rocpy/_build/typestub.py); the stub backend's declarations are the
    # amd backend's and the stub's own controls
    from .._lib_stub import ffi as ffi, lib as lib


def __getattr__(name: str) -> Any:
    if name in ("lib", "ffi", "missing"):
        backend = _backend.current()
        globals()["lib"], globals()["ffi"] = backend.lib, backend.ffi
        globals()["missing"] = backend.missing
        return globals()[name]
    if name == "stub_unsupported":
        globals()[name] = _stub_unsupported(_backend.current())
        return globals()[name]
    raise AttributeError(f"module 'rocpy.hip' has no attribute {name!r}")


def _stub_unsupported(backend: Any) -> dict[str, str]:
    """The stub's table of what it cannot model (``hip_unsupported.c``)."""
    lib, ffi = backend.lib, backend.ffi
    if not hasattr(lib, "rocpy_stub_unsupported_count"):
        return {}
    out = {}
    reason = ffi.new("char **")
    for i in range(lib.rocpy_stub_unsupported_count()):
        name = lib.rocpy_stub_unsupported_entry(i, reason, ffi.NULL)
        out[ffi.string(name).decode()] = ffi.string(reason[0]).decode()
    return out
