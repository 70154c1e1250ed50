"""Kernel arguments by name and type for emulations: a C-like signature read
the way hipcc lays out a kernel's explicit arguments (each at its natural
alignment, in order).

``register_kernel("scale", fn, signature="float *p, float f, int n")`` makes
``dispatch.args`` a dict ``{"p": <address>, "f": <float>, "n": <int>}``.
The code object's metadata gives offsets and sizes but no names or C types
(clang's HIP metadata has neither).  Without a signature, a C++ kernel's
mangled name gives the types (`from_symbol`, through
`rocpy.codeobject.demangle`) and the arguments are named ``arg0``, ``arg1``,
...; an ``extern "C"`` kernel's name gives nothing, so it needs the signature.
"""
from __future__ import annotations

import re
import struct
from typing import Any

#: C scalar types -> struct format (little endian)
SCALARS = {
    "bool": "?", "char": "b", "signed char": "b", "unsigned char": "B", "int8_t": "b", "uint8_t": "B",
    "short": "h", "unsigned short": "H", "int16_t": "h", "uint16_t": "H", "_Float16": "e", "__half": "e",
    "half": "e", "int": "i", "unsigned": "I", "unsigned int": "I", "int32_t": "i", "uint32_t": "I",
    "float": "f", "long": "q", "unsigned long": "Q", "long long": "q", "unsigned long long": "Q",
    "int64_t": "q", "uint64_t": "Q", "size_t": "Q", "ptrdiff_t": "q", "double": "d",
}

_PARAM = re.compile(r"^\s*(?:const\s+)?(?P<type>[A-Za-z_][\w ]*?)"
                    r"(?P<ptr>(?:\s*\*\s*(?:const\s+|__restrict__\s+)?)+|\s+)"
                    r"(?P<name>[A-Za-z_]\w*)\s*$")


def from_symbol(symbol: str) -> Signature | None:
    """The signature a mangled kernel name gives (arguments ``arg0``...), or None
    where it gives none: ``extern "C"``, a construct the demangler does not read, or
    a by-value type that is not a C scalar (a struct, a vector)."""
    from ..codeobject.demangle import parameter_types
    types = parameter_types(symbol) if symbol.startswith("_Z") else None
    if types is None:
        return None
    parts = []
    for i, t in enumerate(types):
        if t.kind in ("pointer", "reference"):
            parts.append(f"void *arg{i}")
        elif t.kind == "builtin" and t.name in SCALARS:
            parts.append(f"{t.name} arg{i}")
        else:
            return None
    return Signature(", ".join(parts))


class Signature:
    """The parsed signature: ``(name, struct format, offset)`` per argument."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise TypeError(f"signature must be a str like 'float *p, int n', not {type(text).__name__}")
        self.fields: list[tuple[str, str, int]] = []
        offset = 0
        for part in filter(None, (p.strip() for p in text.split(","))):
            m = _PARAM.match(part)
            if not m:
                raise ValueError(f"signature: cannot read parameter {part!r} (write 'TYPE NAME', e.g. 'float *x')")
            ctype = " ".join(m.group("type").split())
            fmt = "Q" if "*" in m.group("ptr") else SCALARS.get(ctype)
            if fmt is None:
                raise ValueError(f"signature: unknown type {ctype!r} of parameter {m.group('name')!r} "
                                 f"(pointers and {', '.join(sorted(SCALARS))})")
            size = struct.calcsize(fmt)
            offset = (offset + size - 1) // size * size
            self.fields.append((m.group("name"), fmt, offset))
            offset += size
        names = [f[0] for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"signature: a parameter name repeats in {text!r}")
        self.size = offset

    def unpack(self, kernarg: memoryview, kernel: str) -> dict[str, Any]:
        if len(kernarg) < self.size:
            raise ValueError(f"kernel {kernel!r}: its {len(kernarg)} bytes of arguments are fewer "
                             f"than the signature's {self.size}")
        return {name: struct.unpack_from("<" + fmt, kernarg, off)[0] for name, fmt, off in self.fields}
