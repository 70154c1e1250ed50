"""Copy engines: a copy on a chosen SDMA engine, which engines are free, copy timestamps.

::

    hsa.copy_on_engine(buf, host, n, engine=1, completion=sig)   # SDMA1
    hsa.engine_status(dst_agent=gpu, src_agent=cpu)               # {0, 1}: the free engines
    hsa.copy_profiling(True)                                      # timestamps on later copies
    hsa.copy_time(sig).seconds                                    # when that copy ran

`copy_on_engine` and `engine_status` need headers of ROCm 5.7 or later
(hsa_amd_memory_async_copy_on_engine, hsa_amd_memory_copy_engine_status);
built against older ones they raise `NotSupportedError` naming the function.
Engines are numbered as ``hsa_amd_sdma_engine_id_t``'s bits: engine ``i`` is
``HSA_AMD_SDMA_ENGINE_<i>``.  On the stub an engine is a worker thread of
its own: the choice decides which copies queue behind which, not speed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _args
from ..errors import hsa_error
from . import _features
from ._common import TickSpan, agent_handle, api, signal_handle, timestamp_frequency
from .transfer import _submit_async

if TYPE_CHECKING:
    from .agent import Agent
    from .signal import Signal

MAX_ENGINES = 32   # hsa_amd_sdma_engine_id_t is a 32-bit mask


def copy_on_engine(dst: Any, src: Any, size: int, *, engine: int, completion: Signal,
                   deps: Sequence[Signal] = (), dst_agent: Agent | None = None,
                   src_agent: Agent | None = None, force_sdma: bool = False) -> None:
    """`copy_async` on SDMA engine `engine` (hsa_amd_memory_async_copy_on_engine).

    ROCr refuses an engine the copy agent does not have, or (gfx90a) SDMA0
    for anything but a host-to-device copy, with
    ``HSA_STATUS_ERROR_INVALID_ARGUMENT``; a copy within one GPU runs on its
    blit kernel unless ``force_sdma``.
    """
    _features.function("hsa_amd_memory_async_copy_on_engine")
    engine = _args.integer(engine, "engine", 0, MAX_ENGINES - 1)
    _submit_async("hsa_amd_memory_async_copy_on_engine", (1 << engine, bool(force_sdma)),
                  dst, src, size, completion, deps, dst_agent, src_agent)


def engine_status(dst_agent: Agent, src_agent: Agent) -> frozenset[int]:
    """The engines free for copies from `src_agent` to `dst_agent` (hsa_amd_memory_copy_engine_status).

    Empty when none is free (ROCr's HSA_STATUS_ERROR_OUT_OF_RESOURCES).
    The agents must differ and one must be a GPU (ROCr: INVALID_AGENT, ERROR).
    """
    fn = _features.function("hsa_amd_memory_copy_engine_status")
    ffi, lib = api()
    d = agent_handle(dst_agent, "dst_agent")
    s = agent_handle(src_agent, "src_agent")
    out = ffi.new("uint32_t *")
    st = fn(d, s, out)
    if st == lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES:
        return frozenset()
    if st:
        raise hsa_error(st, "hsa_amd_memory_copy_engine_status")
    return frozenset(i for i in range(MAX_ENGINES) if out[0] >> i & 1)


def copy_profiling(enable: bool) -> None:
    """Record timestamps for async copies submitted from now on
    (hsa_amd_profiling_async_copy_enable; process-wide, off by default)."""
    _, lib = api()
    st = lib.hsa_amd_profiling_async_copy_enable(bool(enable))
    if st:
        raise hsa_error(st, "hsa_amd_profiling_async_copy_enable")


@dataclass(frozen=True)
class CopyTime(TickSpan):
    """When an async copy ran (hsa_amd_profiling_get_async_copy_time), in system ticks."""


def copy_time(completion: Signal) -> CopyTime:
    """The times of the profiled copy that signalled `completion`.

    ROCr answers HSA_STATUS_ERROR for a signal no profiled copy completed
    (profiling off when it was submitted, or not a copy's signal).
    """
    ffi, lib = api()
    h = signal_handle(completion, "completion")
    out = ffi.new("hsa_amd_profiling_async_copy_time_t *")
    st = lib.hsa_amd_profiling_get_async_copy_time(h, out)
    if st:
        raise hsa_error(st, "hsa_amd_profiling_get_async_copy_time")
    return CopyTime(int(out.start), int(out.end), timestamp_frequency())
