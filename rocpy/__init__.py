"""rocpy: Python bindings for the ROCm HSA runtime and HIP.

``rocpy.backend()`` says which runtime is in use (``amd``, ``nvidia`` or the
``stub`` CPU simulation) and why; ``rocpy.hsa.lib`` and ``rocpy.hip.lib`` are
the raw cffi modules.  ``rocpy.hsa``, ``rocpy.hip`` and ``rocpy.codeobject``
are reachable as attributes after ``import rocpy`` (imported on first use).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import debug
from ._backend import BackendInfo, BackendUnavailableError, NotBuiltError
from .errors import (CallbackError, ClosedError, ForkError, HipError, HiprtcError, HsaError,
                     InvalidHandleError, InvalidValueError, NoDeviceError,
                     NotInitializedError, NotReadyError, NotSupportedError,
                     OutOfMemoryError, RocpyError, StatusError)

#: The one version string: pyproject.toml reads it from here (``dynamic``).
__version__ = "0.1.0"

#: Subpackages reachable as attributes of ``rocpy`` without importing them first.
_SUBPACKAGES = ("hsa", "hip", "codeobject")

_HIP_NAMES = ("Device", "Context", "Stream", "Event", "DeviceBuffer", "HostBuffer",
              "ManagedBuffer", "Module", "Kernel", "Graph", "GraphExec", "Program",
              "from_dlpack", "LaunchConfig", "launch")


if TYPE_CHECKING:   # what __getattr__ imports on first use, as type checkers should see it
    from . import codeobject as codeobject, hip as hip, hsa as hsa
    from .hip import (Context as Context, Device as Device, DeviceBuffer as DeviceBuffer,
                      Event as Event, Graph as Graph, GraphExec as GraphExec,
                      HostBuffer as HostBuffer, Kernel as Kernel, ManagedBuffer as ManagedBuffer,
                      Module as Module, Program as Program, Stream as Stream,
                      from_dlpack as from_dlpack, LaunchConfig as LaunchConfig, launch as launch)


def __getattr__(name: str) -> Any:
    # subpackages and the HIP objects, imported on first use so `import rocpy` stays cheap
    if name in _SUBPACKAGES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    if name in _HIP_NAMES:
        from . import hip
        value = getattr(hip, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rocpy' has no attribute {name!r}")


def backend() -> BackendInfo:
    """Which backend this process uses and why (chosen once, at first use)."""
    from . import _backend
    return _backend.current().info


__all__ = [
    "BackendInfo", "BackendUnavailableError", "CallbackError", "ClosedError", "ForkError", "HipError",
    "HiprtcError", "HsaError", "InvalidHandleError", "InvalidValueError", "NoDeviceError",
    "NotBuiltError", "NotInitializedError", "NotReadyError", "NotSupportedError", "OutOfMemoryError",
    "RocpyError", "StatusError", "backend", "debug", "__version__",
    # _HIP_NAMES, spelled out: type checkers read __all__ only as a literal (tests/test_api_surface.py)
    "Device", "Context", "Stream", "Event", "DeviceBuffer", "HostBuffer", "ManagedBuffer", "Module",
    "Kernel", "Graph", "GraphExec", "Program", "from_dlpack", "LaunchConfig", "launch",
]
