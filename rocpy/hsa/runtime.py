"""`Runtime`: one reference on the HSA runtime (hsa_init / hsa_shut_down).

HSA counts ``hsa_init`` calls and tears down at the matching last
``hsa_shut_down``.  Each `Runtime` is one such reference, released exactly
once (`close`, ``with``, or when it is collected).  Every rocpy HSA object
holds the Runtime it was made under as a parent, so the runtime is never shut
down under a live object, whatever the order of closes::

    with hsa.Runtime() as rt:
        gpu = rt.gpu_agents[0]
        ...

Objects made while no Runtime is open (``hsa.Signal(1)`` at top level) take
an implicit one, shared while any of them lives; `Runtime.current()` returns
the innermost open Runtime, or that implicit one.

Opening the first Runtime also registers rocpy's GPU memory fault report
(``fast/hsa/fault.c``): a fault prints the agent, the address and the kind of
access on stderr before the runtime aborts the process, as ROCr does for
faults nobody handles.  It is C, on the runtime's own thread, because the
process dies as soon as the handler returns: rocpy's dispatcher thread would
never get to run a Python callback.  Python handlers (`Runtime.on_system_event`,
`rocpy.hsa.events`) run before it, synchronously on that thread; one of them
returning True keeps the process alive, as a handler returning
``HSA_STATUS_SUCCESS`` does in ROCr.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._handle import DONE, Handle
from ..errors import hsa_error
from ._common import api, const, read_info

if TYPE_CHECKING:
    from .agent import Agent
    from .events import SystemEvent

_lock = threading.RLock()
_open: list[weakref.ref[Runtime]] = []      # open Runtimes, oldest first
_implicit: weakref.ref[Runtime] | None = None
_ids = itertools.count(1)
_references = 0                             # rocpy's hsa_init calls not yet shut down

# extension ids by the names users write ("amd_profiler", "images", ...)
_EXTENSIONS = ("FINALIZER", "IMAGES", "PERFORMANCE_COUNTERS", "PROFILING_EVENTS",
               "AMD_PROFILER", "AMD_LOADER", "AMD_AQLPROFILE", "AMD_PC_SAMPLING")


def _shut_down(lib: Any) -> None:
    """Release recipe: one hsa_shut_down."""
    global _references
    with _lock:
        _references -= 1
    st = lib.hsa_shut_down()
    if st:
        raise hsa_error(st, "hsa_shut_down")


def _report_faults(ffi: Any, lib: Any) -> None:
    handler = ffi.cast("hsa_amd_system_event_callback_t",
                       ffi.addressof(lib, "rocpy_hsa_report_system_event"))
    st = lib.hsa_amd_register_system_event_handler(handler, ffi.NULL)
    if st:
        raise hsa_error(st, "hsa_amd_register_system_event_handler")


class Runtime(Handle):
    """One reference on the HSA runtime: ``hsa_init`` now, ``hsa_shut_down`` at release.

    Runtimes nest (HSA counts them); the runtime stays up while any Runtime,
    or any object made under one, lives.  Agents are listed once per Runtime.
    """

    def __init__(self) -> None:
        global _references
        ffi, lib = api()
        self._lock = threading.Lock()
        self._agents: list[Agent] | None = None
        with _lock:
            st = lib.hsa_init()
            if st:
                raise hsa_error(st, "hsa_init")
            try:
                if _references == 0:
                    # the runtime keeps its handlers until the last hsa_shut_down
                    _report_faults(ffi, lib)
            except BaseException:
                lib.hsa_shut_down()
                raise
            _references += 1
        try:
            super().__init__(next(_ids), (_shut_down, lib))
        except BaseException:
            _shut_down(lib)
            raise
        with _lock:
            _open.append(weakref.ref(self))

    @classmethod
    def current(cls) -> Runtime:
        """The innermost open Runtime; else the implicit one (made now if needed)."""
        global _implicit
        with _lock:
            for ref in reversed(_open):
                rt = ref()
                if rt is not None and rt._h is not None:
                    return rt
            rt = _implicit() if _implicit is not None else None
            if rt is None or rt._h is None:
                rt = cls()
                _implicit = weakref.ref(rt)
            return rt

    def close(self, stream: Any = None) -> None:
        """Release this reference; objects made under it keep the runtime up until they go.

        The agents it listed stay usable while the runtime is up for them (an
        owned object still holds this Runtime); after that they refuse use.
        """
        with _lock:
            _open[:] = [r for r in _open if r() is not None and r() is not self]
        from . import events
        events.forget(self)
        super().close(stream)

    def _released(self) -> bool:
        """Whether this reference's hsa_shut_down ran (not merely closed: children keep it)."""
        return self._rec.state == DONE

    # ---- agents -----------------------------------------------------------------

    @property
    def agents(self) -> list[Agent]:
        """Every agent, in the runtime's order (hsa_iterate_agents); listed once."""
        self._require_open()
        return self._listed_agents()

    def _listed_agents(self) -> list[Agent]:
        """`agents` for objects that keep the runtime up after this Runtime was closed."""
        agents = self._agents
        if agents is None:
            from ._common import list_handles
            from .agent import Agent
            _, lib = api()
            found = list_handles(lib.rocpy_hsa_list_agents, (), "hsa_agent_t", "hsa_iterate_agents")
            fresh = [Agent(self, h) for h in found]
            with self._lock:
                if self._agents is None:
                    self._agents = fresh
                agents = self._agents
        return list(agents)

    @property
    def gpu_agents(self) -> list[Agent]:
        """The GPU agents (device type GPU)."""
        return [a for a in self.agents if a.is_gpu]

    @property
    def cpu_agents(self) -> list[Agent]:
        """The CPU agents (one per NUMA node)."""
        return [a for a in self.agents if a.is_cpu]

    # ---- system events ----------------------------------------------------------------

    def on_system_event(self, handler: Callable[[SystemEvent], Any]) -> None:
        """Call ``handler(event)`` on each system event (a `MemoryFault`, ...) while this Runtime is open.

        ``hsa_amd_register_system_event_handler``'s rule (ROCr
        Runtime::VMFaultHandler): after a GPU memory fault the runtime aborts
        the process unless a handler returns True ("handled").  Handlers run
        on the runtime's thread, synchronously; `rocpy.hsa.events` says more.
        """
        from . import events
        events.register(self, handler)

    @property
    def system_event_handlers(self) -> list[Callable[[SystemEvent], Any]]:
        """The handlers `on_system_event` registered on this Runtime, in order."""
        from . import events
        return events.handlers(self)

    # ---- system information -------------------------------------------------------

    def info(self, attribute: int | str, kind: str) -> Any:
        """One ``hsa_system_get_info`` attribute (by value or constant name), decoded by `kind`.

        `kind` is one of `rocpy.hsa._common.read_info`'s kinds (``u16``, ``u64``,
        ``bool``, ``cstr``, ...).  For attributes the typed properties lack.
        """
        self._require_open()
        _, lib = api()
        return read_info(lib.hsa_system_get_info, (), attribute, kind, "hsa_system_get_info")

    @property
    def version(self) -> tuple[int, int]:
        """The HSA specification version the runtime implements (major, minor)."""
        return (self.info("HSA_SYSTEM_INFO_VERSION_MAJOR", "u16"),
                self.info("HSA_SYSTEM_INFO_VERSION_MINOR", "u16"))

    @property
    def timestamp(self) -> int:
        """The system timestamp now, in ticks of `timestamp_frequency`."""
        result: int = self.info("HSA_SYSTEM_INFO_TIMESTAMP", "u64")
        return result

    @property
    def timestamp_frequency(self) -> int:
        """Ticks per second of the system timestamp (and of every timeout hint)."""
        result: int = self.info("HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY", "u64")
        return result

    @property
    def signal_max_wait(self) -> int:
        """The longest a signal wait blocks before it may return, in ticks."""
        result: int = self.info("HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT", "u64")
        return result

    @property
    def endianness(self) -> str:
        """``'little'`` or ``'big'``."""
        _, lib = api()
        value = self.info("HSA_SYSTEM_INFO_ENDIANNESS", "enum")
        return "little" if value == lib.HSA_ENDIANNESS_LITTLE else "big"

    @property
    def machine_model(self) -> str:
        """``'large'`` (64-bit) or ``'small'``."""
        _, lib = api()
        value = self.info("HSA_SYSTEM_INFO_MACHINE_MODEL", "enum")
        return "large" if value == lib.HSA_MACHINE_MODEL_LARGE else "small"

    @property
    def build_version(self) -> str | None:
        """The runtime's build string (HSA_AMD_SYSTEM_INFO_BUILD_VERSION)."""
        result: str | None = self.info("HSA_AMD_SYSTEM_INFO_BUILD_VERSION", "cstr")
        return result

    @property
    def svm_supported(self) -> bool:
        """Whether shared virtual memory (hsa_amd_svm_*) is supported."""
        result: bool = self.info("HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED", "bool")
        return result

    @property
    def svm_accessible_by_default(self) -> bool:
        """Whether every agent can access SVM memory without hsa_amd_svm_attributes_set."""
        result: bool = self.info("HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT", "bool")
        return result

    @property
    def xnack_enabled(self) -> bool | None:
        """Whether XNACK (GPU page-fault retry) is on; None where the headers predate it."""
        attr = const("HSA_AMD_SYSTEM_INFO_XNACK_ENABLED")
        return None if attr is None else self.info(attr, "bool")

    # ---- extensions --------------------------------------------------------------------

    @property
    def extensions(self) -> list[str]:
        """Names of the extensions the runtime supports (``'amd_profiler'``, ...)."""
        ffi, lib = api()
        mask = self.info("HSA_SYSTEM_INFO_EXTENSIONS", "bytes128")
        names = []
        for bit in range(128 * 8):
            if mask[bit // 8] >> (bit % 8) & 1:
                out = ffi.new("const char **")
                if lib.hsa_extension_get_name(bit, out) == 0 and out[0] != ffi.NULL:
                    name = ffi.string(out[0]).decode()
                    names.append(name.removeprefix("HSA_EXTENSION_").lower())
                else:
                    names.append(str(bit))
        return names

    def extension_supported(self, extension: int | str, major: int = 1, minor: int = 0) -> bool:
        """Whether `extension` (id or name: ``'amd_profiler'``) is supported at ``major.minor``."""
        self._require_open()
        ffi, lib = api()
        ext = extension_id(extension)
        out = ffi.new("bool *")
        st = lib.hsa_system_extension_supported(ext, major, minor, out)
        if st:
            raise hsa_error(st, "hsa_system_extension_supported")
        return bool(out[0])

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"#{self._h}"
        return f"<hsa.Runtime {state}>"


def extension_id(extension: int | str) -> int:
    """An extension's id from its id or name (``'amd_profiler'``, ``'HSA_EXTENSION_IMAGES'``)."""
    if isinstance(extension, int):
        return extension
    name = str(extension).upper().removeprefix("HSA_EXTENSION_")
    value = const("HSA_EXTENSION_" + name)
    if value is None:
        known = ", ".join(n.lower() for n in _EXTENSIONS)
        raise ValueError(f"unknown HSA extension {extension!r}; known: {known}")
    return value
