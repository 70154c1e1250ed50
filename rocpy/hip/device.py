"""`Device`: one HIP device, its properties, limits and factories.

::

    dev = rocpy.hip.Device(0)           # the same object for every Device(0)
    dev.name, dev.arch, dev.target_id   # 'AMD Instinct MI210', 'gfx90a', 'gfx90a:sramecc+:xnack-'
    dev.properties.maxThreadsPerBlock   # everything hipDeviceProp_t says, frozen
    dev.attribute("max_shared_memory_per_block")
    s = dev.create_stream(priority="high", non_blocking=True)
    ctx = dev.context                   # the device's primary context

A `Device` is a borrowed handle (rocpy never destroys a device): it is the
root of the ownership tree for everything made on it.  `reset` resets the
device (``hipDeviceReset``) and invalidates every rocpy object made on it,
so no finalizer later frees an address the runtime may have reused.
"""
from __future__ import annotations

import difflib
import threading
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _args, _reaper
from .. import _handle
from .._handle import Handle
from ..errors import NotSupportedError, hip_error
from . import _api, _dlpack, _wait
from ._api import api, use_device
from ._frozen_struct import frozen_value

if TYPE_CHECKING:
    from ..hsa.agent import Agent
    from .context import Context
    from .event import Event
    from .green import DeviceResources, GreenContext
    from .stream import Stream

_lock = threading.Lock()
_devices: dict[int, Device] = {}
_count: int | None = None
_attr_names: dict[str, str] | None = None
#: `Device.limit` names and the hipLimit_t each stands for.
_LIMITS = {"malloc_heap_size": "hipLimitMallocHeapSize", "stack_size": "hipLimitStackSize",
           "printf_fifo_size": "hipLimitPrintfFifoSize"}


def device_count() -> int:
    """How many HIP devices this process sees (``hipGetDeviceCount``).

    Raises `rocpy.NoDeviceError` (a `HipError`) when there are none.
    """
    global _count
    if _count is None:
        a = api()
        out = a.ffi.new("int *")
        st = a.lib.hipGetDeviceCount(out)
        if st:
            raise hip_error(st, "hipGetDeviceCount")
        _count = int(out[0])
    return _count


class MemInfo(NamedTuple):
    """Free and total device memory in bytes (``hipMemGetInfo``)."""

    free: int
    total: int


def _attribute_names() -> dict[str, str]:
    global _attr_names
    if _attr_names is None:
        prefix = "hipDeviceAttribute"
        _attr_names = {n[len(prefix):].lower(): n for n in dir(api().lib)
                       if n.startswith(prefix) and n != prefix}
    return _attr_names


class Device(Handle):
    """A HIP device; ``Device(i)`` returns the same object for the same index.

    A bad index raises `rocpy.InvalidValueError` (a `HipError` with status
    ``hipErrorInvalidDevice``) naming how many devices there are; no device
    at all raises `rocpy.NoDeviceError`.

    Calls that HIP runs on "the current device" (allocations, stream and event
    creation, module loads, work on the null stream) make this device current
    on the calling thread first (``hipSetDevice``, skipped when rocpy set it
    last on that thread).  `close` does nothing: devices live for the process.
    """

    __slots__ = ("_index", "_props", "_ctx", "_null", "_streams", "_dev_lock", "_reset_lock")

    _index: int
    _props: Any
    _ctx: Context | None
    _null: Any
    _streams: weakref.WeakSet[Any]
    _dev_lock: threading.RLock
    _reset_lock: threading.Lock

    def __new__(cls, index: int = 0) -> Device:
        dev = _devices.get(index) if type(index) is int else None
        if dev is not None:
            return dev
        if isinstance(index, bool) or not hasattr(index, "__index__"):
            raise TypeError(f"a device index is an int, not {type(index).__name__}")
        index = index.__index__()
        count = device_count()
        if not 0 <= index < count:
            raise _api.fail("hipErrorInvalidDevice", f"Device({index})",
                            f"device index {index} is out of range: {count} device(s) "
                            f"visible (0..{count - 1})")
        with _lock:
            dev = _devices.get(index)
            if dev is None:
                dev = super().__new__(cls)
                Handle.__init__(dev, index)
                dev._index = index
                dev._props = None
                dev._ctx = None
                dev._null = None
                dev._streams = weakref.WeakSet()
                dev._dev_lock = threading.RLock()
                # held by device allocations from hipMalloc until the buffer is tracked,
                # and by reset from invalidation through hipDeviceReset
                dev._reset_lock = threading.Lock()
                _devices[index] = dev
        return dev

    def __init__(self, index: int = 0) -> None:
        pass  # made in __new__

    # ---- identity -----------------------------------------------------------

    @classmethod
    def current(cls) -> Device:
        """The calling thread's current device (``hipGetDevice``)."""
        return cls(_api.current_device_index())

    def set_current(self) -> None:
        """Make this the calling thread's current device (``hipSetDevice``, always called)."""
        _api.forget_current_device()
        use_device(self._index)

    @property
    def index(self) -> int:
        """The device ordinal (as HIP numbers the visible devices)."""
        return self._index

    def __int__(self) -> int:
        """The device ordinal."""
        return self._index

    def __repr__(self) -> str:
        return f"<Device {self._index}: {self.name} ({self.target_id})>"

    def close(self, stream: Any = None) -> None:
        """Does nothing: a device is never destroyed (use `reset` to reset it)."""

    # ---- properties ---------------------------------------------------------

    @property
    def properties(self) -> Any:
        """Everything ``hipGetDeviceProperties`` reports, as a frozen dataclass.

        Field names are the header's (``maxThreadsPerBlock``, ``gcnArchName``);
        strings are `str`, arrays tuples, nested structs dataclasses.
        """
        props = self._props
        if props is None:
            a = api()
            raw = a.ffi.new("hipDeviceProp_t *")
            st = a.lib.hipGetDeviceProperties(raw, self._index)
            if st:
                raise hip_error(st, "hipGetDeviceProperties")
            props = self._props = frozen_value(a.ffi, a.ffi.typeof("hipDeviceProp_t"), raw[0])
        return props

    @property
    def name(self) -> str:
        """The marketing name (``'AMD Instinct MI210'``)."""
        result: str = self.properties.name
        return result

    @property
    def arch(self) -> str:
        """The processor: ``'gfx90a'`` on AMD, ``'sm_90'`` on NVIDIA."""
        return self.target_id.split(":")[0]

    @property
    def target_id(self) -> str:
        """The full target ID code objects are matched against (``'gfx90a:sramecc+:xnack-'``).

        On NVIDIA, ``'sm_<major><minor>'``.
        """
        props = self.properties
        arch = getattr(props, "gcnArchName", "") or ""
        if api().name == "nvidia" or not arch.startswith("gfx"):
            return f"sm_{props.major}{props.minor}"
        return arch

    @property
    def total_memory(self) -> int:
        """Device memory in bytes."""
        return int(self.properties.totalGlobalMem)

    @property
    def compute_units(self) -> int:
        """Compute units (AMD) or streaming multiprocessors (NVIDIA)."""
        return int(self.properties.multiProcessorCount)

    @property
    def warp_size(self) -> int:
        """Threads per wavefront (warp): 64 or 32."""
        return int(self.properties.warpSize)

    @property
    def max_threads_per_block(self) -> int:
        """The largest block (work-group) a launch may use."""
        return int(self.properties.maxThreadsPerBlock)

    @property
    def max_block_dims(self) -> tuple[int, int, int]:
        """The largest block size per dimension (x, y, z)."""
        return tuple(int(v) for v in self.properties.maxThreadsDim)  # type: ignore[return-value]

    @property
    def max_grid_dims(self) -> tuple[int, int, int]:
        """The largest grid size per dimension, in blocks (x, y, z)."""
        return tuple(int(v) for v in self.properties.maxGridSize)  # type: ignore[return-value]

    @property
    def shared_memory_per_block(self) -> int:
        """LDS (shared memory) bytes a block may use."""
        return int(self.properties.sharedMemPerBlock)

    @property
    def clock_rate_khz(self) -> int:
        """The peak clock in kHz."""
        return int(self.properties.clockRate)

    @property
    def compute_capability(self) -> tuple[int, int]:
        """(major, minor) as HIP reports them (gfx90a: (9, 0); sm_90: (9, 0))."""
        props = self.properties
        return int(props.major), int(props.minor)

    @property
    def pci_bus_id(self) -> str:
        """The PCI address, ``'0000:03:00.0'``."""
        a = api()
        buf = a.ffi.new("char[]", 64)
        st = a.lib.hipDeviceGetPCIBusId(buf, 64, self._index)
        if st:
            raise hip_error(st, "hipDeviceGetPCIBusId")
        result: str = a.ffi.string(buf).decode()
        return result

    def attribute(self, attr: str | int) -> int:
        """One ``hipDeviceGetAttribute`` value.

        ``attr`` is a ``hipDeviceAttribute_t`` value or its name, with or
        without the prefix and in any case or with underscores:
        ``"MaxThreadsPerBlock"``, ``"max_threads_per_block"``,
        ``"hipDeviceAttributeMaxThreadsPerBlock"``.
        """
        a = api()
        if isinstance(attr, str):
            names = _attribute_names()
            key = attr.replace("_", "").lower()
            if key.startswith("hipdeviceattribute"):
                key = key[len("hipdeviceattribute"):]
            full = names.get(key)
            if full is None:
                close = difflib.get_close_matches(key, list(names), n=3)
                hint = f"; did you mean {', '.join(names[c] for c in close)}?" if close else ""
                raise _api.invalid("Device.attribute", f"unknown device attribute {attr!r}{hint}")
            value = getattr(a.lib, full)
        elif hasattr(type(attr), "__index__") and not isinstance(attr, bool):
            attr = _args.integer(attr, "attribute")
            if not 0 <= attr < 1 << 31:
                raise _api.invalid("Device.attribute", f"{attr} is not a hipDeviceAttribute_t value")
            value = attr
        else:
            raise TypeError(f"attribute takes a name or an int, not {type(attr).__name__}")
        out = a.ffi.new("int *")
        st = a.lib.hipDeviceGetAttribute(out, value, self._index)
        if st:
            raise hip_error(st, "hipDeviceGetAttribute")
        result: int = out[0]
        return result

    def limit(self, name: str) -> int:
        """A ``hipDeviceGetLimit`` value: ``"malloc_heap_size"``, ``"stack_size"``,
        ``"printf_fifo_size"`` (those the runtime supports)."""
        if not isinstance(name, str):
            raise TypeError(f"a limit is named by a str, not {type(name).__name__}")
        a = api()
        full = {k.replace("_", ""): v for k, v in _LIMITS.items()}.get(name.replace("_", "").lower())
        if full is None or not hasattr(a.lib, full):
            known = ", ".join(sorted(k for k, v in _LIMITS.items() if hasattr(a.lib, v)))
            raise _api.invalid("Device.limit", f"unknown limit {name!r}; one of {known}")
        use_device(self._index)
        out = a.ffi.new("size_t *")
        st = a.lib.hipDeviceGetLimit(out, getattr(a.lib, full))
        if st:
            raise hip_error(st, "hipDeviceGetLimit")
        result: int = out[0]
        return result

    def mem_info(self) -> MemInfo:
        """Free and total memory of this device (``hipMemGetInfo``)."""
        a = api()
        use_device(self._index)
        free, total = a.ffi.new("size_t *"), a.ffi.new("size_t *")
        st = a.lib.hipMemGetInfo(free, total)
        if st:
            raise hip_error(st, "hipMemGetInfo")
        return MemInfo(free[0], total[0])

    # ---- work -------------------------------------------------------------------

    def sync(self) -> None:
        """Wait for all work on this device (``hipDeviceSynchronize``)."""
        use_device(self._index)
        taken = [(s, s._take()) for s in list(self._streams) if s._h is not None]
        st = _wait.wait_device(self._index, [s for s, _ in taken])
        if st:
            for s, objs in taken:
                s._restore(objs)
            raise hip_error(st, "hipDeviceSynchronize")
        for s, objs in taken:
            s._completed(objs)

    def can_access_peer(self, other: Device) -> bool:
        """Whether this device can map ``other``'s memory (``hipDeviceCanAccessPeer``)."""
        a = api()
        out = a.ffi.new("int *")
        st = a.lib.hipDeviceCanAccessPeer(out, self._index, _index_of(other))
        if st:
            raise hip_error(st, "hipDeviceCanAccessPeer")
        return bool(out[0])

    def enable_peer_access(self, other: Device) -> None:
        """Let this device access ``other``'s memory; enabling twice is not an error."""
        a = api()
        use_device(self._index)
        st = a.lib.hipDeviceEnablePeerAccess(_index_of(other), 0)
        if st and st != a.lib.hipErrorPeerAccessAlreadyEnabled:
            raise hip_error(st, "hipDeviceEnablePeerAccess")

    def disable_peer_access(self, other: Device) -> None:
        """Undo `enable_peer_access`; disabling what is not enabled is not an error."""
        a = api()
        use_device(self._index)
        st = a.lib.hipDeviceDisablePeerAccess(_index_of(other))
        if st and st != a.lib.hipErrorPeerAccessNotEnabled:
            raise hip_error(st, "hipDeviceDisablePeerAccess")

    @property
    def stream_priority_range(self) -> tuple[int, int]:
        """(least, greatest) stream priority; greater priority is a smaller number.

        hipamd: (1, -1) (low, high); CUDA: (0, -5) on recent GPUs.
        """
        a = api()
        use_device(self._index)
        least, greatest = a.ffi.new("int *"), a.ffi.new("int *")
        st = a.lib.hipDeviceGetStreamPriorityRange(least, greatest)
        if st:
            raise hip_error(st, "hipDeviceGetStreamPriorityRange")
        return least[0], greatest[0]

    def create_stream(self, *, priority: str | int = "normal", non_blocking: bool = False,
                      cu_mask: Any = None) -> Stream:
        """A new `Stream` on this device (``hipStreamCreateWithPriority``).

        Args:
            priority: ``"normal"``, ``"high"``, ``"low"`` or a number within
                `stream_priority_range` (lower is higher, as in HIP).
            non_blocking: The stream does not wait for the null stream
                (``hipStreamNonBlocking``).
            cu_mask: Compute units the stream may use (AMD only,
                ``hipExtStreamCreateWithCUMask``): an int bit mask (CU ``i`` is
                bit ``i``) or an iterable of 32-bit words; not combinable with
                ``non_blocking`` or a priority.

        Returns:
            The new `Stream`, owned (``close`` or ``with``).

        Raises:
            rocpy.InvalidValueError: a bad priority or CU mask, or a CU mask
                with other options.
            TypeError: ``cu_mask`` is neither an int nor an iterable of ints.
            rocpy.NotSupportedError: a CU mask on the nvidia backend.
        """
        from .stream import Stream
        return Stream._create(self, priority, non_blocking, cu_mask)

    def create_event(self, *, timing: bool = True, blocking: bool = False,
                     interprocess: bool = False) -> Event:
        """A new `Event` on this device (``hipEventCreateWithFlags``).

        Args:
            timing: Records time, for ``end - start`` (off: ``hipEventDisableTiming``).
            blocking: ``sync`` blocks the thread instead of spinning
                (``hipEventBlockingSync``).
            interprocess: Shareable with other processes (``hipEventInterprocess``;
                needs ``timing=False``, as in HIP).

        Returns:
            The new `Event`.
        """
        from .event import Event
        return Event(self, timing=timing, blocking=blocking, interprocess=interprocess)

    def resources(self) -> DeviceResources:
        """The device's resources (``.sm``: all its CUs as an `rocpy.hip.green.SMResource`),
        to split into green contexts (HIP 7.2+; `rocpy.NotSupportedError` before)."""
        from .green import device_resources
        return device_resources(self)

    def create_green_context(self, resources: Any) -> GreenContext:
        """A `rocpy.hip.green.GreenContext` of an `SMResource` or several (pieces of
        one split) of this device (``hipGreenCtxCreate``; HIP 7.2+)."""
        from .green import GreenContext
        return GreenContext._create(self, resources)

    @property
    def context(self) -> Context:
        """The device's primary `Context` (one device)."""
        ctx = self._ctx
        if ctx is None or ctx._h is None:
            from .context import Context
            with self._dev_lock:
                ctx = self._ctx
                if ctx is None or ctx._h is None:
                    ctx = self._ctx = Context._primary(self)
        return ctx

    @property
    def default_stream(self) -> Stream:
        """The device's legacy null stream (``0`` as a ``hipStream_t``), borrowed.

        The same object every time (until a device reset).  Work on it runs
        after the device's blocking streams' earlier work and before their
        later work; non-blocking streams are not ordered with it.  What
        ``stream=None`` means wherever a stream is taken.
        """
        from .stream import Stream
        return Stream._null(self)

    @property
    def hsa_agent(self) -> Agent:
        """The HSA agent that is this device (amd and stub backends; needs ``rocpy.hsa``).

        Found among ``rocpy.hsa.Runtime.current().gpu_agents`` by PCI location
        (the agent's BDF against this device's bus and device numbers), else
        by position, which is how HIP numbers devices when no
        ``*_VISIBLE_DEVICES`` variable reorders them.  The agent holds its
        runtime.  Without an HSA layer (``rocpy.hsa.Runtime``) this raises
        `NotImplementedError`; on nvidia, where there is no HSA,
        `rocpy.NotSupportedError`.
        """
        if api().name == "nvidia":
            raise NotSupportedError("there is no HSA runtime on the nvidia backend")
        from .. import hsa
        runtime = getattr(hsa, "Runtime", None)
        if runtime is None:
            raise NotImplementedError("rocpy.hsa has no Runtime: Device.hsa_agent needs the "
                                      "HSA layer (rocpy.hsa.Runtime().gpu_agents)")
        rt = runtime.current() if hasattr(runtime, "current") else runtime()
        agents: list[Agent] = list(rt.gpu_agents)
        props = self.properties
        want = (int(props.pciBusID) << 8) | (int(props.pciDeviceID) << 3)
        matches = [a for a in agents if (int(getattr(a, "bdf_id", -1)) & ~7) == want]
        if len(matches) == 1:
            return matches[0]
        if self._index < len(agents):
            return agents[self._index]
        raise NotImplementedError(f"no HSA GPU agent matches Device({self._index}) "
                                  f"({len(agents)} GPU agents)")

    def reset(self) -> None:
        """Reset the device (``hipDeviceReset``) and invalidate every rocpy object made on it.

        Work in flight is waited for first and what it kept alive released
        normally.  Then the runtime destroys the device's streams and memory,
        and every rocpy object descending from this device (contexts, buffers,
        streams, events, modules, graphs, and host memory of the host context,
        which spans this device) is marked invalid without being released:
        using it raises `rocpy.ClosedError`, and no finalizer will free an
        address the runtime may hand out again.  Modules and events, which
        hipamd keeps across a reset, are released then (unloaded, destroyed)
        on amd and the stub; CUDA destroys them itself, so on nvidia they are
        abandoned, never released twice.  Pinned memory (which numpy arrays
        may still view) is abandoned everywhere.  The device itself stays usable.

        Refused (``hipErrorIllegalState``) while numpy views or DLPack
        consumers of the device's memory live: the runtime frees that memory,
        and they would read freed memory.  Objects are invalidated before
        ``hipDeviceReset``, and allocations on other threads wait for it, so no
        address the reset freed is freed again.
        """
        self.sync()
        _reaper.flush(5.0)  # releases posted by the cleared keep-alive lists run now
        _dlpack.flush_drops()   # consumers' deleters queued so far have let go
        with self._reset_lock:
            views = _handle.live_descendants(self, "HostView", _DEVICE_MEMORY)
            if views:
                raise _api.fail("hipErrorIllegalState", "Device.reset",
                                f"{views} view(s) of Device({self._index})'s memory still "
                                "live (numpy arrays, DLPack consumers): hipDeviceReset frees "
                                "that memory; drop them first")
            # before the reset: no finalizer may free an address the reset already freed
            # (and the runtime may hand out again); hipamd keeps modules and events
            # across a reset: release them now, or they leak
            self.invalidate_descendants(f"Device({self._index}).reset() destroyed it",
                                        release_survivors=api().name != "nvidia")
            from .event import drain_fence_pool
            drain_fence_pool(self._index, destroy=api().name != "nvidia")
            use_device(self._index)
            st = api().lib.hipDeviceReset()
        if st:
            raise hip_error(st, "hipDeviceReset")
        with self._dev_lock:
            self._ctx = None
            self._null = None


_DEVICE_MEMORY = frozenset({"DeviceBuffer"})


def made_device(index: int) -> Device | None:
    """The `Device` wrapper of ordinal ``index`` if one was made (none is made here)."""
    return _devices.get(index)


def _index_of(device: Any) -> int:
    if isinstance(device, Device):
        return device._index
    if hasattr(type(device), "__index__") and not isinstance(device, bool):
        device = _args.integer(device, "device")
        if not -(1 << 31) <= device < 1 << 31:  # HIP's ordinals are ints: out of range is not a device
            raise _api.fail("hipErrorInvalidDevice", "Device", f"{device} is not a device ordinal")
        result: int = device
        return result
    raise TypeError(f"expected a Device or an index, not {type(device).__name__}")


def as_device(device: Any) -> Device:
    """``device`` as a `Device`: a Device, an index, or None for the current device."""
    if device is None:
        return Device.current()
    if isinstance(device, Device):
        return device
    return Device(device)
