"""Kernel parameter types: where they come from, and how they reach the packer.

Code object metadata gives each parameter's size and kind (pointer or
value), not its type, so ``3`` for an ``int`` and ``3`` for a ``float`` would
pack alike.  The types come from, in order:

1. the metadata's own ``.type_name`` (OpenCL with ``-cl-kernel-arg-info``);
2. ``declared``: types a caller knows from source (hipRTC programs,
   `rocpy.hip.program`: their ``extern "C"`` kernels' declarations, parsed by
   `parse_declarations`);
3. the kernel's mangled name (`rocpy.codeobject.demangle`): every kernel not
   declared ``extern "C"``, on AMD (code object) and NVIDIA (cubin) alike.

`typed_args` checks what it found against the metadata (count, pointer or
value, the size of builtin types) and drops the lot on any disagreement: a
type is used only when it is certainly the parameter's.  What has no type
stays unknown, and `rocpy.codeobject.argconv` refuses bare Python numbers
for it.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Dict, Iterable, Optional, Sequence, Tuple

from . import demangle as _demangle
from .metadata import KernelArg

#: sizes of builtin types on amdgcn and nvptx64 (LP64)
_SIZES = {"bool": 1, "char": 1, "signed char": 1, "unsigned char": 1, "short": 2,
          "unsigned short": 2, "int": 4, "unsigned int": 4, "long": 8, "unsigned long": 8,
          "long long": 8, "unsigned long long": 8, "float": 4, "double": 8, "half": 2,
          "_Float16": 2, "__fp16": 2, "__int128": 16, "unsigned __int128": 16,
          "char16_t": 2, "char32_t": 4, "char8_t": 1, "wchar_t": 4}


def from_name(symbol: str) -> Optional[Tuple[str, ...]]:
    """The parameter types (C spellings, top-level qualifiers dropped) encoded in a
    kernel's mangled name; None for ``extern "C"`` names and names `demangle` cannot read."""
    types = _demangle.parameter_types(symbol)
    if types is None:
        return None
    return tuple(str(t.unqualified) for t in types)


def typed_args(args: Sequence[KernelArg], symbol: str,
               declared: Optional[Sequence[str]] = None) -> Tuple[KernelArg, ...]:
    """``args`` with ``type_name`` filled where a type is certain (see the module doc)."""
    args = tuple(args)
    if all(a.type_name for a in args):
        return args
    types = tuple(declared) if declared is not None else from_name(symbol)
    if types is None or not _consistent(args, types):
        return args
    return tuple(a if a.type_name else dataclasses.replace(a, type_name=t)
                 for a, t in zip(args, types))


def _consistent(args: Sequence[KernelArg], types: Sequence[str]) -> bool:
    if len(args) != len(types):
        return False
    for a, t in zip(args, types):
        pointer = t.endswith("*") or t.endswith("&") or t == "std::nullptr_t"
        if pointer != a.is_pointer and not (pointer and a.size == 8):
            return False
        size = _SIZES.get(t)
        if size is not None and size != a.size:
            return False
    return True


# ---- extern "C" declarations in source (hipRTC programs) -------------------------------

_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "__restrict", "struct",
               "union", "enum", "signed"}
_ATTRIBUTE = re.compile(r"__attribute__\s*\(\(.*?\)\)|__launch_bounds__\s*\([^)]*\)")
_KERNEL = re.compile(r"__global__\s+(?:__[a-z_]+__\s+)*void\s+"
                     r"(?:__[a-z_]+__\s+)*([A-Za-z_]\w*)\s*\(([^()]*)\)")
_TEMPLATE_HEAD = re.compile(r"template\s*<[^<>]*(?:<[^<>]*>[^<>]*)*>\s*(?:static\s+)?$")
_CANON = {"unsigned": "unsigned int", "signed": "int", "short int": "short",
          "unsigned short int": "unsigned short", "long int": "long",
          "unsigned long int": "unsigned long", "long long int": "long long",
          "unsigned long long int": "unsigned long long", "signed char": "signed char",
          "signed short": "short", "signed long": "long", "signed long long": "long long",
          "signed int": "int", "uint32_t": "unsigned int", "int32_t": "int",
          "uint64_t": "unsigned long", "int64_t": "long", "size_t": "unsigned long",
          "uint16_t": "unsigned short", "int16_t": "short", "uint8_t": "unsigned char",
          "int8_t": "signed char"}


def _strip_comments(source: str) -> str:
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", " ", source)


def _param_type(decl: str) -> Optional[str]:
    """The type of one C parameter declaration (``const float *x`` -> ``float*``);
    None where it is not a plain declaration (arrays, function pointers, templates,
    macros, defaults)."""
    decl = decl.strip()
    if not decl or any(ch in decl for ch in "[]()<>=:"):
        return None
    stars = decl.count("*") + decl.count("&")
    ref = "&" in decl
    words = decl.replace("*", " ").replace("&", " ").split()
    keywords = {"int", "char", "short", "long", "float", "double", "unsigned", "signed",
                "bool", "_Float16", "__fp16", "half"} | _QUALIFIERS
    if len(words) < 2 or words[-1] in keywords or words[-1] in _CANON:
        name_less = words  # a type with no parameter name (``int``)
    else:
        name_less = words[:-1]
    signed = "signed" in name_less and "unsigned" not in name_less
    base = [w for w in name_less if w not in _QUALIFIERS]
    if signed and base == ["char"]:
        base = ["signed", "char"]
    elif signed and not base:
        base = ["int"]
    if not base:
        return None
    text = " ".join(base)
    text = _CANON.get(text, text)
    if text not in _SIZES and not stars:
        return None  # a typedef or struct by value: its layout is not known here
    if stars:
        return text + ("&" if ref else "*" * stars)
    return text


def parse_declarations(source: str, names: Optional[Iterable[str]] = None
                       ) -> Dict[str, Tuple[str, ...]]:
    """``{kernel name: parameter types}`` of the ``__global__`` functions in ``source``
    whose parameter lists are plain C declarations (builtin types, pointers).

    Meant for hipRTC sources' ``extern "C"`` kernels, whose names carry no types.
    Kernels with anything else in their parameter list (templates, arrays,
    structs by value, macros) are left out, not guessed; with ``names``, only
    those kernels.  A kernel declared twice with different lists is left out.
    """
    text = _ATTRIBUTE.sub(" ", _strip_comments(source))
    wanted = set(names) if names is not None else None
    found: Dict[str, Tuple[str, ...]] = {}
    bad = set()
    for m in _KERNEL.finditer(text):
        name, params = m.group(1), m.group(2).strip()
        if wanted is not None and name not in wanted:
            continue
        if _TEMPLATE_HEAD.search(text, 0, m.start()):  # a template: its names are mangled
            continue
        if params in ("", "void"):
            types: Optional[Tuple[str, ...]] = ()
        else:
            parts = [_param_type(p) for p in params.split(",")]
            types = None if any(p is None for p in parts) else tuple(parts)  # type: ignore
        if types is None or (name in found and found[name] != types):
            bad.add(name)
            continue
        found[name] = types
    for name in bad:
        found.pop(name, None)
    return found
