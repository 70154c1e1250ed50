"""Green (execution) contexts: a device's compute units split into partitions,
each a `GreenContext` whose streams run only there (HIP 7.2+, CUDA's green
contexts)::

    dev = Device(0)
    sm = dev.resources().sm                  # SMResource: all of the device's CUs
    groups, rest = sm.split(16, groups=2)    # two partitions of 16 CUs
    ctx = dev.create_green_context(groups[0])
    s = ctx.create_stream()
    ...                                      # work on s runs on those 16 CUs
    ctx.close()                              # s is now detached: using it raises
    s.close()                                # HipError(hipErrorStreamDetached); close works

An `SMResource` is a value (a copy of HIP's ``hipDevResource``); a
`GreenContext` owns its ``hipExecutionCtx_t``.  Closing (or collecting) it
destroys the context, which detaches its streams as HIP does: every submission
or synchronisation on them fails with ``hipErrorStreamDetached``, an active
capture on them is invalidated, their getters and ``close`` still work.  A
stream keeps its context object alive, so only an explicit ``close`` detaches.

Where the headers rocpy was built against do not declare the family (ROCm
before 7.2, and HIP's NVIDIA platform here), every entry point raises
`rocpy.NotSupportedError` naming what is missing.
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._handle import Handle
from ..errors import NotSupportedError, hip_error
from . import _api
from ._api import api, use_device

if TYPE_CHECKING:
    from .device import Device
    from .event import Event
    from .stream import Stream

# a stream keeps the context that made it (Stream has no room for it)
_owner_of: weakref.WeakKeyDictionary[Any, GreenContext] = weakref.WeakKeyDictionary()


def _hip() -> Any:
    """The backend, untyped: the family is absent from the lib stubs of older headers."""
    return api()


def _require(what: str) -> Any:
    a = _hip()
    if not a.has("hipGreenCtxCreate"):
        raise NotSupportedError(
            f"{what}: green contexts need HIP 7.2 or newer (hipGreenCtxCreate); rocpy was "
            f"built against headers that do not declare it")
    return a


def _check(status: int, call: str) -> None:
    if status:
        raise hip_error(status, call)


class SMResource:
    """A set of a device's compute units (HIP's SM resource, ``hipDevResource``).

    Get one from `Device.resources`, split it with `split` / `partition`, make
    a context of pieces with `Device.create_green_context`.  Attributes:
    ``sm_count`` (CUs), ``min_partition_size`` and ``coscheduled_alignment``
    (the granule: 2 CUs on WGP-mode devices, else 1), ``flags``.
    """

    __slots__ = ("_res", "device")

    _res: Any
    device: Device

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("get an SMResource from Device.resources().sm")

    @classmethod
    def _wrap(cls, device: Device, res: Any) -> SMResource:
        a = _hip()
        r = cls.__new__(cls)
        r._res = a.ffi.new("hipDevResource *", res[0] if a.ffi.typeof(res).kind == "pointer" else res)
        r._res.nextResource = a.ffi.NULL
        r.device = device
        return r

    @property
    def sm_count(self) -> int:
        return int(self._res.sm.smCount)

    @property
    def min_partition_size(self) -> int:
        return int(self._res.sm.minSmPartitionSize)

    @property
    def coscheduled_alignment(self) -> int:
        return int(self._res.sm.smCoscheduledAlignment)

    @property
    def flags(self) -> int:
        return int(self._res.sm.flags)

    def __repr__(self) -> str:
        return f"<SMResource {self.sm_count} CUs of device {self.device.index}>"

    def split(self, count: int, *, groups: int | None = None) -> tuple[list[SMResource],
                                                                         SMResource | None]:
        """Equal groups of at least ``count`` CUs (``hipDevSmResourceSplitByCount``).

        ``count`` is rounded up to the granule (0: one granule); as many groups
        as fit, at most ``groups`` (default: all that fit).

        Returns:
            The groups and what is left (None when nothing is).

        Raises:
            rocpy.InvalidValueError: ``count`` or ``groups`` negative.
            rocpy.HipError: the runtime refused the split (its status).
        """
        a = _require("SMResource.split")
        if count < 0 or (groups is not None and groups < 0):
            raise _api.invalid("SMResource.split", f"count={count}, groups={groups}: must not "
                                                   f"be negative")
        ffi, lib = a.ffi, a.lib
        n = ffi.new("unsigned int *")
        _check(lib.hipDevSmResourceSplitByCount(ffi.NULL, n, self._res, ffi.NULL, 0, count),
               "hipDevSmResourceSplitByCount")
        if groups is not None:
            n[0] = min(n[0], groups)
        out = ffi.new("hipDevResource[]", max(n[0], 1))
        rest = ffi.new("hipDevResource *")
        _check(lib.hipDevSmResourceSplitByCount(out, n, self._res, rest, 0, count),
               "hipDevSmResourceSplitByCount")
        return [SMResource._wrap(self.device, out[i]) for i in range(n[0])], self._rest(rest)

    def partition(self, counts: Sequence[int], *, backfill_last: bool = False
                  ) -> tuple[list[SMResource], SMResource | None]:
        """Groups of the given sizes (``hipDevSmResourceSplit``); a size of 0
        takes what is left (rounded down to the granule, or all of it for the
        last group with ``backfill_last``).

        Raises:
            rocpy.InvalidValueError: no sizes, or a negative one.
            rocpy.HipError: the sizes do not fit (hipErrorInvalidResourceConfiguration).
        """
        a = _require("SMResource.partition")
        counts = list(counts)
        if not counts or any(c < 0 for c in counts):
            raise _api.invalid("SMResource.partition", f"counts={counts}: need one or more "
                                                       f"sizes, none negative")
        ffi, lib = a.ffi, a.lib
        params = ffi.new("hipDevSmResourceGroupParams[]", len(counts))
        for i, c in enumerate(counts):
            params[i].smCount = c
        if backfill_last:
            params[len(counts) - 1].flags = lib.hipDevSmResourceGroupBackfill
        out = ffi.new("hipDevResource[]", len(counts))
        rest = ffi.new("hipDevResource *")
        _check(lib.hipDevSmResourceSplit(out, len(counts), self._res, rest, 0, params),
               "hipDevSmResourceSplit")
        return [SMResource._wrap(self.device, out[i]) for i in range(len(counts))], self._rest(rest)

    def _rest(self, rest: Any) -> SMResource | None:
        return None if rest.type == _hip().lib.hipDevResourceTypeInvalid else SMResource._wrap(
            self.device, rest)


@dataclass(frozen=True)
class DeviceResources:
    """What `Device.resources` returns: the device's resources by kind (``sm``)."""

    sm: SMResource


def device_resources(device: Device) -> DeviceResources:
    """`Device.resources`: ``hipDeviceGetDevResource`` of the SM kind."""
    a = _require("Device.resources")
    r = a.ffi.new("hipDevResource *")
    use_device(device.index)
    _check(a.lib.hipDeviceGetDevResource(device.index, r, a.lib.hipDevResourceTypeSm),
           "hipDeviceGetDevResource")
    return DeviceResources(SMResource._wrap(device, r))


def _destroy_ctx(handle: Any) -> None:
    _check(_hip().lib.hipExecutionCtxDestroy(handle), "hipExecutionCtxDestroy")


class GreenContext(Handle):
    """A partition of a device's CUs with its own streams (``hipExecutionCtx_t``).

    Make one with `Device.create_green_context`.  ``close`` destroys it and
    detaches its streams (see the module docstring).
    """

    __slots__ = ("device", "_resources")

    device: Device
    _resources: tuple[SMResource, ...]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("make a GreenContext with Device.create_green_context()")

    @classmethod
    def _create(cls, device: Device, resources: SMResource | Iterable[SMResource]) -> GreenContext:
        a = _require("Device.create_green_context")
        ffi, lib = a.ffi, a.lib
        res = (resources,) if isinstance(resources, SMResource) else tuple(resources)
        if not res or not all(isinstance(r, SMResource) for r in res):
            raise TypeError("create_green_context takes an SMResource or SMResources")
        if any(r.device.index != device.index for r in res):
            raise _api.fail("hipErrorInvalidDevice", "Device.create_green_context",
                            f"the resources are not all of device {device.index}")
        arr = ffi.new("hipDevResource[]", [r._res[0] for r in res])
        desc = ffi.new("hipDevResourceDesc_t *")
        use_device(device.index)
        _check(lib.hipDevResourceGenerateDesc(desc, arr, len(res)), "hipDevResourceGenerateDesc")
        out = ffi.new("hipExecutionCtx_t *")
        _check(lib.hipGreenCtxCreate(out, desc[0], device.index, 0), "hipGreenCtxCreate")
        ctx = cls.__new__(cls)
        Handle.__init__(ctx, out[0], (_destroy_ctx, out[0]), parents=(device.context,))
        ctx.device = device
        ctx._resources = res
        return ctx

    @property
    def resources(self) -> tuple[SMResource, ...]:
        """The resources it was made of."""
        return self._resources

    @property
    def id(self) -> int:
        """The runtime's id of the context (``hipExecutionCtxGetId``)."""
        a = _hip()
        out = a.ffi.new("unsigned long long *")
        _check(a.lib.hipExecutionCtxGetId(self._require_open(), out), "hipExecutionCtxGetId")
        return int(out[0])

    @property
    def sm_count(self) -> int:
        """The CUs it may use (its SM resources' sum)."""
        return sum(r.sm_count for r in self._resources)

    def create_stream(self, *, non_blocking: bool = True, priority: int = 0) -> Stream:
        """A stream of this context (``hipExecutionCtxStreamCreate``): its work
        runs on the context's CUs; owned (``close`` or ``with``).

        Raises:
            rocpy.ClosedError: the context is closed.
            rocpy.HipError: the runtime's status.
        """
        from .stream import _OWNED, Stream
        a = _hip()
        h = self._require_open()
        out = a.ffi.new("hipStream_t *")
        flags = a.lib.hipStreamNonBlocking if non_blocking else a.lib.hipStreamDefault
        use_device(self.device.index)
        _check(a.lib.hipExecutionCtxStreamCreate(out, h, flags, int(priority)),
               "hipExecutionCtxStreamCreate")
        try:
            s = Stream._new(self.device, out[0], _OWNED, True)
        except BaseException:
            a.lib.hipStreamDestroy(out[0])
            raise
        s._flags = flags
        _owner_of[s] = self
        return s

    def sync(self) -> None:
        """Wait for the work of every stream of the context (``hipExecutionCtxSynchronize``)."""
        _check(_hip().lib.hipExecutionCtxSynchronize(self._require_open()),
               "hipExecutionCtxSynchronize")

    def record(self, event: Event | None = None) -> Event:
        """Record ``event`` (default: a new one) after the work of all its streams
        (``hipExecutionCtxRecordEvent``)."""
        if event is None:
            event = self.device.create_event()
        _check(_hip().lib.hipExecutionCtxRecordEvent(self._require_open(), event.handle),
               "hipExecutionCtxRecordEvent")
        return event

    def wait(self, event: Event) -> None:
        """Make every stream of the context wait for ``event`` (``hipExecutionCtxWaitEvent``)."""
        _check(_hip().lib.hipExecutionCtxWaitEvent(self._require_open(), event.handle),
               "hipExecutionCtxWaitEvent")

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"{self.sm_count} CUs"
        return f"<GreenContext of device {self.device.index}, {state}>"

    def __enter__(self) -> GreenContext:
        self._require_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
