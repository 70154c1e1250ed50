"""Converters from Python objects to the values of kernel parameters.

`converter_for` picks, once per parameter, a `struct` code and a function
turning one Python object into the value packed there.  The functions take a
fast path for the common exact types (``int``, ``float``) and otherwise:

- pointers (global buffers, images, samplers, queues ...): ``int``, None
  (NULL), any object with an integer ``.ptr`` attribute (rocpy buffers), cffi
  pointer cdata, or anything with ``__int__``/``__index__``; bools, floats
  and host arrays are refused;
- integers: Python ints (range-checked against the parameter's signedness
  when the metadata gives a type name, else against both signed and unsigned
  ranges), bools, numpy scalars of exactly the parameter's size (their bytes
  are copied), and Python floats for untyped 2/4/8-byte parameters (the
  parameter is then taken to be a half/float/double).  HIP metadata has no
  type names, so a Python int for a ``float`` parameter packs as an integer:
  pass a Python float or a numpy scalar there;
- floats: Python and numpy numbers (numpy scalars must have the parameter's
  size);
- structs and vectors by value: bytes-like objects, numpy structured scalars
  and arrays of exactly the parameter's size.

A converter raises `Reject`; the layout turns that into an exception naming
the parameter.

`inline_source` writes the same conversion as Python source for a generated
packer (`rocpy.codeobject.kernargs`): the cheap cases above (exact ``int``,
``float``, ``bytes``, numpy scalars of the exact size, ``.ptr``) are tested
inline, anything else calls the converter, so what is accepted and how it is
refused stay the converter's.
"""
from __future__ import annotations

import functools
import numbers
import operator
import struct
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from .metadata import KernelArg

Converter = Callable[[Any], Any]

_UINT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FLOAT_CODES = {2: "e", 4: "f", 8: "d"}
_FLOAT_NAMES = {"float": 4, "double": 8, "half": 2, "_Float16": 2, "__fp16": 2,
                "f16": 2, "f32": 4, "f64": 8}
_SIGNED_NAMES = {"char", "signed char", "short", "int", "long", "long long", "int8_t",
                 "int16_t", "int32_t", "int64_t", "ptrdiff_t", "intptr_t", "ssize_t",
                 "i8", "i16", "i32", "i64"}
_UNSIGNED_NAMES = {"uchar", "unsigned char", "ushort", "unsigned short", "uint", "unsigned",
                   "unsigned int", "ulong", "unsigned long", "unsigned long long", "uint8_t",
                   "uint16_t", "uint32_t", "uint64_t", "size_t", "uintptr_t", "bool", "_Bool",
                   "u8", "u16", "u32", "u64"}


class Reject(Exception):
    """A converter refused a value; ``is_type`` tells TypeError from ValueError."""

    def __init__(self, message: str, is_type: bool = True) -> None:
        super().__init__(message)
        self.is_type = is_type


def scalar_type(arg: KernelArg) -> Optional[str]:
    """``'float'``, ``'signed'``, ``'unsigned'`` or None (unknown) from the type name."""
    name = arg.type_name or arg.value_type
    if not name:
        return None
    words = [w for w in name.split() if w not in ("const", "volatile", "restrict")]
    base = " ".join(words)
    if _FLOAT_NAMES.get(base) == arg.size:
        return "float"
    if base in _SIGNED_NAMES:
        return "signed"
    if base in _UNSIGNED_NAMES:
        return "unsigned"
    return None


def _classify(arg: KernelArg) -> Tuple[str, Optional[str]]:
    """``('pointer'|'float'|'integer'|'raw', signedness)`` of one explicit parameter."""
    if arg.is_pointer and arg.size in _UINT_CODES:
        return "pointer", None
    kind = scalar_type(arg)
    if kind == "float":
        return "float", kind
    if arg.size in _UINT_CODES:
        return "integer", kind
    return "raw", None


def converter_for(arg: KernelArg) -> Tuple[str, Converter]:
    """The `struct` code and converter for one explicit parameter."""
    size = arg.size
    what, kind = _classify(arg)
    if what == "pointer":
        return _UINT_CODES[size], _pointer(size)
    if what == "float":
        return _FLOAT_CODES[size], _floating(size)
    if what == "integer":
        return _UINT_CODES[size], _integer(size, kind)
    return f"{size}s", _raw(size)


def _type_name(x: Any) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"


def _is_numpy_like(x: Any) -> bool:
    return hasattr(x, "dtype") and hasattr(x, "tobytes")


def _exact_bytes(x: Any, size: int) -> Optional[bytes]:
    """The bytes of a numpy value or bytes-like object; None if ``x`` is neither."""
    numpy_like = _is_numpy_like(x)
    if numpy_like:
        nbytes = getattr(x, "nbytes", -1)
    elif isinstance(x, (bytes, bytearray, memoryview)):
        nbytes = memoryview(x).nbytes
    else:
        return None
    if nbytes != size:
        # A numpy scalar of the wrong size is the wrong type (int64 for int32);
        # an array or bytes of the wrong size is a wrong value.
        raise Reject(f"{_type_name(x)} of {nbytes} bytes given for a {size}-byte parameter",
                     is_type=getattr(x, "shape", None) == ())
    return x.tobytes() if numpy_like else memoryview(x).tobytes()


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


def _integer(size: int, kind: Optional[str]) -> Converter:
    bits = 8 * size
    lo = 0 if kind == "unsigned" else -(1 << (bits - 1))
    hi = (1 << (bits - 1)) if kind == "signed" else (1 << bits)
    mask = (1 << bits) - 1
    what = f"{size}-byte {kind + ' ' if kind else ''}integer"

    def check(value: int) -> int:
        if lo <= value < hi:
            return value & mask
        raise Reject(f"{value} is out of range for a {what} ({lo}..{hi - 1})", is_type=False)

    exact_types = set()  # numpy integer scalar types of this size, seen before
    float_bits = _float_bits(size) if size in _FLOAT_CODES else None

    def convert(x: Any) -> int:
        if type(x) is int:
            return check(x)
        if type(x) in exact_types:
            return int(x) & mask
        if isinstance(x, bool):
            return int(x)
        data = _exact_bytes(x, size)
        if data is not None:
            if getattr(x, "shape", None) == () and x.dtype.kind in "iu":
                exact_types.add(type(x))
            return int.from_bytes(data, "little")
        if isinstance(x, numbers.Integral):
            return check(operator.index(x))
        if isinstance(x, numbers.Real) and kind is None and float_bits is not None:
            return float_bits(x)
        if size == 8 and kind is None and (hasattr(x, "ptr") or
                                           type(x).__module__ == "_cffi_backend"):
            return _address(x, size)
        raise Reject(f"expected an integer for a {what}, got {_type_name(x)}")
    return convert


def _float_bits(size: int) -> Callable[[Any], int]:
    """A real number's bits as a ``size``-byte float (untyped parameters given a float)."""
    pack = struct.Struct("<" + _FLOAT_CODES[size]).pack

    def bits(x: Any) -> int:
        try:
            return int.from_bytes(pack(float(x)), "little")
        except OverflowError:
            raise Reject(f"{x!r} does not fit a {size}-byte float", is_type=False) from None
    return bits


def _floating(size: int) -> Converter:
    code = "<" + _FLOAT_CODES[size]

    def convert(x: Any) -> float:
        if type(x) is float:
            return x
        if isinstance(x, bool):
            raise Reject(f"expected a number for a {size}-byte float, got bool")
        data = _exact_bytes(x, size)
        if data is not None:
            return struct.unpack(code, data)[0]
        if isinstance(x, numbers.Real):
            try:
                return float(x)
            except OverflowError:
                raise Reject(f"{x!r} does not fit a {size}-byte float", is_type=False) from None
        raise Reject(f"expected a number for a {size}-byte float, got {_type_name(x)}")
    return convert


def _raw(size: int) -> Converter:
    def convert(x: Any) -> bytes:
        data = _exact_bytes(x, size)
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
    size, (what, kind) = arg.size, _classify(arg)
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
    bits = 8 * size
    lo = 0 if kind == "unsigned" else -(1 << (bits - 1))
    hi = (1 << (bits - 1)) if kind == "signed" else (1 << bits)
    mask = int_literal((1 << bits) - 1)
    lines += [f"if t is int and {int_literal(lo)} <= {a} < {int_literal(hi)}:",
              f"    {v} = {a} & {mask}" if lo < 0 else f"    {v} = {a}"]
    ints = _numpy_types("iu", size)
    if ints:  # operator.index: the int() the converter takes, at half the cost
        names.update({f"I{i}": ints, "index": operator.index})
        lines += [f"elif t in I{i}:", f"    {v} = index({a}) & {mask}"]
    lines += ["elif t is bool:", f"    {v} = int({a})"]
    if kind is None and size in _FLOAT_CODES:
        names[f"B{i}"] = _float_bits(size)
        lines += ["elif t is float:", f"    {v} = B{i}({a})"]
        floats = _numpy_types("f", size)
        if floats:
            lines += [f"elif {exact(floats, 'F')}:",
                      f"    {v} = int.from_bytes({a}.tobytes(), 'little')"]
    if kind is None and size == 8:
        names["POINTER_TYPES"] = _POINTER_TYPES
        limit = int_literal(1 << 64)
        lines += ["elif t in POINTER_TYPES:",
                  f"    p = getattr({a}, 'ptr', None)",
                  f"    {v} = p if type(p) is int and 0 <= p < {limit} else {c}({a})"]
    return lines + ["else:", f"    {v} = {c}({a})"], names
