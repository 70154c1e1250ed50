"""Converters from Python objects to the values of kernel parameters: the one
place kernel arguments are converted (HIP ``Kernel.launch``, its compiled path
through the plan `slot` gives, and HSA dispatch all pack through
`rocpy.codeobject.kernargs.KernargLayout`, built from here).

`slot` classifies a parameter once, from its metadata and its type
(`rocpy.codeobject.paramtypes` fills ``KernelArg.type_name`` from the
demangled kernel name, hipRTC source or OpenCL metadata); `converter_for`
gives the `struct` code and the function turning one Python object into the
value packed there.  Values convert **by value**, never by reinterpreting
bits:

- pointers (global buffers, references, images, queues ...): ``int``, None
  (NULL), any object with an integer ``.ptr`` attribute (rocpy buffers), cffi
  pointer cdata, or anything with ``__int__``/``__index__``; bools, floats
  and host arrays are refused;
- integers of a known type (``int``, ``unsigned int``, ``char``, ``bool``
  ...): Python ints and bools, range-checked (`ArgumentRangeError`, an
  ``OverflowError``); numpy integer scalars of exactly the parameter's width,
  by value and range-checked (``np.uint32(7)`` for an ``int``; ``np.int64``
  for an ``int`` is a ``TypeError``: numpy scalars state a width, so a
  different one is refused, never narrowed); ctypes integers alike; bytes of
  exactly the size as the raw bits.  Floats are refused;
- floats of a known type (``float``, ``double``, ``half``/``_Float16``):
  Python floats and ints (by value; too large is a range error), numpy
  floating scalars (and ctypes floats) of exactly the width; numpy integers
  are refused;
- structs, unions, enums and vectors by value: bytes-like objects, numpy
  (structured) values and arrays of exactly the parameter's size;
- parameters of **unknown type** (``extern "C"`` kernels loaded from a code
  object: HIP metadata gives sizes only) of 2, 4 or 8 bytes: only values that
  state their type (numpy scalars or arrays of the size, ctypes scalars,
  bytes; for 8 bytes also None, rocpy buffers and cffi pointers).  A bare
  Python int or float is a ``TypeError`` saying to pass ``np.int32(...)`` /
  ``np.float32(...)``: whether 3 is an ``int`` or a ``float`` is not known,
  and rocpy never guesses.  1-byte parameters of unknown type take integers
  (no 1-byte float exists in HIP).

A converter raises `Reject`; the layout turns that into an exception naming
the parameter and its type.

`inline_source` writes the same conversion as Python source for a generated
packer (`rocpy.codeobject.kernargs`): the cheap cases above (exact ``int``,
``float``, ``bytes``, numpy scalars of the exact type, ``.ptr``) are tested
inline, anything else calls the converter, so what is accepted and how it is
refused stay the converter's.
"""
from __future__ import annotations

import ctypes
import functools
import numbers
import operator
import struct
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from .metadata import KernelArg

Converter = Callable[[Any], Any]

_UINT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}
_FLOAT_NAMES = {"float": 4, "double": 8, "half": 2, "_Float16": 2, "__fp16": 2,
                "f16": 2, "f32": 4, "f64": 8}
_SIGNED_NAMES = {"char", "signed char", "short", "int", "long", "long long", "int8_t",
                 "int16_t", "int32_t", "int64_t", "ptrdiff_t", "intptr_t", "ssize_t",
                 "i8", "i16", "i32", "i64", "short int", "long int", "long long int",
                 "signed", "signed int", "signed short", "signed long", "signed long long"}
_UNSIGNED_NAMES = {"uchar", "unsigned char", "ushort", "unsigned short", "uint", "unsigned",
                   "unsigned int", "ulong", "unsigned long", "unsigned long long", "uint8_t",
                   "uint16_t", "uint32_t", "uint64_t", "size_t", "uintptr_t",
                   "u8", "u16", "u32", "u64", "unsigned short int", "unsigned long int",
                   "unsigned long long int"}
_BOOL_NAMES = {"bool", "_Bool"}
_HINTS = {2: ("np.int16(...)", "np.float16(...)", "ctypes.c_int16(...)"),
          4: ("np.int32(...)", "np.float32(...)", "ctypes.c_int32(...)/ctypes.c_float(...)"),
          8: ("np.int64(...)", "np.float64(...)", "ctypes.c_int64(...)/ctypes.c_double(...)")}


class Reject(Exception):
    """A converter refused a value; ``is_type`` tells TypeError from ValueError,
    ``overflow`` marks a value out of the parameter type's range."""

    def __init__(self, message: str, is_type: bool = True, overflow: bool = False) -> None:
        super().__init__(message)
        self.is_type: bool = is_type and not overflow
        self.overflow = overflow


@dataclass(frozen=True)
class Slot:
    """How one explicit parameter converts, decided once per kernel.

    ``what``: ``"pointer"``, ``"integer"``, ``"float"``, ``"raw"`` (bytes of
    the size) or ``"untyped"`` (type unknown, 2/4/8 bytes: values must state
    their type).  ``kind``: ``"signed"``, ``"unsigned"``, ``"bool"`` or None
    (integers of unknown signedness: 1-byte parameters of unknown type).
    ``lo``/``hi``: an integer's bounds (``hi`` exclusive); ``numpy_kinds``: the
    dtype kinds of the numpy scalars taken inline without a range check.
    """

    what: str
    kind: Optional[str]
    size: int
    lo: int = 0
    hi: int = 0
    numpy_kinds: str = ""


def _base_name(name: str) -> str:
    words = [w for w in name.replace("*", " * ").split()
             if w not in ("const", "volatile", "restrict", "__restrict__", "struct", "union",
                          "enum")]
    return " ".join(words).replace(" *", "*")


def scalar_type(arg: KernelArg) -> Optional[str]:
    """``'float'``, ``'signed'``, ``'unsigned'``, ``'bool'``, ``'pointer'``,
    ``'other'`` (a known non-scalar type: struct, enum, vector) or None (no type)."""
    name = arg.type_name or arg.value_type
    if not name:
        return None
    base = _base_name(name)
    if base.endswith("*") or base.endswith("&") or base == "std::nullptr_t":
        return "pointer"
    if _FLOAT_NAMES.get(base) == arg.size:
        return "float"
    if base in _BOOL_NAMES and arg.size == 1:
        return "bool"
    if base in _SIGNED_NAMES:
        return "signed"
    if base in _UNSIGNED_NAMES:
        return "unsigned"
    return "other"


@functools.lru_cache(maxsize=None)
def _bounds(size: int, kind: Optional[str]) -> Tuple[int, int]:
    bits = 8 * size
    if kind == "bool":
        return 0, 2
    lo = 0 if kind == "unsigned" else -(1 << (bits - 1))
    hi = (1 << (bits - 1)) if kind == "signed" else (1 << bits)
    return lo, hi


def slot(arg: KernelArg) -> Slot:
    """The `Slot` (conversion plan) of one explicit parameter."""
    size = arg.size
    kind = scalar_type(arg)
    if (arg.is_pointer or kind == "pointer") and size in _UINT_CODES:
        return Slot("pointer", None, size)
    if kind == "float" and size in _FLOAT_CODES:
        return Slot("float", None, size, numpy_kinds="f")
    if kind in ("signed", "unsigned", "bool") and size in _UINT_CODES:
        lo, hi = _bounds(size, kind)
        numpy_kinds = {"signed": "i", "unsigned": "u", "bool": ""}[kind]
        return Slot("integer", kind, size, lo, hi, numpy_kinds)
    if kind is None and size == 1:
        lo, hi = _bounds(1, None)
        return Slot("integer", None, 1, lo, hi, "iu")
    if kind is None and size in _FLOAT_CODES:
        return Slot("untyped", None, size)
    return Slot("raw", None, size)


def _classify(arg: KernelArg) -> Tuple[str, Optional[str]]:
    """``(what, kind)`` of `slot` (kept for callers that want the pair)."""
    s = slot(arg)
    return s.what, s.kind


def converter_for(arg: KernelArg) -> Tuple[str, Converter]:
    """The `struct` code and converter for one explicit parameter."""
    s = slot(arg)
    size, type_name = s.size, _named(arg)
    if s.what == "pointer":
        return _UINT_CODES[size], _pointer(size)
    if s.what == "float":
        return _FLOAT_CODES[size], _floating(size, type_name)
    if s.what == "integer":
        return _UINT_CODES[size], _integer(size, s.kind, type_name)
    if s.what == "untyped":
        return f"{size}s", _untyped(size)
    return f"{size}s", _raw(size)


def _named(arg: KernelArg) -> str:
    name = arg.type_name or arg.value_type
    return f"{_base_name(name)} ({arg.size} bytes)" if name else f"{arg.size}-byte value"


def _type_name(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _is_numpy_like(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "tobytes")


def _ctypes_scalar(x: Any) -> Optional[Tuple[str, int]]:
    """``(numpy-style kind, size)`` of a ctypes number, or None."""
    if not isinstance(x, ctypes._SimpleCData):
        return None
    code = getattr(type(x), "_type_", "")
    if not isinstance(code, str):
        return None
    kind = ("i" if code in "bhilq" else "u" if code in "BHILQ" else "f" if code in "fd"
            else "b" if code == "?" else None)
    return (kind, ctypes.sizeof(x)) if kind else None


def _exact_bytes(x: Any, size: int, kinds: str = "") -> Optional[bytes]:
    """The bytes of a numpy value, ctypes number or bytes-like object of ``size`` bytes;
    None if ``x`` is none of them.  ``kinds``: numpy dtype kinds whose values must be
    converted by value instead (the caller's job: they raise here if of another width);
    numeric values of other kinds are refused (no reinterpretation of an int's bits as
    a float's)."""
    numpy_like = _is_numpy_like(x)
    if numpy_like:
        nbytes = getattr(x, "nbytes", -1)
        dkind = getattr(getattr(x, "dtype", None), "kind", "V")
        to_bytes: Callable[[], bytes] = x.tobytes
    elif isinstance(x, (bytes, bytearray, memoryview)):
        view = memoryview(x)
        nbytes, dkind, to_bytes = view.nbytes, "V", view.tobytes
    else:
        return None
    if nbytes != size:
        # A numpy scalar of the wrong size is the wrong type (int64 for int32);
        # an array or bytes of the wrong size is a wrong value.
        raise Reject(f"{_type_name(x)} of {nbytes} bytes given for a {size}-byte parameter",
                     is_type=getattr(x, "shape", None) == ())
    if kinds is not None and kinds and dkind in "biufc" and dkind not in kinds:
        raise Reject(f"{_type_name(x)} ({_kind_word(dkind)}) given for a parameter of "
                     f"{_kind_word(kinds[0])} type")
    return to_bytes()


def _kind_word(kind: str) -> str:
    return {"b": "boolean", "i": "integer", "u": "integer", "f": "floating",
            "c": "complex"}.get(kind, "other")


def _is_host_memory(x: Any) -> bool:
    """True for numpy values and other objects exporting the buffer protocol."""
    if _is_numpy_like(x):
        return True
    try:
        memoryview(x)
    except TypeError:
        return False
    return True


def _address(x: Any, size: int) -> int:
    """A pointer value from anything pointer-like; Reject otherwise."""
    if x is None:
        return 0
    if isinstance(x, bool) or type(x).__name__ == "bool_":
        raise Reject(f"expected a pointer, got {_type_name(x)}")
    ptr = getattr(x, "ptr", None)
    if ptr is not None:
        if not isinstance(ptr, numbers.Integral):
            raise Reject(f"{_type_name(x)}.ptr is {_type_name(ptr)}, not an integer")
        value = int(ptr)
    elif type(x).__module__ == "_cffi_backend":
        value = _cdata_address(x)
    elif (cai := _cai_address(x)) is not None:
        value = cai
    elif isinstance(x, numbers.Integral):
        value = operator.index(x)
    elif hasattr(x, "__int__") and not isinstance(x, numbers.Real) and not _is_host_memory(x):
        value = int(x)
    else:
        raise Reject(f"expected a device pointer (an int, None, an object with an integer "
                     f".ptr, or a cffi pointer), got {_type_name(x)}")
    if not 0 <= value < 1 << (8 * size):
        raise Reject(f"pointer value {value:#x} does not fit in {size} bytes", is_type=False)
    return value


def _cai_address(x: Any) -> Optional[int]:
    """The data pointer of an object with ``__cuda_array_interface__`` (CuPy, Numba,
    AMD's bindings), or None.  Ordering after its producer's stream is the
    launcher's (`rocpy.hip.module`), which knows the stream."""
    if not hasattr(type(x), "__cuda_array_interface__"):
        return None
    try:
        data = x.__cuda_array_interface__["data"][0]
    except (AttributeError, KeyError, TypeError, IndexError):
        raise Reject(f"{_type_name(x)}.__cuda_array_interface__ has no data pointer") from None
    if not isinstance(data, int) or isinstance(data, bool):
        raise Reject(f"{_type_name(x)}.__cuda_array_interface__ data pointer is "
                     f"{_type_name(data)}, not an int")
    return data


def _cdata_address(x: Any) -> int:
    try:
        return int(_ffi().cast("uintptr_t", x))
    except TypeError:
        raise Reject(f"cffi object {x!r} is not a pointer") from None


@functools.lru_cache(maxsize=1)
def _ffi() -> Any:
    """A private FFI instance: casting works on cdata of any FFI."""
    import cffi
    return cffi.FFI()


def _pointer(size: int) -> Converter:
    limit = 1 << (8 * size)

    def convert(x: Any) -> int:
        if type(x) is int and 0 <= x < limit:
            return x
        ptr = getattr(x, "ptr", None)  # rocpy buffers: skip the general checks
        if type(ptr) is int and 0 <= ptr < limit:
            return ptr
        return _address(x, size)
    return convert


def _integer(size: int, kind: Optional[str], type_name: str = "") -> Converter:
    lo, hi = _bounds(size, kind)
    mask = (1 << (8 * size)) - 1
    what = type_name or f"{size}-byte integer"
    kinds = "b" if kind == "bool" else "iub" if size == 1 else "iu"

    def check(value: int) -> int:
        if lo <= value < hi:
            return value & mask
        raise Reject(f"{value} is out of range for {what} ({lo}..{hi - 1})", overflow=True)

    def convert(x: Any) -> int:
        if type(x) is int:
            return check(x)
        if isinstance(x, bool):
            return int(x)
        c = _ctypes_scalar(x)
        if c is not None:
            if c[1] != size or c[0] not in kinds:
                raise Reject(f"{_type_name(x)} given for {what}")
            return check(int(x.value))
        if _is_numpy_like(x) and getattr(x, "shape", None) == () and x.dtype.kind in "iub":
            if x.dtype.itemsize != size:
                raise Reject(f"{_type_name(x)} ({x.dtype.itemsize} bytes) given for {what}: "
                             f"pass a numpy integer of {size} bytes or a Python int")
            return check(int(x))
        data = _exact_bytes(x, size, kinds)
        if data is not None:
            return int.from_bytes(data, "little")
        if isinstance(x, numbers.Integral):
            return check(operator.index(x))
        raise Reject(f"expected an integer for {what}, got {_type_name(x)}")
    return convert


def _floating(size: int, type_name: str = "") -> Converter:
    code = "<" + _FLOAT_CODES[size]
    what = type_name or f"{size}-byte float"

    def by_value(x: Any) -> float:
        try:
            value = float(x)
            struct.pack(code, value)
        except (OverflowError, struct.error):
            raise Reject(f"{x!r} is out of range for {what}", overflow=True) from None
        return value

    def convert(x: Any) -> float:
        if type(x) is float:
            return x
        if isinstance(x, bool):
            raise Reject(f"expected a number for {what}, got bool")
        c = _ctypes_scalar(x)
        if c is not None:
            if c != ("f", size):
                raise Reject(f"{_type_name(x)} given for {what}")
            return float(x.value)
        data = _exact_bytes(x, size, "f")
        if data is not None:
            result: float = struct.unpack(code, data)[0]
            return result
        if isinstance(x, numbers.Real):
            return by_value(x)
        raise Reject(f"expected a number for {what}, got {_type_name(x)}")
    return convert


def _untyped(size: int) -> Converter:
    """Type unknown: only values stating their type (their bytes are packed)."""
    as_int, as_float, as_ctypes = _HINTS[size]
    pointer = " or a buffer/None for a pointer" if size == 8 else ""

    def convert(x: Any) -> bytes:
        c = _ctypes_scalar(x)
        if c is not None:
            if c[1] != size:
                raise Reject(f"{_type_name(x)} of {c[1]} bytes given for a {size}-byte "
                             "parameter")
            return bytes(x)
        if size == 8 and type(x).__module__ == "_cffi_backend":
            return _cdata_address(x).to_bytes(8, "little")
        data = _exact_bytes(x, size, "")
        if data is not None:
            return data
        if size == 8 and (x is None or hasattr(x, "ptr") or _cai_address(x) is not None):
            return _address(x, 8).to_bytes(8, "little")
        if isinstance(x, (numbers.Number, bool)):
            raise Reject(f"the type of this {size}-byte parameter is unknown (an extern \"C\" "
                         f"kernel: the code object gives sizes only), so a Python "
                         f"{_type_name(x)} could be an integer or a float: pass {as_int} or "
                         f"{as_float} (or {as_ctypes}){pointer}")
        raise Reject(f"expected a numpy scalar, ctypes value or {size} bytes for a "
                     f"{size}-byte parameter of unknown type{pointer}, got {_type_name(x)}")
    return convert


def _raw(size: int) -> Converter:
    def convert(x: Any) -> bytes:
        data = _exact_bytes(x, size, "")
        if data is not None:
            return data
        try:
            view = memoryview(x)
        except TypeError:
            raise Reject(f"expected {size} bytes for a by-value struct (bytes, a numpy "
                         f"structured scalar or array), got {_type_name(x)}") from None
        if view.nbytes != size:
            raise Reject(f"{_type_name(x)} of {view.nbytes} bytes given for a {size}-byte "
                         "parameter", is_type=False)
        return view.tobytes()
    return convert


# ---- inline conversion source for generated packers ------------------------------

#: Classes registered with `register_pointer_type`: untyped 8-byte parameters
#: take their ``.ptr`` inline, as the converter does after its other checks.
_POINTER_TYPES: Set[type] = set()


def register_pointer_type(cls: type) -> None:
    """Let untyped 8-byte parameters (cubins' sizes-only layouts) take ``.ptr`` of
    ``cls`` instances inline.

    For classes that are only device pointers with an integer ``.ptr`` (rocpy
    buffers): not numbers, bytes or numpy-like objects, for which the converter
    would take another route before looking at ``.ptr``.  Pointer parameters
    need no registration.
    """
    plain = (isinstance(cls, type) and hasattr(cls, "ptr") and cls.__name__ != "bool_"
             and cls.__module__ != "_cffi_backend"
             and not issubclass(cls, (numbers.Number, bytes, bytearray, memoryview))
             and not (hasattr(cls, "dtype") and hasattr(cls, "tobytes")))
    if not plain:
        raise TypeError(f"{cls!r} is not a plain pointer class with a .ptr")
    _POINTER_TYPES.add(cls)


@functools.lru_cache(maxsize=None)
def _numpy_types(kinds: str, size: int) -> FrozenSet[type]:
    """numpy scalar types of dtype kind in ``kinds`` and ``size`` bytes (none without numpy)."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        return frozenset()
    found = {t for t in np.sctypeDict.values() if isinstance(t, type) and issubclass(t, np.generic)}
    return frozenset(t for t in found
                     if np.dtype(t).kind in kinds and np.dtype(t).itemsize == size)


def int_literal(n: int) -> str:
    """An int as source text (only ints computed here reach generated code)."""
    if type(n) is not int:
        raise TypeError(f"not an int: {n!r}")
    return repr(n)


def inline_source(arg: KernelArg, i: int) -> Tuple[List[str], Dict[str, Any]]:
    """Source lines setting ``v{i}`` from ``a{i}`` as ``c{i}`` (the converter) would.

    The lines test exact types for which the result is known without the
    converter and call ``c{i}(a{i})`` for anything else; they use the locals
    ``t`` and ``p``, and the returned names (numpy types, helpers), which the
    caller puts in the generated function's namespace.  Every name is made
    from ``i``; every constant is an int literal.
    """
    plan = slot(arg)
    size, what = plan.size, plan.what
    a, v, c = f"a{i}", f"v{i}", f"c{i}"
    names: Dict[str, Any] = {}

    def exact(types: FrozenSet[type], prefix: str) -> str:
        """``t is X0 or t is X1 ...`` over ``types``, the names kept in ``names``."""
        tests = []
        for j, t in enumerate(sorted(types, key=lambda t: t.__name__)):
            names[f"{prefix}{i}_{j}"] = t
            tests.append(f"t is {prefix}{i}_{j}")
        return " or ".join(tests)

    if what == "raw":
        return [f"if type({a}) is bytes and len({a}) == {int_literal(size)}:",
                f"    {v} = {a}",
                "else:",
                f"    {v} = {c}({a})"], names
    lines = [f"t = type({a})"]
    if what == "untyped":
        lines += [f"if t is bytes and len({a}) == {int_literal(size)}:", f"    {v} = {a}"]
        numpies = _numpy_types("iuf", size)
        if numpies:
            lines += [f"elif {exact(numpies, 'N')}:", f"    {v} = {a}.tobytes()"]
        if size == 8:
            names["POINTER_TYPES"] = _POINTER_TYPES
            limit = int_literal(1 << 64)
            lines += ["elif t in POINTER_TYPES:",
                      f"    p = getattr({a}, 'ptr', None)",
                      f"    {v} = p.to_bytes(8, 'little') if type(p) is int and 0 <= p < {limit} "
                      f"else {c}({a})"]
        return lines + ["else:", f"    {v} = {c}({a})"], names
    if what == "pointer":
        limit = int_literal(1 << (8 * size))
        lines += [f"if t is int and 0 <= {a} < {limit}:",
                  f"    {v} = {a}",
                  f"elif {a} is None:",
                  f"    {v} = 0",
                  "else:",
                  f"    p = getattr({a}, 'ptr', None)",
                  f"    {v} = p if type(p) is int and 0 <= p < {limit} else {c}({a})"]
        return lines, names
    if what == "float":
        lines += ["if t is float:", f"    {v} = {a}"]
        floats = _numpy_types("f", size)
        if floats:
            lines += [f"elif {exact(floats, 'F')}:", f"    {v} = float({a})"]
        return lines + ["else:", f"    {v} = {c}({a})"], names
    mask = int_literal((1 << (8 * size)) - 1)
    lines += [f"if t is int and {int_literal(plan.lo)} <= {a} < {int_literal(plan.hi)}:",
              f"    {v} = {a} & {mask}" if plan.lo < 0 else f"    {v} = {a}"]
    ints = _numpy_types(plan.numpy_kinds, size) if plan.numpy_kinds else frozenset()
    if ints:  # operator.index: the int() the converter takes, at half the cost
        names.update({f"I{i}": ints, "index": operator.index})
        lines += [f"elif t in I{i}:", f"    {v} = index({a}) & {mask}"]
    lines += ["elif t is bool:", f"    {v} = int({a})"]
    return lines + ["else:", f"    {v} = {c}({a})"], names
