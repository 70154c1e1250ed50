"""Load one compiled backend module and say why it was chosen.

``ROCPY_BACKEND=auto|amd|nvidia|stub`` (default ``auto``).  ``auto`` takes
the first real backend that finds a device, else the stub.  A backend asked
for by name is taken whenever its module loads, device or not: on a machine
with ROCm but no usable GPU, ``ROCPY_BACKEND=amd`` gives the real libraries,
and their calls report the runtime's own statuses (``hipErrorNoDevice``,
``HSA_STATUS_ERROR_OUT_OF_RESOURCES``), as the C API does.  The choice is
made once, at the first use, and never changes afterwards.
"""
from __future__ import annotations

import ctypes
import importlib
import json
import os
import sys
import threading
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .errors import RocpyError

if TYPE_CHECKING:
    # the build writes a stub per backend module (rocpy/_build/typestub.py); the
    # stub backend's is the widest (every HIP and HSA function of these headers,
    # plus the stub's controls), so type checkers see every backend through it
    from ._lib_stub import _Lib as Lib

BACKENDS = ("amd", "nvidia", "stub")


class BackendUnavailableError(RocpyError, RuntimeError):
    """The backend asked for with ``ROCPY_BACKEND`` cannot run here."""


class NotBuiltError(BackendUnavailableError):
    """rocpy's compiled extension modules (``rocpy._lib_*``) are not built."""


#: How to build the extension modules, for `NotBuiltError`'s message.
BUILD_HINT = ("build them: `bash tools/install.sh` in a source checkout (or "
              "`python3 setup.py build_ext --inplace`), or `pip install rocpy`")


@dataclass(frozen=True)
class BackendInfo:
    """Which backend rocpy uses, and why."""

    name: str
    reason: str
    tried: dict[str, str] = field(default_factory=dict)
    build: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_stub(self) -> bool:
        return self.name == "stub"


@dataclass(frozen=True)
class Backend:
    """A loaded backend: its cffi ``ffi`` and ``lib``, and why it was chosen."""

    info: BackendInfo
    #: cffi's FFI.  Typed Any: a cdata's fields and items are typed by the C
    #: declarations, which types-cffi's CData cannot express
    ffi: Any
    lib: Lib

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def reason(self) -> str:
        return self.info.reason

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(self.info.build.get("missing", ()))

    @property
    def has_hsa(self) -> bool:
        return hasattr(self.lib, "hsa_init")


_lock = threading.Lock()
_current: Backend | None = None
_owner_pid = 0     # the process that loaded the backend; another pid is a forked child


def _import(name: str) -> ModuleType:
    return importlib.import_module(f"rocpy._lib_{name}")


def _build_info(mod: ModuleType) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(mod.ffi.string(mod.lib.rocpy_build_info()).decode())
    return result


def _enum_name(ffi: Any, enum: str, value: int) -> str:
    result: str = ffi.string(ffi.cast(enum, value))
    return result


def _probe_amd(mod: ModuleType) -> tuple[bool, str]:
    """Does the real ROCm runtime find a GPU?  Leaves the runtime as it found it."""
    lib, ffi = mod.lib, mod.ffi
    status = lib.hsa_init()
    if status != lib.HSA_STATUS_SUCCESS:
        return False, (f"hsa_init returned {_enum_name(ffi, 'hsa_status_t', status)}"
                       " (no AMD GPU, or no access to /dev/kfd)")
    lib.hsa_shut_down()
    return _count_hip_devices(mod, "AMD GPU(s) found by HSA and HIP")


def _count_hip_devices(mod: ModuleType, found: str) -> tuple[bool, str]:
    lib, ffi = mod.lib, mod.ffi
    count = ffi.new("int *")
    err = lib.hipGetDeviceCount(count)
    if err != lib.hipSuccess:
        return False, f"hipGetDeviceCount returned {_enum_name(ffi, 'hipError_t', err)}"
    if count[0] == 0:
        return False, "hipGetDeviceCount found 0 devices"
    return True, f"{count[0]} {found}"


def _preload_cuda_driver() -> None:
    # the nvidia module leaves libcuda's symbols unresolved so it can be built
    # without a driver; they come from the driver loaded globally here
    ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)


def _probe_nvidia(mod: ModuleType) -> tuple[bool, str]:
    return _count_hip_devices(mod, "NVIDIA GPU(s) found through HIP's NVIDIA platform")


def _is_built(name: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(f"rocpy._lib_{name}") is not None


def _load(name: str, named: bool) -> tuple[Any, str]:
    """Import and probe one backend; return (module or None, reason).

    ``named``: asked for by ``ROCPY_BACKEND``, so taken once it loads even
    when the probe finds no device (the reason then says what it found).
    """
    if not _is_built(name):
        return None, f"rocpy._lib_{name} is not built"
    try:
        if name == "nvidia":
            try:
                _preload_cuda_driver()
            except OSError as exc:
                return None, f"the CUDA driver (libcuda.so.1) cannot be loaded: {exc}"
        mod = _import(name)
    except ImportError as exc:
        return None, f"rocpy._lib_{name} is not built or cannot load: {exc}"
    if name == "stub":
        # the stub's hiprtcCompileProgram runs `$ROCPY_PYTHON -m rocpy cpukern build`
        # (hip_rtc_compile.c): this interpreter, which has rocpy and its dependencies
        os.environ.setdefault("ROCPY_PYTHON", sys.executable)
        return mod, "the stub runtime (CPU simulation)"
    ok, why = (_probe_amd if name == "amd" else _probe_nvidia)(mod)
    if not ok and named:
        return mod, (f"{why}; the real runtime is loaded anyway (asked for by name), "
                     "so its calls report these statuses")
    return (mod if ok else None), why


def _check_hip_version(mod: ModuleType, info: dict[str, Any]) -> None:
    lib, ffi = mod.lib, mod.ffi
    runtime = ffi.new("int *")
    if lib.hipRuntimeGetVersion(runtime) != lib.hipSuccess:
        return
    built = lib.HIP_VERSION
    if built // 10_000_000 != runtime[0] // 10_000_000:
        warnings.warn(
            f"rocpy was built against HIP {built} but the runtime is HIP {runtime[0]}: "
            "layouts and enum values changed between major versions (for example "
            "hipMemoryType and hipPointerAttribute_t in 6.0); rebuild rocpy against "
            "the installed ROCm", RuntimeWarning, stacklevel=3)


def _select() -> Backend:
    wanted = os.environ.get("ROCPY_BACKEND", "auto").strip().lower() or "auto"
    if wanted not in BACKENDS + ("auto",):
        raise BackendUnavailableError(
            f"ROCPY_BACKEND={wanted!r} is not one of auto, {', '.join(BACKENDS)}")
    order = BACKENDS if wanted == "auto" else (wanted,)
    if not any(_is_built(name) for name in order):
        modules = ", ".join(f"rocpy._lib_{name}" for name in order)
        raise NotBuiltError(f"rocpy's extension modules are not built (no {modules} next to "
                            f"{os.path.dirname(os.path.abspath(__file__))}): {BUILD_HINT}")
    tried: dict[str, str] = {}
    for name in order:
        mod, why = _load(name, named=wanted != "auto")
        tried[name] = why
        if mod is None:
            continue
        info = _build_info(mod)
        if name == "amd":
            _check_hip_version(mod, info)
        if wanted == "auto" and name == "stub":
            others = "; ".join(f"{k}: {v}" for k, v in tried.items() if k != "stub")
            why = f"no GPU found ({others}), so the stub runtime (CPU simulation) was chosen"
        elif wanted != "auto":
            why = f"ROCPY_BACKEND={wanted}: {why}"
        return Backend(BackendInfo(name, why, tried, info), mod.ffi, mod.lib)
    why = "; ".join(f"{k}: {v}" for k, v in tried.items())
    raise BackendUnavailableError(f"ROCPY_BACKEND={wanted} cannot run here: {why}")


def current() -> Backend:
    """The backend of this process (chosen at the first call, then fixed).

    Raises `rocpy.errors.ForkError` in a process forked after the backend
    was loaded: the runtime's state does not survive a fork.
    """
    global _current, _owner_pid
    backend = _current
    if backend is None:
        with _lock:
            if _current is None:
                _current = _select()
                _owner_pid = os.getpid()
            backend = _current
    if _owner_pid != os.getpid():
        check_fork()
    return backend


def forked_from() -> int | None:
    """The pid of the parent that loaded the backend, in a forked child; else None."""
    if _current is not None and _owner_pid and _owner_pid != os.getpid():
        return _owner_pid
    return None


def check_fork() -> None:
    """Raise `rocpy.errors.ForkError` in a child forked after the backend was loaded."""
    parent = forked_from()
    if parent is not None:
        from .errors import ForkError, fork_message
        raise ForkError(fork_message(parent))
