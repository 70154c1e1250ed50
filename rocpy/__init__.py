"""rocpy: Python bindings for the ROCm HSA runtime and HIP.

``rocpy.backend()`` says which runtime is in use (``amd``, ``nvidia`` or the
``stub`` CPU simulation) and why; ``rocpy.hsa.lib`` and ``rocpy.hip.lib`` are
the raw cffi modules.
"""
from __future__ import annotations

from ._backend import BackendInfo, BackendUnavailableError

__version__ = "0.1.0"


def backend() -> BackendInfo:
    """Which backend this process uses and why (chosen once, at first use)."""
    from . import _backend
    return _backend.current().info


__all__ = ["BackendInfo", "BackendUnavailableError", "backend", "__version__"]
