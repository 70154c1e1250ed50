"""The stream protocols: ``__hip_stream__`` and ``__cuda_stream__`` read in one place
(`stream_handle`), for every function of rocpy that takes another library's stream
(`rocpy.hip.stream.as_stream`, DLPack's ``stream=``)."""
from __future__ import annotations

from typing import Any

from . import _api
from ._api import api


def stream_handle(obj: Any) -> int | None:
    """The stream handle (an int) an object exports through ``__hip_stream__`` or
    ``__cuda_stream__`` (a method returning ``(version, handle)``, or such a tuple),
    or None when it has neither: the one reader of the stream protocols.  A
    malformed answer is a ``TypeError`` naming the object's type."""
    for name in ("__hip_stream__", "__cuda_stream__"):
        fn = getattr(obj, name, None)
        if fn is not None:
            break
    else:
        return None
    value = fn() if callable(fn) else fn
    if isinstance(value, tuple):
        if len(value) != 2:
            raise TypeError(f"{type(obj).__name__}.{name}() returned {value!r}, "
                            "not (version, handle)")
        value = value[1]
    if isinstance(value, bool) or not isinstance(value, int):
        if type(value).__module__ == "_cffi_backend":
            return _api.address(value)
        raise TypeError(f"{type(obj).__name__}.{name}() gave a {type(value).__name__} handle, "
                        "not an int")
    if value < 0:
        raise ValueError(f"{type(obj).__name__}.{name}() gave a negative handle {value}")
    return value


def stream_device(value: int) -> Any:
    """The device index of a foreign stream handle (``hipGetStreamDeviceId``), or None
    where it cannot be asked: the null and per-thread handles, nvidia, a runtime
    without the call, or a failure."""
    a = api()
    if value in (0, 1, 2) or a.name == "nvidia" or not a.has("hipGetStreamDeviceId"):
        return None
    index = a.lib.hipGetStreamDeviceId(a.ffi.cast("hipStream_t", value))
    return index if index >= 0 else None
