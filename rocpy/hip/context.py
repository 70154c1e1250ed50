"""`Context`: the set of devices allocations belong to (ROCclr's ``amd::Context``).

HIP has two kinds, and rocpy mirrors them:

* the **primary context** of a device, ``dev.context``: one device; device
  memory, pinned memory associated with that device, managed memory made
  while it is current;
* the **host context**, ``Context.host()``: every device, for allocations
  tied to none (portable pinned host memory, managed memory); its null
  stream is the current device's, as HIP's ``getNullStream`` falls back to
  the current device for it.

Allocations hold their context and a context holds its devices, so nothing
is torn down under a live buffer.  Contexts are borrowed (HIP owns them):
`close` does nothing.
"""
from __future__ import annotations

import threading
from typing import Any

from .._handle import Handle
from . import _api
from ._api import api, use_device
from .device import Device, device_count
from .memory import DeviceBuffer, HostBuffer, ManagedBuffer
from .stream import Stream

_host_lock = threading.Lock()
_host: Context | None = None


class Context(Handle):
    """A set of devices that owns allocations; see the module docstring.

    Make one with ``Device(i).context`` or `Context.host`; never directly.
    """

    __slots__ = ("_devices", "_is_host")

    _devices: tuple[Device, ...]
    _is_host: bool

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("use Device(i).context or Context.host()")

    @classmethod
    def _make(cls, devices: tuple[Device, ...], is_host: bool) -> Context:
        ctx = cls.__new__(cls)
        Handle.__init__(ctx, -1 if is_host else devices[0]._index, parents=devices)
        ctx._devices = devices
        ctx._is_host = is_host
        return ctx

    @classmethod
    def _primary(cls, device: Device) -> Context:
        return cls._make((device,), False)

    @classmethod
    def host(cls) -> Context:
        """HIP's host context: every device (the same object until a device reset)."""
        global _host
        ctx = _host
        if ctx is None or ctx._h is None:
            devices = tuple(Device(i) for i in range(device_count()))
            with _host_lock:
                ctx = _host
                if ctx is None or ctx._h is None:
                    ctx = _host = cls._make(devices, True)
        return ctx

    def close(self, stream: Any = None) -> None:
        """Does nothing: contexts belong to HIP."""

    # ---- what it is -------------------------------------------------------------

    @property
    def devices(self) -> tuple[Device, ...]:
        """The devices of this context (one for a primary context)."""
        self._require_open()
        return self._devices

    @property
    def is_host(self) -> bool:
        """True for the host context."""
        return self._is_host

    @property
    def device(self) -> Device:
        """The primary context's device; for the host context, the current device."""
        self._require_open()
        return Device.current() if self._is_host else self._devices[0]

    def __repr__(self) -> str:
        if self._h is None:
            return f"<Context {'host' if self._is_host else 'primary'} closed>"
        if self._is_host:
            return f"<Context host: devices {[d._index for d in self._devices]}>"
        return f"<Context primary of Device {self._devices[0]._index}>"

    def sync(self) -> None:
        """Wait for all work on every device of this context."""
        for dev in self.devices:
            dev.sync()

    # ---- allocations ------------------------------------------------------------

    def _device_index(self) -> int:
        """The device allocations happen on: this context's, or the current one."""
        self._require_open()
        if self._is_host:
            return _api.current_device_index()
        index = self._devices[0]._index
        use_device(index)
        return index

    def alloc(self, nbytes: int, stream: Any = None) -> DeviceBuffer:
        """Device memory of ``nbytes`` bytes (a `DeviceBuffer`).

        Without a stream, ``hipMalloc``.  With ``stream``, a stream-ordered
        allocation (``hipMallocAsync``) usable by work on that stream, freed in
        stream order by ``buf.close(stream=...)`` (``hipFreeAsync``).  Device
        memory belongs to one device: the host context refuses
        (`rocpy.InvalidValueError`); use ``Device(i).context``.

        Args:
            nbytes: The size in bytes.
            stream: Allocate in this stream's order; None: at once.

        Returns:
            The new `DeviceBuffer`.

        Raises:
            rocpy.OutOfMemoryError: the device has not that much free memory.
            rocpy.InvalidValueError: a negative size, the host context, or a
                stream of another device.
        """
        return DeviceBuffer._allocate(self, nbytes, stream)

    def alloc_host(self, nbytes: int, *, portable: bool | None = None, mapped: bool = False,
                   write_combined: bool = False, coherent: bool | None = None) -> HostBuffer:
        """Pinned (page-locked) host memory (a `HostBuffer`, ``hipHostMalloc``).

        ``portable`` (default: True on the host context, False on a primary
        context) makes it pinned for every device; ``mapped`` maps it into the
        device address space (always so on AMD); ``write_combined`` and
        ``coherent`` (True: fine-grained, False: coarse-grained, None: the
        runtime's default) are hipHostMalloc's flags.
        """
        if portable is None:
            portable = self._is_host
        lib = api().lib
        flags = 0
        if portable:
            flags |= lib.hipHostMallocPortable
        if mapped:
            flags |= lib.hipHostMallocMapped
        if write_combined:
            flags |= lib.hipHostMallocWriteCombined
        if coherent is True:
            flags |= getattr(lib, "hipHostMallocCoherent", 0)
        elif coherent is False:
            flags |= getattr(lib, "hipHostMallocNonCoherent", 0)
        return HostBuffer._allocate(self, nbytes, flags)

    def alloc_managed(self, nbytes: int, attach_host: bool = False) -> ManagedBuffer:
        """Managed (unified) memory visible on every device of this context and the host.

        ``hipMallocManaged`` with ``hipMemAttachGlobal`` (``attach_host``:
        ``hipMemAttachHost``).  Made with the context's device current (the
        current device for the host context).
        """
        lib = api().lib
        flags = lib.hipMemAttachHost if attach_host else lib.hipMemAttachGlobal
        return ManagedBuffer._allocate(self, nbytes, flags)
