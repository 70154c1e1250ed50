"""C structs read from the runtime as frozen dataclasses (`Device.properties`):
strings as `str`, byte arrays as `bytes`, other arrays as tuples, nested structs as
dataclasses of their own, pointers as ints; one class per C struct, made once."""
from __future__ import annotations

import dataclasses
from typing import Any

_classes: dict[str, type] = {}


def frozen_value(ffi: Any, ctype: Any, value: Any) -> Any:
    """A cffi value of C type ``ctype`` as plain, immutable Python data."""
    kind = ctype.kind
    if kind == "array":
        item = ctype.item
        if item.cname == "char":
            return ffi.string(value).decode("utf-8", "replace")
        if item.cname in ("signed char", "unsigned char", "uint8_t", "int8_t"):
            return bytes(ffi.buffer(value))
        return tuple(frozen_value(ffi, item, v) for v in value)
    if kind == "struct":
        cls = _struct_class(ffi, ctype)
        return cls(**{name: frozen_value(ffi, f.type, getattr(value, name))
                      for name, f in ctype.fields if name})
    if kind == "pointer":
        return int(ffi.cast("uintptr_t", value))
    if kind == "primitive" and ctype.cname == "char":
        return value.decode("latin-1")
    return value


def _py_type(ctype: Any) -> Any:
    kind = ctype.kind
    if kind == "array":
        if ctype.item.cname == "char":
            return str
        if ctype.item.cname in ("signed char", "unsigned char", "uint8_t", "int8_t"):
            return bytes
        return tuple
    if kind == "struct":
        return Any
    if kind == "primitive" and ctype.cname in ("float", "double"):
        return float
    return int


def _struct_class(ffi: Any, ctype: Any) -> type:
    """A frozen dataclass with the fields of a C struct (made once per struct)."""
    name = ctype.cname
    cls = _classes.get(name)
    if cls is None:
        fields = [(n, _py_type(f.type)) for n, f in ctype.fields if n]
        bare = name.replace("struct ", "")
        title = "DeviceProperties" if bare.startswith("hipDeviceProp") else \
            "".join(p[:1].upper() + p[1:] for p in bare.split("_") if p)
        cls = dataclasses.make_dataclass(title, fields, frozen=True)
        cls.__doc__ = f"The fields of HIP's ``{name}``, read once (names as in the header)."
        cls.__module__ = "rocpy.hip.device"
        _classes[name] = cls
    return cls
