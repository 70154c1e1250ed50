"""A `Queue`'s native parts made in order, undone in reverse when one step fails.

The HSA queue (with rocpy's error trampoline registered on the dispatcher),
the kernarg ring (CPU kernarg-pool memory the GPU may read), one retirement
signal per kernarg segment, and the C submission state
(``rocpy/_native/fast/hsa/aql.c``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._dispatcher import dispatcher
from ..errors import hsa_error
from ._common import api, ticks
from ._queue_control import set_cu_mask, set_priority
from ._queue_options import QueueOptions
from ._queue_state import QueueFailed

if TYPE_CHECKING:
    from .agent import Agent

# How long one blocking HSA wait lasts before rocpy looks for queue errors (and
# Python for Ctrl-C).  Not shorter: ROCr's interrupt-signal wait polls 200 us,
# then sleeps the time left truncated to whole milliseconds, so the last partial
# millisecond of every slice is a busy loop (a 1 ms slice was 80 % busy).
WAIT_SLICE = 0.05


@dataclass
class NativeQueue:
    """What `create_native` made; the Queue's release recipe undoes it (`_queue_state.destroy`)."""

    queue: Any          # hsa_queue_t *
    aql: Any            # the C submission state
    kernarg: Any        # the kernarg ring
    retire: list[Any]   # hsa_signal_t per kernarg segment
    failed: QueueFailed
    token: int          # the dispatcher registration of `failed`


def create_native(agent: Agent, h_agent: Any, opts: QueueOptions) -> NativeQueue:
    """hsa_queue_create and what rocpy's submission needs; on failure nothing is left."""
    ffi, lib = api()
    failed = QueueFailed(lib, opts.on_error, f"AQL queue of {agent.name!r} (asynchronous error)")
    d = dispatcher()
    token = d.register(failed, once=False)
    trampoline = ffi.cast("void (*)(hsa_status_t, hsa_queue_t *, void *)",
                          ffi.addressof(lib, "rocpy_callqueue_queue_error"))
    out = ffi.new("hsa_queue_t **")
    st = lib.hsa_queue_create(h_agent, opts.size, opts.kind_value, trampoline,
                              ffi.cast("void *", token), opts.private_segment_size,
                              opts.group_segment_size, out)
    if st:
        d.unregister(token)
        raise hsa_error(st, "hsa_queue_create")
    queue = out[0]
    kernarg = None
    retire: list[Any] = []
    aql = ffi.NULL
    try:
        kernarg = kernarg_memory(agent, opts.kernarg_bytes)
        for _ in range(opts.kernarg_segments):
            sig = ffi.new("hsa_signal_t *")
            st = lib.hsa_signal_create(0, 0, ffi.NULL, sig)
            if st:
                raise hsa_error(st, "hsa_signal_create")
            retire.append(sig[0])
        retire_array = ffi.new("hsa_signal_t[]", retire)
        aql = lib.rocpy_aql_create(queue, kernarg, opts.kernarg_bytes, opts.kernarg_segments,
                                   retire_array, ticks(WAIT_SLICE))
        if aql == ffi.NULL:
            raise MemoryError("cannot allocate the queue's submission state")
        if opts.cu_mask_words is not None:
            set_cu_mask(lib, queue, opts.cu_mask_words)
        if opts.priority != "normal":
            set_priority(lib, queue, opts.priority_value)
        if opts.profiling:
            st = lib.hsa_amd_profiling_set_profiler_enabled(queue, 1)
            if st:
                raise hsa_error(st, "hsa_amd_profiling_set_profiler_enabled")
    except BaseException:
        d.unregister(token)
        lib.hsa_queue_destroy(queue)
        if aql != ffi.NULL:
            lib.rocpy_aql_free(aql)
        for sig in retire:
            lib.hsa_signal_destroy(sig)
        if kernarg is not None:
            lib.hsa_amd_memory_pool_free(kernarg)
        raise
    with failed.lock:
        failed.aql = aql
    return NativeQueue(queue, aql, kernarg, retire, failed, token)


def kernarg_memory(agent: Agent, nbytes: int) -> Any:
    """The kernarg ring: CPU kernarg pool memory the queue's GPU may read."""
    ffi, lib = api()
    pools = [p for cpu in agent.runtime._listed_agents() if cpu.is_cpu
             for p in cpu.pools(kernarg=True)]
    if not pools:
        raise RuntimeError("the HSA runtime lists no kernarg pool on a CPU agent")
    out = ffi.new("void **")
    st = lib.hsa_amd_memory_pool_allocate(pools[0]._require_open(), nbytes, 0, out)
    if st:
        raise hsa_error(st, "hsa_amd_memory_pool_allocate")
    gpu = ffi.new("hsa_agent_t[1]", [agent._require_open()])
    st = lib.hsa_amd_agents_allow_access(1, gpu, ffi.NULL, out[0])
    if st:
        lib.hsa_amd_memory_pool_free(out[0])
        raise hsa_error(st, "hsa_amd_agents_allow_access")
    return out[0]
