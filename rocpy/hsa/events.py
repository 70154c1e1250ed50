"""System events (GPU memory faults, ...) delivered to Python handlers on a `Runtime`.

::

    def on_event(event):
        if isinstance(event, hsa.MemoryFault):
            print(event.agent, hex(event.address), event.reasons)
            return True           # handled: the runtime does not abort the process
        return False

    rt.on_system_event(on_event)

The rule is ROCr's (``Runtime::VMFaultHandler``): on a GPU memory fault the
runtime calls every handler registered with
``hsa_amd_register_system_event_handler``, on its own async-events thread;
unless at least one returns ``HSA_STATUS_SUCCESS`` it prints "Memory access
fault by GPU ..." and calls ``abort()``.  A Python handler returning True is
that ``HSA_STATUS_SUCCESS``; False, None or an exception (printed to stderr)
is not.  The faulting queue stays broken either way (its packets are not
processed again): surviving a fault only lets the process report and exit
cleanly, or carry on with other queues.

Handlers run synchronously on the runtime's thread, holding the GIL: keep
them short and never wait in them for GPU work (the thread that would finish
it is the one running the handler).  A handler is called while its Runtime
is open; HSA has no unregistration, so closing the Runtime is how it stops.

rocpy registers one C handler (``fast/hsa/fault.c``) with the runtime; the
Python handlers are reached through its hook, and when none handles an event
the C report is printed before the runtime aborts.
"""
from __future__ import annotations

import sys
import threading
import traceback
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._common import api, const

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime

# reason bits of hsa_amd_gpu_memory_fault_info_t.fault_reason_mask, by rocpy's names
_REASONS = (("page_not_present", "HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT"),
            ("read_only", "HSA_AMD_MEMORY_FAULT_READ_ONLY"),
            ("no_execute", "HSA_AMD_MEMORY_FAULT_NX"),
            ("host_only", "HSA_AMD_MEMORY_FAULT_HOST_ONLY"),
            ("dram_ecc", "HSA_AMD_MEMORY_FAULT_DRAMECC"),
            ("imprecise", "HSA_AMD_MEMORY_FAULT_IMPRECISE"),
            ("sram_ecc", "HSA_AMD_MEMORY_FAULT_SRAMECC"),
            ("hang", "HSA_AMD_MEMORY_FAULT_HANG"))

Handler = Callable[["SystemEvent"], Any]

_lock = threading.Lock()
_handlers: list[tuple[weakref.ref[Runtime], Handler]] = []
_hook: Any = None       # the cffi callback, kept alive for the process


@dataclass(frozen=True)
class SystemEvent:
    """An event of a type rocpy does not decode: ``type`` is ``hsa_amd_event_type_t``'s value."""

    type: int


@dataclass(frozen=True)
class MemoryFault(SystemEvent):
    """``HSA_AMD_GPU_MEMORY_FAULT_EVENT``: the agent, the virtual address accessed and the reasons.

    ``reason_mask`` is ``fault_reason_mask`` as ROCr reports it;
    ``reasons`` its bits by name (``'page_not_present'``, ``'read_only'``,
    ``'no_execute'``, ``'host_only'``, ``'dram_ecc'``, ``'imprecise'``,
    ``'sram_ecc'``, ``'hang'``).  ``agent`` is None if the runtime named an
    agent the Runtime does not list.
    """

    agent: Agent | None
    address: int
    reason_mask: int

    @property
    def reasons(self) -> frozenset[str]:
        """The fault's reasons, named from ``reason_mask`` (``hsa_amd_memory_fault_reason_t``)."""
        mask = self.reason_mask
        out = set()
        for name, constant in _REASONS:
            bit = const(constant)
            if bit is not None and mask & (bit & 0xFFFFFFFF):
                out.add(name)
        return frozenset(out)


def _decode(event: Any, rt: Runtime) -> SystemEvent:
    _, lib = api()
    kind = int(event.event_type)
    if kind != lib.HSA_AMD_GPU_MEMORY_FAULT_EVENT:
        return SystemEvent(kind)
    info = event.memory_fault
    handle = int(info.agent.handle)
    agent = next((a for a in rt._listed_agents() if a._hv == handle), None)
    return MemoryFault(kind, agent, int(info.virtual_address), int(info.fault_reason_mask))


def _dispatch(event: Any, _data: Any) -> int:
    """The hook: each open Runtime's handlers in registration order; SUCCESS if one returned True."""
    _, lib = api()
    with _lock:
        entries = list(_handlers)
    handled = False
    for ref, handler in entries:
        rt = ref()
        if rt is None or rt._h is None:
            continue
        try:
            if handler(_decode(event, rt)) is True:
                handled = True
        except BaseException:   # noqa: BLE001 - a handler's error must not kill the runtime's thread
            sys.stderr.write("rocpy: exception in an HSA system event handler "
                             "(the event counts as not handled):\n")
            traceback.print_exc()
            sys.stderr.flush()
    return lib.HSA_STATUS_SUCCESS if handled else lib.HSA_STATUS_ERROR


def register(rt: Runtime, handler: Handler) -> None:
    """Call ``handler(event)`` for each system event while `rt` is open (see the module doc)."""
    global _hook
    if not callable(handler):
        raise TypeError(f"handler must be callable, not {type(handler).__name__}")
    rt._require_open()
    ffi, lib = api()
    with _lock:
        _handlers[:] = [(r, h) for r, h in _handlers if r() is not None and r()._h is not None]  # type: ignore[union-attr]
        _handlers.append((weakref.ref(rt), handler))
        if _hook is None:
            _hook = ffi.callback("hsa_amd_system_event_callback_t", _dispatch,
                                 error=lib.HSA_STATUS_ERROR)
            lib.rocpy_hsa_set_event_hook(_hook, ffi.NULL)


def forget(rt: Runtime) -> None:
    """Drop `rt`'s handlers (its close): HSA keeps rocpy's C handler, which then finds none."""
    with _lock:
        _handlers[:] = [(r, h) for r, h in _handlers if r() is not None and r() is not rt]


def handlers(rt: Runtime) -> list[Handler]:
    """The handlers registered on `rt`, in order."""
    with _lock:
        return [h for r, h in _handlers if r() is rt]
