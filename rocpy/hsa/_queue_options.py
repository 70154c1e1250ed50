"""A `Queue`'s creation options, checked before anything native is made."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _args
from ._common import UINT32_MAX, api, unsigned
from ._queue_control import cu_mask_words, priority_value

if TYPE_CHECKING:
    from .agent import Agent

DEFAULT_SIZE = 4096
DEFAULT_KERNARG_BYTES = 1 << 20
DEFAULT_KERNARG_SEGMENTS = 4
MAX_KERNARG_SEGMENTS = 1 << 16   # each is a signal: a bound before the loop creating them


@dataclass(frozen=True)
class QueueOptions:
    """What `Queue(...)` was asked for, checked; sizes as hsa_queue_create takes them."""

    size: int
    kind: str
    kind_value: int
    on_error: Callable[[BaseException], Any] | None
    private_segment_size: int     # UINT32_MAX: no limit
    group_segment_size: int       # UINT32_MAX: no limit
    profiling: bool
    kernarg_bytes: int
    kernarg_segments: int
    cu_mask_words: list[int] | None   # None: leave every CU on
    priority: str
    priority_value: int


def queue_options(agent: Agent, size: int | None, kind: str,
                  on_error: Callable[[BaseException], Any] | None, *,
                  private_segment_size: int | None, group_segment_size: int | None,
                  profiling: bool, kernarg_bytes: int, kernarg_segments: int,
                  cu_mask: Iterable[int] | None = None, priority: str = "normal") -> QueueOptions:
    """Check `Queue`'s arguments (TypeError/ValueError naming the argument)."""
    _, lib = api()
    if on_error is not None and not callable(on_error):
        raise TypeError(f"on_error must be callable, not {on_error.__class__.__name__}")
    if size is None:
        size = DEFAULT_SIZE
        if agent.queue_max_size:      # 0 on agents without a packet processor
            size = min(max(size, agent.queue_min_size), agent.queue_max_size)
    size = _args.integer(size, "size")
    if size <= 0 or size & (size - 1) or size > UINT32_MAX:
        raise ValueError(f"queue size must be a positive power of two below 2**32, got {size!r}")
    kernarg_segments = _args.integer(kernarg_segments, "kernarg_segments", 1, MAX_KERNARG_SEGMENTS)
    kernarg_bytes = _args.integer(kernarg_bytes, "kernarg_bytes", 1, _args.U64)
    kinds = {"multi": lib.HSA_QUEUE_TYPE_MULTI, "single": lib.HSA_QUEUE_TYPE_SINGLE}
    if kind not in kinds:
        raise ValueError(f"queue kind must be 'multi' or 'single', not {kind!r}")
    if kernarg_segments < 1 or kernarg_bytes < kernarg_segments * 4096:
        raise ValueError("the kernarg ring needs at least one segment of 4096 bytes: "
                         "kernarg_bytes >= 4096 * kernarg_segments")
    private = UINT32_MAX if private_segment_size is None else \
        unsigned(private_segment_size, 32, "private_segment_size")
    group = UINT32_MAX if group_segment_size is None else \
        unsigned(group_segment_size, 32, "group_segment_size")
    words = None if cu_mask is None else cu_mask_words(cu_mask, agent.compute_units)
    return QueueOptions(size, kind, kinds[kind], on_error, private, group, bool(profiling),
                        kernarg_bytes, kernarg_segments, words, priority,
                        priority_value(priority))
