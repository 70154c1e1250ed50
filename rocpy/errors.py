"""Exceptions for HSA, HIP and hipRTC status codes, and the checks that raise them.

A failing call raises a family error (`HsaError`, `HipError`, `HiprtcError`)
carrying the status code, its name, the runtime's own message and the call that
failed.  Statuses users want to catch get a concrete class that also derives
from a family-neutral one, so ``except OutOfMemoryError`` catches HIP and HSA
alike.  Classes are chosen by status *name*: the numbers differ between ROCm
versions and platforms.

Success paths cost one truth test::

    st = lib.hipModuleLaunchKernel(...)
    if st:
        raise hip_error(st, "hipModuleLaunchKernel")

or, where a function call does not matter, ``check_hip(st, "hipMalloc")``.
Names and messages are looked up in the loaded backend once per code.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any


class RocpyError(Exception):
    """Base of every exception rocpy raises."""


class ClosedError(RocpyError, ValueError):
    """An object was used after `close()`, or after its parent invalidated it."""


class CallbackError(RocpyError):
    """User callbacks raised on rocpy's dispatcher thread; `.errors` lists them.

    Raised on the next use of the object that owned the callbacks, with the
    first exception as ``__cause__``.
    """

    def __init__(self, errors: list[BaseException]) -> None:
        super().__init__(errors)
        self.errors = errors

    def __str__(self) -> str:
        first = self.errors[0]
        more = f" (and {len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
        return f"a callback raised {type(first).__name__}: {first}{more}"


class ForkError(RocpyError, RuntimeError):
    """rocpy was used in a process forked after the runtime was initialized.

    HIP and HSA keep threads, device queues and memory mappings that a
    forked child does not inherit in a usable state (as with CUDA and ROCr);
    the child must not call them.  Start workers with multiprocessing's
    ``"spawn"`` or ``"forkserver"`` method, or fork before using rocpy.
    """


def fork_message(parent: int) -> str:
    """Why a forked child may not use rocpy (for `ForkError` and invalidated objects)."""
    return (f"this process was forked from pid {parent} after the HIP/HSA runtime was "
            "initialized there; a forked child cannot use it (start workers with "
            "multiprocessing's 'spawn' or 'forkserver' method instead)")


class ReleaseWarning(RuntimeWarning):
    """Releasing a native handle failed where no exception can be raised."""


class CallbackWarning(RuntimeWarning):
    """A user callback raised on rocpy's dispatcher thread."""


class StatusError(RocpyError):
    """A runtime call returned a failure status.

    Attributes: ``status`` (int), ``name`` (e.g. ``'hipErrorInvalidValue'``),
    ``message`` (the runtime's text), ``call`` (the function that failed).
    """

    def __init__(self, status: int, name: str, message: str, call: str) -> None:
        super().__init__(status, name, message, call)
        self.status = status
        self.name = name
        self.message = message
        self.call = call

    def __str__(self) -> str:
        return f"{self.call} failed: {self.name} ({self.message}) [{self.status}]"


class HsaError(StatusError):
    """An HSA runtime call failed."""


class HipError(StatusError):
    """A HIP runtime call failed."""


class HiprtcError(StatusError):
    """A hipRTC call failed."""


class OutOfMemoryError(RocpyError, MemoryError):
    """The runtime could not allocate memory or resources."""


class InvalidValueError(RocpyError, ValueError):
    """An argument was invalid."""


class InvalidHandleError(RocpyError, ValueError):
    """A handle (stream, event, signal, queue, agent, ...) was invalid."""


class NotReadyError(RocpyError):
    """Work is not complete yet, where that is an error for the caller."""


class NotSupportedError(RocpyError):
    """The runtime or device does not support the operation."""


class NotInitializedError(RocpyError):
    """The runtime is not initialized."""


class NoDeviceError(RocpyError):
    """No device is available."""


class HsaOutOfMemoryError(HsaError, OutOfMemoryError):
    """HSA ran out of memory or resources."""


class HsaInvalidValueError(HsaError, InvalidValueError):
    """HSA rejected an argument."""


class HsaInvalidHandleError(HsaError, InvalidHandleError):
    """HSA rejected a handle (agent, region, signal, queue, executable, ...)."""


class HsaNotSupportedError(HsaError, NotSupportedError):
    """HSA does not support the operation."""


class HsaNotInitializedError(HsaError, NotInitializedError):
    """HSA is not initialized (`hsa_init` was not called)."""


class HsaNoDeviceError(HsaError, NoDeviceError):
    """HSA found no usable agent."""


class HipOutOfMemoryError(HipError, OutOfMemoryError):
    """HIP ran out of memory."""


class HipInvalidValueError(HipError, InvalidValueError):
    """HIP rejected an argument."""


class HipInvalidHandleError(HipError, InvalidHandleError):
    """HIP rejected a handle (stream, event, context, ...)."""


class HipNotReadyError(HipError, NotReadyError):
    """HIP work is not complete (hipErrorNotReady)."""


class HipNotSupportedError(HipError, NotSupportedError):
    """HIP does not support the operation."""


class HipNotInitializedError(HipError, NotInitializedError):
    """HIP is not initialized."""


class HipNoDeviceError(HipError, NoDeviceError):
    """HIP found no device."""


class HiprtcOutOfMemoryError(HiprtcError, OutOfMemoryError):
    """hipRTC ran out of memory."""


class HiprtcInvalidValueError(HiprtcError, InvalidValueError):
    """hipRTC rejected an input or option."""


class HiprtcInvalidHandleError(HiprtcError, InvalidHandleError):
    """hipRTC rejected a program handle."""


def _classes(table: dict[type[StatusError], tuple[str, ...]]) -> dict[str, type[StatusError]]:
    return {name: cls for cls, names in table.items() for name in names}


# HSA has no "not ready" status: signal waits report completion by value.
_HSA_CLASSES = _classes({
    HsaOutOfMemoryError: ("HSA_STATUS_ERROR_OUT_OF_RESOURCES",),
    HsaInvalidValueError: (
        "HSA_STATUS_ERROR_INVALID_ARGUMENT", "HSA_STATUS_ERROR_INVALID_ALLOCATION",
        "HSA_STATUS_ERROR_INVALID_INDEX", "HSA_STATUS_ERROR_INVALID_ISA_NAME",
        "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME", "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS",
        "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION", "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT"),
    HsaInvalidHandleError: (
        "HSA_STATUS_ERROR_INVALID_AGENT", "HSA_STATUS_ERROR_INVALID_REGION",
        "HSA_STATUS_ERROR_INVALID_SIGNAL", "HSA_STATUS_ERROR_INVALID_QUEUE",
        "HSA_STATUS_ERROR_INVALID_ISA", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT",
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE", "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL",
        "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL", "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER",
        "HSA_STATUS_ERROR_INVALID_CACHE", "HSA_STATUS_ERROR_INVALID_WAVEFRONT",
        "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP", "HSA_STATUS_ERROR_INVALID_MEMORY_POOL"),
    HsaNotSupportedError: (
        "HSA_STATUS_ERROR_NOT_SUPPORTED", "HSA_EXT_STATUS_ERROR_IMAGE_FORMAT_UNSUPPORTED",
        "HSA_EXT_STATUS_ERROR_IMAGE_SIZE_UNSUPPORTED", "HSA_EXT_STATUS_ERROR_IMAGE_PITCH_UNSUPPORTED",
        "HSA_EXT_STATUS_ERROR_SAMPLER_DESCRIPTOR_UNSUPPORTED"),
    HsaNotInitializedError: ("HSA_STATUS_ERROR_NOT_INITIALIZED",),
})

_HIP_CLASSES = _classes({
    HipOutOfMemoryError: ("hipErrorOutOfMemory", "hipErrorMemoryAllocation"),
    HipInvalidValueError: (
        "hipErrorInvalidValue", "hipErrorInvalidDevice", "hipErrorInvalidDevicePointer",
        "hipErrorInvalidMemcpyDirection", "hipErrorInvalidPitchValue",
        "hipErrorInvalidConfiguration", "hipErrorInvalidSymbol"),
    HipInvalidHandleError: (
        "hipErrorInvalidHandle", "hipErrorInvalidResourceHandle", "hipErrorInvalidContext",
        "hipErrorContextIsDestroyed"),
    HipNotReadyError: ("hipErrorNotReady",),
    HipNotSupportedError: ("hipErrorNotSupported",),
    HipNotInitializedError: ("hipErrorNotInitialized", "hipErrorInitializationError"),
    HipNoDeviceError: ("hipErrorNoDevice",),
})

# Deprecated aliases share a value with the current name; report the current one.
_HIP_CANONICAL = {
    "hipErrorMemoryAllocation": "hipErrorOutOfMemory",
    "hipErrorInitializationError": "hipErrorNotInitialized",
    "hipErrorInvalidResourceHandle": "hipErrorInvalidHandle",
    "hipErrorMapBufferObjectFailed": "hipErrorMapFailed",
}

_HIPRTC_CLASSES = _classes({
    HiprtcOutOfMemoryError: ("HIPRTC_ERROR_OUT_OF_MEMORY",),
    HiprtcInvalidValueError: ("HIPRTC_ERROR_INVALID_INPUT", "HIPRTC_ERROR_INVALID_OPTION"),
    HiprtcInvalidHandleError: ("HIPRTC_ERROR_INVALID_PROGRAM",),
})


def _hsa_message(ffi: Any, lib: Any, status: int) -> str | None:
    out = ffi.new("const char **")
    return _text(ffi, out[0]) if lib.hsa_status_string(status, out) == 0 else None


def _text(ffi: Any, ptr: Any) -> str | None:
    return None if ptr == ffi.NULL else ffi.string(ptr).decode("utf-8", "replace")


def _hip_message(ffi: Any, lib: Any, status: int) -> str | None:
    return _text(ffi, lib.hipGetErrorString(status))


def _hiprtc_message(ffi: Any, lib: Any, status: int) -> str | None:
    return _text(ffi, lib.hiprtcGetErrorString(status))


class _Family:
    """Turns one API family's status codes into exceptions, caching per code."""

    def __init__(self, base: type[StatusError], ctype: str, prefixes: tuple[str, ...],
                 classes: dict[str, type[StatusError]],
                 message: Callable[[Any, Any, int], str | None],
                 canonical: dict[str, str] | None = None) -> None:
        self.base = base
        self.ctype = ctype
        self.prefixes = prefixes
        self.classes = classes
        self.message = message
        self.canonical: dict[str, str] = canonical or {}
        self._api: tuple[Any, Any] | None = None
        # Filled without a lock: two threads racing on one code store equal values.
        self._cache: dict[int, tuple[type[StatusError], str, str]] = {}

    def bind(self, ffi: Any, lib: Any) -> None:
        """Use this ffi/lib for lookups (None: the loaded backend); clears the cache."""
        self._api = None if ffi is None else (ffi, lib)
        self._cache = {}

    def error(self, status: int, call: str) -> StatusError:
        entry = self._cache.get(status)
        if entry is None:
            entry = self._cache[status] = self._describe(status)
        cls, name, message = entry
        return cls(status, name, message, call)

    def _describe(self, status: int) -> tuple[type[StatusError], str, str]:
        # Never raises: a failure here would hide the error being reported.
        name, message = str(status), "unknown status"
        try:
            ffi, lib = self._api or _backend_api()
            name = self._name(ffi, lib, status)
            message = self.message(ffi, lib, status) or message
        except Exception:
            pass
        name = self.canonical.get(name, name)
        return self.classes.get(name, self.base), name, message

    def _name(self, ffi: Any, lib: Any, status: int) -> str:
        name = ffi.string(ffi.cast(self.ctype, status))
        if name.isidentifier():
            result: str = name
            return result
        # Extensions add statuses in anonymous enums (hsa_ext_amd.h does).
        for attr in dir(lib):
            if attr.startswith(self.prefixes) and getattr(lib, attr, None) == status:
                return attr
        return str(status)


def _backend_api() -> tuple[Any, Any]:
    from rocpy import _backend
    backend = _backend.current()
    return backend.ffi, backend.lib


HSA = _Family(HsaError, "hsa_status_t", ("HSA_STATUS_", "HSA_EXT_STATUS_"),
              _HSA_CLASSES, _hsa_message)
HIP = _Family(HipError, "hipError_t", ("hipError",), _HIP_CLASSES, _hip_message, _HIP_CANONICAL)
HIPRTC = _Family(HiprtcError, "hiprtcResult", ("HIPRTC_",), _HIPRTC_CLASSES, _hiprtc_message)


def hsa_error(status: int, call: str) -> StatusError:
    """The `HsaError` (subclass) for `status` returned by `call`, to raise."""
    return HSA.error(status, call)


def hip_error(status: int, call: str) -> StatusError:
    """The `HipError` (subclass) for `status` returned by `call`, to raise.

    On the stub, a ``hipErrorLaunchFailure`` after kernel emulations raised
    carries them: ``__cause__`` is a `CallbackError` of those exceptions.
    """
    err = HIP.error(status, call)
    if err.name == "hipErrorLaunchFailure":
        _attach_emulation_failures(err)
    return err


def _attach_emulation_failures(err: StatusError) -> None:
    try:
        import sys
        control = sys.modules.get("rocpy.stub.control")   # loaded iff emulations are registered
        failures = control.take_failures() if control is not None else []
    except Exception:   # never hide the error being reported
        return
    if failures:
        try:    # reported here, with their exceptions: not again by the next synchronization
            _backend_api()[1].rocpy_stub_clear_launch_failures()
        except Exception:
            pass
        cause = CallbackError(failures)
        cause.__cause__ = failures[0]
        err.__cause__ = cause


def hiprtc_error(status: int, call: str) -> StatusError:
    """The `HiprtcError` (subclass) for `status` returned by `call`, to raise."""
    return HIPRTC.error(status, call)


def check_hsa(status: int, call: str) -> None:
    """Raise the matching `HsaError` when `status` is not HSA_STATUS_SUCCESS.

    Informational statuses (HSA_STATUS_INFO_BREAK) are non-zero too: callers
    expecting them test for them first.
    """
    if status:
        raise HSA.error(status, call)


def check_hip(status: int, call: str) -> None:
    """Raise the matching `HipError` when `status` is not hipSuccess."""
    if status:
        raise HIP.error(status, call)


def check_hiprtc(status: int, call: str) -> None:
    """Raise the matching `HiprtcError` when `status` is not HIPRTC_SUCCESS."""
    if status:
        raise HIPRTC.error(status, call)
