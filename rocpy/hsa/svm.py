"""Shared virtual memory: attributes of host address ranges, and prefetch.

::

    hsa.svm_set_attributes(addr, n, accessible=[gpu], fine_grained=False, preferred=gpu)
    attrs = hsa.svm_attributes(addr, n, agents=[gpu, cpu])
    attrs.global_flag, attrs.granularity, attrs.preferred, attrs.access[gpu]
    hsa.svm_prefetch(addr, n, gpu, completion=sig)

The range is any memory the process mapped itself (``mmap``, ``malloc``,
numpy arrays: an int address, a cffi pointer, or an object with the buffer
protocol), page-aligned by ROCr; memory the runtime allocated or locked is
refused by the driver (``HSA_STATUS_ERROR``).  Each call applies its
attributes in one hsa_amd_svm_attributes_set call, as given.  On the stub
the attributes are bookkeeping: they decide which GPU may reach the memory
(its kernels and copy engines fault or refuse otherwise), but nothing
migrates (a prefetch only records where the memory should be).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _args, _keepalive
from .._handle import borrow_all
from ..errors import hsa_error
from ._common import agent_handle, api, signal_handle

if TYPE_CHECKING:
    from .agent import Agent
    from .runtime import Runtime
    from .signal import Signal

_UNSET: Any = object()
_GLOBAL_FLAGS = {"HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED": "fine_grained",
                 "HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED": "coarse_grained",
                 "HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE": "indeterminate"}


def _range(ptr: Any, size: int) -> tuple[int, int]:
    ffi, _ = api()
    if isinstance(ptr, ffi.CData):
        address = int(ffi.cast("uintptr_t", ptr))
    elif isinstance(ptr, int) or (hasattr(type(ptr), "__index__") and not hasattr(ptr, "shape")):
        address = _args.unsigned(ptr, 64, "ptr")
    else:
        try:
            address = int(ffi.cast("uintptr_t", ffi.from_buffer(ptr)))
        except TypeError:
            raise TypeError(f"ptr must be an int address, a cffi pointer or a buffer, not "
                            f"{type(ptr).__name__}") from None
    size = _args.unsigned(size, 64, "size")
    if not address:
        raise ValueError("ptr is NULL")
    if not size:
        raise ValueError("size must be positive")
    return address, size


def svm_set_attributes(ptr: Any, size: int, *, fine_grained: bool | None = None,
                       read_only: bool | None = None, hive_local: bool | None = None,
                       read_mostly: bool | None = None, granularity: int | None = None,
                       preferred: Agent | None = _UNSET, accessible: Iterable[Agent] = (),
                       accessible_in_place: Iterable[Agent] = (),
                       no_access: Iterable[Agent] = ()) -> None:
    """hsa_amd_svm_attributes_set on [ptr, ptr + size).

    ``fine_grained`` True/False: coherent or not (the global flag);
    ``granularity``: migration granularity as log2 of pages (ROCr caps it at
    18, 1 GiB); ``preferred``: the agent the memory should live with (None:
    no preference); ``accessible`` / ``accessible_in_place`` / ``no_access``:
    agents granted access (migrating or in place) or denied it.  An agent in
    two of those lists is ``HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS``, as ROCr.
    """
    ffi, lib = api()
    address, size = _range(ptr, size)
    pairs: list[tuple[int, int]] = []
    if fine_grained is not None:
        pairs.append((lib.HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG,
                      lib.HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED if fine_grained
                      else lib.HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED))
    for attr, value in ((lib.HSA_AMD_SVM_ATTRIB_READ_ONLY, read_only),
                        (lib.HSA_AMD_SVM_ATTRIB_HIVE_LOCAL, hive_local),
                        (lib.HSA_AMD_SVM_ATTRIB_READ_MOSTLY, read_mostly)):
        if value is not None:
            pairs.append((attr, 1 if value else 0))
    if granularity is not None:
        pairs.append((lib.HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY,
                      _args.integer(granularity, "granularity", 0, 63)))
    if preferred is not _UNSET:
        pairs.append((lib.HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION,
                      0 if preferred is None else agent_handle(preferred, "preferred").handle))
    for attr, agents, what in ((lib.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE, accessible, "accessible"),
                               (lib.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE,
                                accessible_in_place, "accessible_in_place"),
                               (lib.HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS, no_access, "no_access")):
        for a in agents:
            pairs.append((attr, agent_handle(a, f"each of {what}").handle))
    if not pairs:
        raise ValueError("svm_set_attributes needs at least one attribute")
    arr = ffi.new("hsa_amd_svm_attribute_pair_t[]", pairs)
    st = lib.hsa_amd_svm_attributes_set(ffi.cast("void *", address), size, arr, len(pairs))
    if st:
        raise hsa_error(st, "hsa_amd_svm_attributes_set")


@dataclass(frozen=True)
class SvmAttributes:
    """What hsa_amd_svm_attributes_get reports for a range (combined over its parts).

    ``global_flag``: 'fine_grained', 'coarse_grained' or 'indeterminate'
    (parts differ); ``granularity``: log2 pages; ``preferred`` / ``prefetch``:
    agents or None; ``access``: for each agent asked, 'accessible',
    'in_place' or 'none'.
    """

    global_flag: str
    read_only: bool
    hive_local: bool
    read_mostly: bool
    granularity: int
    preferred: Agent | None
    prefetch: Agent | None
    access: dict[Agent, str] = field(default_factory=dict)


def svm_attributes(ptr: Any, size: int, agents: Sequence[Agent] = (),
                   runtime: Runtime | None = None) -> SvmAttributes:
    """hsa_amd_svm_attributes_get on [ptr, ptr + size); ``agents``: whose access to report."""
    from .runtime import Runtime
    ffi, lib = api()
    address, size = _range(ptr, size)
    agents = list(agents)
    if runtime is None:
        runtime = agents[0].runtime if agents else Runtime.current()
    by_handle = {a._hv: a for a in runtime._listed_agents()}
    names = ("GLOBAL_FLAG", "READ_ONLY", "HIVE_LOCAL", "READ_MOSTLY", "MIGRATION_GRANULARITY",
             "PREFERRED_LOCATION", "PREFETCH_LOCATION")
    pairs = [(getattr(lib, f"HSA_AMD_SVM_ATTRIB_{n}"), 0) for n in names]
    pairs += [(lib.HSA_AMD_SVM_ATTRIB_ACCESS_QUERY, agent_handle(a, "each of agents").handle)
              for a in agents]
    arr = ffi.new("hsa_amd_svm_attribute_pair_t[]", pairs)
    st = lib.hsa_amd_svm_attributes_get(ffi.cast("void *", address), size, arr, len(pairs))
    if st:
        raise hsa_error(st, "hsa_amd_svm_attributes_get")
    flag = next((py for c, py in _GLOBAL_FLAGS.items() if getattr(lib, c) == arr[0].value),
                f"flag {arr[0].value}")
    answers = {lib.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE: "accessible",
               lib.HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE: "in_place"}
    access = {a: answers.get(int(arr[len(names) + i].attribute), "none")
              for i, a in enumerate(agents)}
    return SvmAttributes(flag, bool(arr[1].value), bool(arr[2].value), bool(arr[3].value),
                         int(arr[4].value), by_handle.get(int(arr[5].value)),
                         by_handle.get(int(arr[6].value)), access)


def svm_prefetch(ptr: Any, size: int, agent: Agent, *, completion: Signal | None = None,
                 deps: Sequence[Signal] = ()) -> None:
    """hsa_amd_svm_prefetch_async: move [ptr, ptr + size) towards `agent` once `deps` are 0;
    `completion` (optional) is decremented when done.  The signals stay alive until then."""
    ffi, lib = api()
    address, size = _range(ptr, size)
    h = agent_handle(agent)
    zero = ffi.new("hsa_signal_t *")   # handle 0: no completion signal
    done = signal_handle(completion, "completion") if completion is not None else zero[0]
    deps = list(deps)
    handles = ffi.new("hsa_signal_t[]", max(len(deps), 1))
    for i, dep in enumerate(deps):
        handles[i] = signal_handle(dep, "each of deps")
    borrows = borrow_all((completion, *deps))
    st = lib.hsa_amd_svm_prefetch_async(ffi.cast("void *", address), size, h, len(deps),
                                        handles if deps else ffi.NULL, done)
    if st:
        raise hsa_error(st, "hsa_amd_svm_prefetch_async")
    if completion is not None:
        load = lib.hsa_signal_load_relaxed
        _keepalive.keep_alive_until(lambda: load(done) <= 0, completion, deps, borrows)
    elif deps:   # nothing tells when it ran: keep the dependencies until they are all 0
        loads = [lib.hsa_signal_load_relaxed] * len(deps)
        hs = [handles[i] for i in range(len(deps))]
        _keepalive.keep_alive_until(lambda: all(f(x) <= 0 for f, x in zip(loads, hs)), deps, borrows)
