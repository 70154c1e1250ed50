"""The HSA runtime: ``rocpy.hsa.lib`` / ``rocpy.hsa.ffi`` are the raw cffi module.

Every function, type and constant of ``hsa.h`` and ``hsa_ext_amd.h`` is there.
HSA exists on the ``amd`` and ``stub`` backends, not on ``nvidia``.
"""
from __future__ import annotations

from typing import Any

from .. import _backend


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
