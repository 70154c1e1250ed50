"""Control of the stub runtime from Python: kernel emulations, faults, counters,
and the ROCm release it emulates (``rocm_version``, ``ROCPY_STUB_ROCM``).

Only meaningful on the ``stub`` backend; every function raises
``RuntimeError`` on a real one.
"""
from __future__ import annotations

from .control import (Dispatch, aql_overlap, clear_faults, cpu_builds, device_count, hsa_busy_wait_ns, inject,
                      last_memcpy_kind, live_allocations, register_kernel, take_failures, unregister_kernel,
                      use_builtin)
from .version import Rule, built_hsa_version, built_version, hsa_version, rocm_version, rules

__all__ = ["Dispatch", "Rule", "aql_overlap", "built_hsa_version", "built_version", "clear_faults", "cpu_builds",
           "device_count", "hsa_busy_wait_ns", "hsa_version", "inject", "last_memcpy_kind", "live_allocations",
           "register_kernel", "rocm_version", "rules",
           "take_failures", "unregister_kernel", "use_builtin"]
