"""`Queue`'s scheduling controls: the CU mask, the priority, the scratch size asked.

The CU mask (hsa_amd_queue_cu_set_mask / _get_mask) is a set of compute-unit
indices of the queue's agent.  ROCr (AqlQueue::SetCUMasking) silently cuts a
mask to the agent's CU count and passes a mask of no CU to the driver;
rocpy refuses both (`ValueError` naming the CU), since neither is what the
caller meant.  What ROCr itself refuses is raised as its `HsaError`: on
gfx10+ agents (CUs paired in WGPs, ROCm 5.3 on) a mask enabling one CU of
a pair is ``HSA_STATUS_ERROR_INVALID_ARGUMENT``.  ``HSA_STATUS_CU_MASK_REDUCED``
(the process-wide ``HSA_CU_MASK`` took CUs away) is a success: a
`CUMaskReducedWarning`, and the mask read back is what the queue got.

On the stub the mask and the priority are kept and read back but change
nothing: its kernels run on CPU threads, with no CUs to mask and no
hardware scheduler to prioritise.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .. import _args
from ..errors import hsa_error
from ._common import api, const

if TYPE_CHECKING:
    from .agent import Agent

PRIORITIES = ("low", "normal", "high")


class CUMaskReducedWarning(UserWarning):
    """ROCr applied fewer CUs than asked (HSA_STATUS_CU_MASK_REDUCED: the HSA_CU_MASK setting)."""


def cu_mask_words(mask: Iterable[int] | None, cu_count: int) -> list[int]:
    """A CU index set as hsa_amd_queue_cu_set_mask's 32-bit words ([] for None: every CU)."""
    if mask is None:
        return []
    if isinstance(mask, (str, bytes)) or not isinstance(mask, Iterable):
        raise TypeError(f"cu_mask must be an iterable of CU indices or None, not "
                        f"{type(mask).__name__}")
    cus = set()
    for cu in mask:
        i = _args.integer(cu, "cu_mask entry")
        if not 0 <= i < cu_count:
            raise ValueError(f"cu_mask names CU {i}; the agent has {cu_count} CUs (0..{cu_count - 1})")
        cus.add(i)
    if not cus:
        raise ValueError("cu_mask enables no CU (dispatches could never run): "
                         "pass None for every CU")
    words = [0] * ((cu_count + 31) // 32)
    for i in cus:
        words[i // 32] |= 1 << (i % 32)
    return words


def priority_value(priority: str) -> int:
    """hsa_amd_queue_priority_t of 'low' / 'normal' / 'high'."""
    _, lib = api()
    if priority not in PRIORITIES:
        raise ValueError(f"priority must be one of {PRIORITIES}, not {priority!r}")
    result: int = getattr(lib, f"HSA_AMD_QUEUE_PRIORITY_{priority.upper()}")
    return result


def set_cu_mask(lib: Any, queue: Any, words: list[int]) -> None:
    """hsa_amd_queue_cu_set_mask; CU_MASK_REDUCED is a warning."""
    ffi, _ = api()
    arr = ffi.new("uint32_t[]", words) if words else ffi.NULL
    st = lib.hsa_amd_queue_cu_set_mask(queue, 32 * len(words), arr)
    if st == const("HSA_STATUS_CU_MASK_REDUCED", 0x1001):
        warnings.warn("ROCr applied fewer CUs than the cu_mask asked (HSA_STATUS_CU_MASK_REDUCED: "
                      "HSA_CU_MASK restricts this agent)", CUMaskReducedWarning, stacklevel=3)
    elif st:
        raise hsa_error(st, "hsa_amd_queue_cu_set_mask")


def set_priority(lib: Any, queue: Any, value: int) -> None:
    st = lib.hsa_amd_queue_set_priority(queue, value)
    if st:
        raise hsa_error(st, "hsa_amd_queue_set_priority")


class Control:
    """The scheduling half of `Queue` (a mixin: the state is the Queue's)."""

    # mypy checks assignments against a class's own __slots__; a mixin's state is its Queue's
    if not TYPE_CHECKING:
        __slots__ = ()
    _bad: bool
    _lib: Any
    _lock: Any
    _priority: str
    _private_segment_size: int | None
    agent: Agent

    @property
    def cu_mask(self) -> frozenset[int]:
        """The CUs the queue may use (hsa_amd_queue_cu_get_mask); set with an iterable of
        CU indices, or None for every CU (hsa_amd_queue_cu_set_mask)."""
        ffi, _ = api()
        n = self.agent.compute_units
        words = ffi.new("uint32_t[]", (n + 31) // 32)
        with self._lock:
            st = self._lib.hsa_amd_queue_cu_get_mask(self._require_open(),  # type: ignore[attr-defined]
                                                     32 * len(words), words)
        if st:
            raise hsa_error(st, "hsa_amd_queue_cu_get_mask")
        return frozenset(32 * w + b for w in range(len(words)) for b in range(32)
                         if words[w] >> b & 1)

    @cu_mask.setter
    def cu_mask(self, mask: Iterable[int] | None) -> None:
        if self._bad:
            self._check()  # type: ignore[attr-defined]
        words = cu_mask_words(mask, self.agent.compute_units)
        with self._lock:
            set_cu_mask(self._lib, self._require_open(), words)  # type: ignore[attr-defined]

    @property
    def priority(self) -> str:
        """'low', 'normal' (the default) or 'high' (hsa_amd_queue_set_priority; ROCr has no
        getter: this is the last one set)."""
        return self._priority

    @priority.setter
    def priority(self, priority: str) -> None:
        if self._bad:
            self._check()  # type: ignore[attr-defined]
        value = priority_value(priority)
        with self._lock:
            set_priority(self._lib, self._require_open(), value)  # type: ignore[attr-defined]
        self._priority = priority

    @property
    def private_segment_size(self) -> int | None:
        """The scratch bytes per work-item asked at creation (None: the agent's default).

        hsa_queue_create's hint: ROCr sizes the queue's initial scratch from it
        (GpuAgent::QueueCreate, at most 262128 bytes) and grows it for larger
        dispatches; no HSA call reads it back.
        """
        return self._private_segment_size
