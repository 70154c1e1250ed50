"""The stub's control surface (``stub_control.h``) in Python terms."""
from __future__ import annotations

import sys
import threading
import traceback
from typing import Any, Callable

import numpy as np

from .. import _backend

FAULTS = {"alloc": 0, "queue_error": 1, "memory_fault": 2}

_lock = threading.Lock()
_handles: dict[str, Any] = {}          # name -> ffi handle kept alive while registered
_installed: set[int] = set()           # id(ffi) whose def_extern is installed
_failures: list[BaseException] = []   # emulations' exceptions not yet reported
_MAX_FAILURES = 64
#: what a raising emulation returns to the stub: a failed launch (not a memory fault)
RAISED = 0x52414953


def take_failures() -> list[BaseException]:
    """The exceptions emulations raised since the last call (oldest first), forgotten.

    A launch whose emulation raised fails: the next synchronization of its
    device's streams reports ``hipErrorLaunchFailure`` (a `rocpy.HipError`
    whose ``__cause__`` is a `rocpy.CallbackError` of these exceptions, each
    with its traceback).
    """
    with _lock:
        out = list(_failures)
        _failures.clear()
    return out


def _stub() -> tuple[Any, Any]:
    backend = _backend.current()
    if backend.name != "stub":
        raise RuntimeError(f"rocpy.stub controls the stub runtime; the backend is {backend.name!r}")
    return backend.ffi, backend.lib


class Dispatch:
    """One kernel dispatch as an emulation sees it (valid during the call only).

    ``grid`` is in work-items per dimension, ``block`` the work-group size.
    Device memory is host memory in the stub: ``array(ptr, dtype, count)``
    views it as numpy without copying.
    """

    __slots__ = ("name", "kernarg", "grid", "block", "group_segment_size", "device", "_ffi",
                 "_signature")

    def __init__(self, ffi: Any, d: Any, signature: Any = None) -> None:
        self._ffi = ffi
        self._signature = signature
        self.name: str = ffi.string(d.name).decode()
        self.kernarg: memoryview = memoryview(ffi.buffer(d.kernarg, d.kernarg_size)) \
            if d.kernarg_size else memoryview(b"")
        self.grid: tuple[int, int, int] = tuple(d.grid)
        self.block: tuple[int, int, int] = tuple(d.block)
        self.group_segment_size: int = d.group_segment_size
        self.device: int = d.device

    @property
    def args(self) -> dict[str, Any]:
        """The arguments by name, typed as the ``signature`` given to `register_kernel`
        says (pointers as addresses); without one, a C++ kernel's mangled name gives
        the types and the names are ``arg0``, ``arg1``... (`signature.from_symbol`)."""
        if self._signature is None:
            from .signature import from_symbol
            self._signature = from_symbol(self.name)
        if self._signature is None:
            raise ValueError(f"kernel {self.name!r}: no signature was registered with its emulation "
                             f"(register_kernel(name, fn, signature='float *x, int n')); "
                             f"read arguments with d.arg(offset, fmt)")
        result: dict[str, Any] = self._signature.unpack(self.kernarg, self.name)
        return result

    def arg(self, offset: int, fmt: str) -> Any:
        """The kernel argument at ``offset`` unpacked with struct format ``fmt``."""
        import struct
        return struct.unpack_from("<" + fmt, self.kernarg, offset)[0]

    def array(self, ptr: int, dtype: Any, count: int) -> np.ndarray:
        """A writable numpy view of ``count`` elements at device address ``ptr``."""
        dtype = np.dtype(dtype)
        buf = self._ffi.buffer(self._ffi.cast("char *", ptr), count * dtype.itemsize)
        return np.frombuffer(buf, dtype=dtype, count=count)


def _install(ffi: Any) -> None:
    if id(ffi) in _installed:
        return

    extern: Callable[[Callable[[Any, Any], int]], Callable[[Any, Any], int]] = ffi.def_extern()

    @extern
    def rocpy_stub_python_kernel(d: Any, user: Any) -> int:  # called from C
        fn, signature = ffi.from_handle(user)
        try:
            result = fn(Dispatch(ffi, d, signature))
            return int(result or 0)
        except BaseException as exc:  # an emulation's bug is a failed launch, never a crash
            name = ffi.string(d.name).decode(errors="replace")
            text = traceback.format_exc()
            sys.stderr.write(f"rocpy.stub: the emulation of kernel {name!r} raised:\n" + text)
            if sys.version_info >= (3, 11):  # notes are new in 3.11
                exc.add_note(f"raised by the stub's emulation of kernel {name!r}")
            with _lock:
                if len(_failures) < _MAX_FAILURES:
                    _failures.append(exc)
            return RAISED

    _installed.add(id(ffi))


def register_kernel(name: str, fn: Callable[[Dispatch], int | None],
                    signature: str | None = None) -> None:
    """Emulate kernel ``name`` with ``fn(dispatch)`` (return 0/None, or non-zero for a
    failed launch; an exception is a failed launch too, reported at the next
    synchronization).

    ``signature`` (``"const float *a, float *b, int n"``, the kernel's
    parameters) gives ``dispatch.args``, the arguments by name and type.

    Replaces an earlier emulation of the same name, and takes precedence over
    any built-in one (`use_builtin`).  ``fn`` runs on the stub's executing
    thread, in stream/queue order.
    """
    if not callable(fn):
        raise TypeError(f"the emulation of {name!r} must be callable, not {type(fn).__name__}")
    from .signature import Signature
    parsed = Signature(signature) if signature is not None else None
    ffi, lib = _stub()
    with _lock:
        _install(ffi)
        handle = ffi.new_handle((fn, parsed))
        if lib.rocpy_stub_register_kernel(name.encode(), lib.rocpy_stub_python_kernel, handle) != 0:
            raise ValueError(f"cannot register an emulation for {name!r}")
        _handles[name] = handle


def use_builtin(name: str, on: bool = True) -> None:
    """Let the stub's built-in emulation ``name`` (``empty``, ``vadd``, ``fill``) run
    kernels of that name that have no emulation of their own (``on=False``: stop).

    Built-ins live in a namespace of their own and run nothing unless asked
    (here or by ``$ROCPY_STUB_BUILTINS=empty,vadd``): a user's ``vadd`` is
    never silently replaced by rocpy's.  ``ValueError`` for a name that has
    no built-in.
    """
    ffi, lib = _stub()
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    if lib.rocpy_stub_use_builtin(name.encode(), int(bool(on))) != 0:
        raise ValueError(f"the stub has no built-in emulation named {name!r}")


def cpu_builds() -> int:
    """CPU builds of kernels (`rocpy.cpukern`) some loaded code object holds now: a HIP
    module, a registered fat binary or an HSA executable.  Each dispatch runs the build of
    the code object it was launched from; unloading the last holder drops the build."""
    _, lib = _stub()
    return int(lib.rocpy_stub_cpu_builds())


def unregister_kernel(name: str) -> None:
    """Remove the emulation of ``name`` (a dispatch of it then fails as a missing kernel)."""
    ffi, lib = _stub()
    with _lock:
        lib.rocpy_stub_register_kernel(name.encode(), ffi.NULL, ffi.NULL)
        _handles.pop(name, None)


def inject(kind: str, skip: int = 0, count: int = 1) -> None:
    """Arm a fault: ``alloc``, ``queue_error`` or ``memory_fault``.

    It fires at the (skip+1)-th matching operation, ``count`` times.
    """
    if kind not in FAULTS:
        raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
    if skip < 0 or count < 0:
        raise ValueError("skip and count must be >= 0")
    _, lib = _stub()
    lib.rocpy_stub_inject(FAULTS[kind], skip, count)


def clear_faults() -> None:
    """Disarm every fault."""
    _stub()[1].rocpy_stub_clear_faults()


def live_allocations() -> int:
    """Allocations the stub tracks right now (every kind)."""
    return int(_stub()[1].rocpy_stub_live_allocations())


def device_count() -> int:
    """Devices the stub exposes (after HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES)."""
    return int(_stub()[1].rocpy_stub_device_count())


def aql_overlap(enable: bool | None = None) -> bool:
    """The HSA packet processors' overlap mode; set it when `enable` is given.

    On, kernel dispatches without the barrier bit start before the packets
    ahead of them finish (the later first), as hardware may run them
    concurrently, so a missing barrier gives wrong results.  Returns the mode
    before the call.  Defaults to ``$ROCPY_STUB_AQL_OVERLAP`` (on in rocpy's
    tests).
    """
    return bool(_stub()[1].rocpy_stub_aql_overlap(-1 if enable is None else int(bool(enable))))


def hsa_busy_wait_ns() -> int:
    """Nanoseconds the HSA signal waits so far would have spun on ROCr (cumulative).

    ROCr's interrupt-signal wait polls 200 us, then sleeps for the time left
    truncated to whole milliseconds: the last partial millisecond of every
    finite timeout is a busy loop (all of it for ``HSA_WAIT_STATE_ACTIVE``).
    """
    return int(_stub()[1].rocpy_stub_hsa_busy_wait_ns())


def last_memcpy_kind() -> int:
    """The ``hipMemcpyKind`` the last linear copy (``hipMemcpy``, ``hipMemcpyAsync``,
    ``hipMemcpyWithStream`` and their typed forms) was called with; -1 before any.

    hipamd ignores the kind where it knows both pointers; CUDA does not (a
    ``cudaMemcpyDefault`` costs it a lookup), so tests check what rocpy passes.
    """
    return int(_stub()[1].rocpy_stub_last_memcpy_kind())
