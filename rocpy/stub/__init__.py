"""Control of the stub runtime from Python: kernel emulations, faults, counters.

Only meaningful on the ``stub`` backend; every function raises
``RuntimeError`` on a real one.
"""
from __future__ import annotations

from .control import (Dispatch, aql_overlap, clear_faults, device_count, hsa_busy_wait_ns, inject,
                      live_allocations, register_kernel, unregister_kernel)

__all__ = ["Dispatch", "aql_overlap", "clear_faults", "device_count", "hsa_busy_wait_ns", "inject",
           "live_allocations", "register_kernel", "unregister_kernel"]
