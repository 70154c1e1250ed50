"""`Queue`'s dispatch profiling: the switch and `DispatchTime`."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import hsa_error
from ._common import TickSpan, api, signal_handle, timestamp_frequency
from .signal import Signal


@dataclass(frozen=True)
class DispatchTime(TickSpan):
    """When a dispatch ran (hsa_amd_profiling_get_dispatch_time), in system timestamp ticks."""


class Profiling:
    """The profiling half of `Queue` (a mixin: the state is the Queue's)."""

    # mypy checks assignments against a class's own __slots__; a mixin's state is its Queue's
    if not TYPE_CHECKING:
        __slots__ = ()
    _agent_h: Any
    _bad: bool
    _lib: Any
    _lock: Any
    _profiling: bool

    @property
    def profiling(self) -> bool:
        """Whether dispatches record timestamps (hsa_amd_profiling_set_profiler_enabled)."""
        return self._profiling

    @profiling.setter
    def profiling(self, enable: bool) -> None:
        if self._bad:
            self._check()  # type: ignore[attr-defined]
        with self._lock:
            st = self._lib.hsa_amd_profiling_set_profiler_enabled(
                self._require_open(), 1 if enable else 0)  # type: ignore[attr-defined]
        if st:
            raise hsa_error(st, "hsa_amd_profiling_set_profiler_enabled")
        self._profiling = bool(enable)

    def dispatch_time(self, signal: Signal) -> DispatchTime:
        """When the dispatch that completed `signal` ran, in system ticks (profiling on).

        hsa_amd_profiling_get_dispatch_time already returns system-domain
        times (ROCr GpuAgent::TranslateTime): no further conversion.
        """
        ffi, lib = api()
        self._require_open()  # type: ignore[attr-defined]
        h = signal_handle(signal)
        out = ffi.new("hsa_amd_profiling_dispatch_time_t *")
        st = lib.hsa_amd_profiling_get_dispatch_time(self._agent_h, h, out)
        if st:
            raise hsa_error(st, "hsa_amd_profiling_get_dispatch_time")
        return DispatchTime(out.start, out.end, timestamp_frequency())
