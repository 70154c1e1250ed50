"""What the rocpy.hsa modules share: the backend's ffi/lib, info queries, names.

Nothing here is public.  `api()` loads the backend on first use (never at
import), and refuses on a backend without HSA.  Info queries read one
attribute into a buffer of the attribute's C type and raise the matching
`HsaError` on failure.
"""
from __future__ import annotations

import math
import os
import threading
from dataclasses import dataclass
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from .. import _args, _backend
from ..errors import NotSupportedError, hsa_error

if TYPE_CHECKING:
    from .._lib_stub import _Lib as Lib

_api: tuple[Any, Lib] | None = None
_lock = threading.Lock()

UINT64_MAX = (1 << 64) - 1
UINT32_MAX = (1 << 32) - 1


def _forget_after_fork() -> None:
    # the next api() goes through _backend.current(), which refuses in a forked child
    global _api
    _api = None


os.register_at_fork(after_in_child=_forget_after_fork)


def api() -> tuple[Any, Lib]:
    """``(ffi, lib)`` of the loaded backend; raises `NotSupportedError` without HSA."""
    global _api
    a = _api
    if a is None:
        backend = _backend.current()
        if not backend.has_hsa:
            raise NotSupportedError(f"the HSA runtime does not exist on the {backend.name!r} "
                                    "backend (HSA is AMD-only; use rocpy.hip)")
        a = _api = (backend.ffi, backend.lib)
    return a


def const(name: str, default: int | None = None) -> int | None:
    """A constant of the headers by name, or `default` where these headers lack it.

    Attributes added after ROCm 5.2 are looked up by name so that one rocpy
    runs against every header version; the callers pass ROCr's value as the
    default where it is stable.
    """
    _, lib = api()
    return getattr(lib, name, default)


# C types of info attributes, and how a value comes back to Python.
_SCALARS = {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
            "i32": "int32_t", "size": "size_t", "bool": "bool", "ptr": "void *",
            "enum": "int", "cstr": "const char *"}


def read_info(fn: Callable[..., int], args: tuple[Any, ...], attribute: int | str, kind: str,
              call: str) -> Any:
    """Call ``fn(*args, attribute, buffer)`` and decode the buffer by `kind`.

    `attribute` is the enumerator's value or its name (`ValueError` where
    these headers lack it, or the value does not fit the C enum).

    Kinds: ``u8``/``u16``/``u32``/``u64``/``i32``/``size``/``bool``/``enum``
    (ints and bools), ``ptr`` (an int address), ``cstr`` (a ``const char *``
    the runtime keeps), ``str64`` (a NUL-terminated ``char[64]``), ``bytesN``
    (N raw bytes), ``u16x3``/``u32x3`` (three values), or a C type name ending
    in ``_t`` for a struct (returned as the cdata).
    """
    ffi, _ = api()
    if kind in _SCALARS:
        buf = ffi.new(_SCALARS[kind] + " *")
        decode = _decode_scalar(ffi, kind)
    elif kind == "str64":
        buf = ffi.new("char[64]")
        decode = _decode_str
    elif kind.startswith("bytes"):
        buf = ffi.new("uint8_t[]", int(kind[5:]))
        decode = lambda ffi, b: bytes(ffi.buffer(b))
    elif kind in ("u16x3", "u32x3"):
        buf = ffi.new("uint16_t[3]" if kind == "u16x3" else "uint32_t[3]")
        decode = lambda ffi, b: tuple(b)
    else:
        buf = ffi.new(kind + " *")
        decode = lambda ffi, b: b[0]
    if isinstance(attribute, str):
        value = const(attribute)
        if value is None:
            raise ValueError(f"these HSA headers have no {attribute}")
        attribute = value
    elif isinstance(attribute, bool) or not isinstance(attribute, int):
        raise TypeError(f"attribute must be an int or a constant's name, not {type(attribute).__name__}")
    try:
        st = fn(*args, attribute, buf)
    except OverflowError:
        raise ValueError(f"{call}: attribute {attribute} is outside the C enum's range") from None
    if st:
        raise hsa_error(st, call)
    return decode(ffi, buf)


def _decode_scalar(ffi: Any, kind: str) -> Callable[[Any, Any], Any]:
    if kind == "bool":
        return lambda ffi, b: bool(b[0])
    if kind == "ptr":
        return lambda ffi, b: int(ffi.cast("uintptr_t", b[0]))
    if kind == "cstr":
        return lambda ffi, b: None if b[0] == ffi.NULL else ffi.string(b[0]).decode(
            "utf-8", "replace")
    return lambda ffi, b: int(b[0])


def _decode_str(ffi: Any, buf: Any) -> str:
    result: str = ffi.string(buf, 64).decode("utf-8", "replace")
    return result


def enum_name(ctype: str, value: int, prefix: str) -> str:
    """``HSA_DEVICE_TYPE_GPU`` -> ``'gpu'``: the enumerator's name without `prefix`, lower case."""
    ffi, _ = api()
    name = ffi.string(ffi.cast(ctype, value))
    if isinstance(name, str) and name.startswith(prefix):
        return name[len(prefix):].lower()
    return str(value)


def flag_names(mask: int, table: Iterable[tuple[str, str]]) -> frozenset[str]:
    """The names of the bits set in `mask`, from ``(python name, constant name)`` pairs."""
    names = set()
    for pyname, cname in table:
        bit = const(cname)
        if bit and mask & bit:
            names.add(pyname)
    return frozenset(names)


def list_handles(fn: Callable[..., int], args: tuple[Any, ...], ctype: str, call: str,
                 guess: int = 16) -> list[Any]:
    """Handles from one of the C list helpers (``rocpy_hsa_list_*``), as cdata structs."""
    ffi, _ = api()
    count = ffi.new("uint32_t *")
    size = guess
    while True:
        out = ffi.new(f"{ctype}[]", size)
        st = fn(*args, out, size, count)
        if st:
            raise hsa_error(st, call)
        if count[0] <= size:
            return [ffi.new(f"{ctype} *", {"handle": out[i].handle})[0] for i in range(count[0])]
        size = count[0]


# ---- time -------------------------------------------------------------------------

_frequency: int | None = None


def timestamp_frequency() -> int:
    """HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY in Hz (the unit of every timeout hint)."""
    global _frequency
    if _frequency is None:
        _, lib = api()
        _frequency = int(read_info(lib.hsa_system_get_info, (), lib.HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY,
                                   "u64", "hsa_system_get_info") or 1_000_000_000)
    return _frequency


def ticks(seconds: float) -> int:
    """A timeout in seconds as timestamp ticks (at least 1, at most UINT64_MAX - 1)."""
    if seconds <= 0:
        return 0
    t = math.ceil(seconds * timestamp_frequency())
    return max(1, min(t, UINT64_MAX - 1))


def check_timeout(timeout: float | None) -> float | None:
    """`timeout` as a float number of seconds (None: forever): `rocpy._args.seconds`
    (TypeError for a non-number, ValueError for negative or NaN)."""
    return _args.seconds(timeout, "timeout")


# ---- signals by handle ----------------------------------------------------------------

def signal_struct(value: int) -> Any:
    """An ``hsa_signal_t`` cdata for a raw handle value."""
    ffi, _ = api()
    return ffi.new("hsa_signal_t *", {"handle": value})[0]


# ---- constant attributes ---------------------------------------------------------------

_T = TypeVar("_T")


class Fixed(Generic[_T]):
    """A constant info attribute as a read-only property, read once per object.

    ``wavefront_size = Fixed("HSA_AGENT_INFO_WAVEFRONT_SIZE", "u32")`` on a
    class whose ``_fixed(name, attribute, kind)`` reads and caches it.
    """

    attribute: str
    kind: str
    name: str

    def __init__(self, attribute: str, kind: str, doc: str | None = None) -> None:
        self.attribute, self.kind = attribute, kind
        self.__doc__ = doc or f"``{attribute}`` ({kind})."
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Fixed[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> _T: ...

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj._fixed(self.name, self.attribute, self.kind)


# ---- argument checks ----------------------------------------------------------------

def unsigned(value: Any, bits: int, what: str) -> int:
    """`rocpy._args.unsigned`: TypeError for a non-integer (bools included),
    ValueError outside the C type's range (never cffi's OverflowError)."""
    return _args.unsigned(value, bits, what)


def agent_handle(agent: Any, what: str = "agent") -> Any:
    """The open native handle of an `rocpy.hsa.Agent`; TypeError for anything else."""
    from .agent import Agent
    if not isinstance(agent, Agent):
        raise TypeError(f"{what} must be an hsa.Agent, not {type(agent).__name__}")
    return agent._require_open()


def signal_handle(signal: Any, what: str = "signal") -> Any:
    """The usable native handle of an `rocpy.hsa.Signal`; TypeError for anything else."""
    from .signal import Signal
    if not isinstance(signal, Signal):
        raise TypeError(f"{what} must be an hsa.Signal, not {type(signal).__name__}")
    if signal._h is None:
        exc = signal._closed_error()
        raise type(exc)(f"the {what.replace('_', ' ')} is closed ({exc})")
    return signal._use()


@dataclass(frozen=True)
class TickSpan:
    """A ``start`` and ``end`` in system timestamp ticks and their ``frequency`` (ticks
    per second): the base of `DispatchTime` and `CopyTime`."""

    start: int
    end: int
    frequency: int

    @property
    def seconds(self) -> float:
        """``end - start`` in seconds."""
        return (self.end - self.start) / self.frequency
