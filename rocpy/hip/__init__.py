"""HIP: ``rocpy.hip.lib`` / ``rocpy.hip.ffi`` are the raw cffi module.

Every function, type and constant of ``hip_runtime_api.h`` and ``hiprtc.h`` is
there.  ``rocpy.hip.missing`` lists the functions the header declares but the
loaded library does not export; calling one returns ``hipErrorNotSupported``.
"""
from __future__ import annotations

from typing import Any

from .. import _backend


def __getattr__(name: str) -> Any:
    if name in ("lib", "ffi", "missing"):
        backend = _backend.current()
        globals()["lib"], globals()["ffi"] = backend.lib, backend.ffi
        globals()["missing"] = backend.missing
        return globals()[name]
    raise AttributeError(f"module 'rocpy.hip' has no attribute {name!r}")
