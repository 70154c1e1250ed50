"""Internals shared by the HIP layer: the backend's ffi/lib, the per-thread
current device, and errors raised before any native call.

Nothing here is public.  Hot paths copy what they need (``lib`` functions,
constants) into locals or slots once; this module only answers the first
time.
"""
from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from .. import _backend
from ..errors import StatusError, hip_error

if TYPE_CHECKING:
    from .._backend import Backend

#: DLPack device types (dlpack.h, DLDeviceType).
KDL_CPU, KDL_CUDA, KDL_CUDA_HOST, KDL_ROCM, KDL_ROCM_HOST, KDL_CUDA_MANAGED = 1, 2, 3, 10, 11, 13


class Api:
    """The loaded backend as the HIP layer uses it."""

    __slots__ = ("ffi", "lib", "name", "missing", "not_ready", "null")

    def __init__(self, backend: Backend) -> None:
        self.ffi = backend.ffi
        self.lib = backend.lib
        self.name: str = backend.name
        self.missing = frozenset(backend.missing)
        self.not_ready: int = self.lib.hipErrorNotReady
        self.null = self.ffi.NULL

    def has(self, function: str) -> bool:
        """Whether the library really exports ``function`` (not a placeholder)."""
        return function not in self.missing and hasattr(self.lib, function)


_api: Api | None = None
_api_lock = threading.Lock()


def _forget_after_fork() -> None:
    # the next api() goes through _backend.current(), which refuses in a forked child
    global _api, _api_lock
    _api = None
    _api_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_after_fork)


def api() -> Api:
    """The loaded backend (chosen at the first call)."""
    global _api
    if _api is None:
        backend = _backend.current()
        with _api_lock:
            if _api is None:
                _api = Api(backend)
    return _api


# ---- the current device, per thread -------------------------------------

_tls = threading.local()


def use_device(index: int) -> None:
    """Make ``index`` the calling thread's current HIP device, if it is not already.

    HIP keeps a current device per thread and uses it for allocations, stream
    and event creation, module loads and anything on the null stream.  rocpy
    remembers, per thread, what it last set, so the common case costs one
    attribute read.  Code that calls ``hipSetDevice`` itself should call
    `forget_current_device` (or `Device.set_current`) afterwards.
    """
    if getattr(_tls, "device", -1) != index:
        st = api().lib.hipSetDevice(index)
        if st:
            raise hip_error(st, "hipSetDevice")
        _tls.device = index


def forget_current_device() -> None:
    """Forget what rocpy believes the calling thread's current device is."""
    _tls.device = -1


def current_device_index() -> int:
    """The calling thread's current device as HIP reports it (refreshes the cache)."""
    a = api()
    out = a.ffi.new("int *")
    st = a.lib.hipGetDevice(out)
    if st:
        raise hip_error(st, "hipGetDevice")
    _tls.device = out[0]
    result: int = out[0]
    return result


# ---- errors raised before a native call -----------------------------------

def fail(status_name: str, call: str, message: str) -> StatusError:
    """The `HipError` subclass HIP would raise for ``status_name``, with our message.

    Used where rocpy checks an argument before calling the runtime, so the
    exception (and its ``status``) is the one the runtime reports for that
    input, with a message that says what exactly is wrong.
    """
    lib = api().lib
    status = getattr(lib, status_name)
    err = hip_error(status, call)
    return type(err)(err.status, err.name, message, call)


def invalid(call: str, message: str) -> StatusError:
    """`fail` with ``hipErrorInvalidValue``."""
    return fail("hipErrorInvalidValue", call, message)


def raise_status(status: int, call: str, note: str | None = None) -> NoReturn:
    """Raise the error for ``status`` with an explanatory note appended."""
    err = hip_error(status, call)
    if note:
        err = type(err)(err.status, err.name, f"{err.message}; {note}", call)
    raise err


def address(cdata: Any) -> int:
    """The integer address of a cffi pointer."""
    return int(api().ffi.cast("uintptr_t", cdata))
