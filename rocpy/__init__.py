"""rocpy: Python bindings for the ROCm HSA runtime and HIP.

``rocpy.backend()`` says which runtime is in use (``amd``, ``nvidia`` or the
``stub`` CPU simulation) and why; ``rocpy.hsa.lib`` and ``rocpy.hip.lib`` are
the raw cffi modules.
"""
from __future__ import annotations

from . import debug
from ._backend import BackendInfo, BackendUnavailableError
from .errors import (CallbackError, ClosedError, HipError, HiprtcError, HsaError,
                     InvalidHandleError, InvalidValueError, NoDeviceError,
                     NotInitializedError, NotReadyError, NotSupportedError,
                     OutOfMemoryError, RocpyError, StatusError)

__version__ = "0.1.0"


def backend() -> BackendInfo:
    """Which backend this process uses and why (chosen once, at first use)."""
    from . import _backend
    return _backend.current().info


__all__ = [
    "BackendInfo", "BackendUnavailableError", "CallbackError", "ClosedError", "HipError",
    "HiprtcError", "HsaError", "InvalidHandleError", "InvalidValueError", "NoDeviceError",
    "NotInitializedError", "NotReadyError", "NotSupportedError", "OutOfMemoryError",
    "RocpyError", "StatusError", "backend", "debug", "__version__",
]
