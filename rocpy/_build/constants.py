"""The headers' ``#define`` constants and renaming macros, classified by the compiler.

An object-like macro of a ROCm header becomes:

* an integer constant (``#define NAME ...`` in the cdef: the compiler gives
  the value) when ``enum { x = (NAME) };`` compiles;
* a pointer constant (``static void *const NAME;``) when it is a constant
  ``void *`` expression such as ``HIP_LAUNCH_PARAM_BUFFER_POINTER``;
* an alias when its body is a single identifier naming a declared function or
  type (newer HIP's ``#define hipGetDeviceProperties
  hipGetDevicePropertiesR0600``): the documented name is declared too.

Everything else (strings, attribute spellings, empty guards) is skipped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .preprocess import failing_lines, wrapper_source

_IDENT = re.compile(r"^[A-Za-z_]\w*$")


@dataclass
class Constants:
    integers: list[str] = field(default_factory=list)
    pointers: list[str] = field(default_factory=list)
    function_aliases: dict[str, str] = field(default_factory=dict)
    type_aliases: dict[str, str] = field(default_factory=dict)


def classify(macros: dict[str, str], headers: list[str], include_dirs: list[str],
             defines: list[str], known_functions: set[str], known_types: set[str],
             taken: set[str]) -> Constants:
    """Sort ``macros`` into integer, pointer and alias constants."""
    result = Constants()
    candidates = []
    for name, body in sorted(macros.items()):
        if name in taken or name.startswith("__"):
            continue
        if _IDENT.match(body) and body != name:
            if body in known_functions:
                result.function_aliases[name] = body
                continue
            if body in known_types:
                result.type_aliases[name] = body
                continue
        candidates.append(name)

    head = wrapper_source(headers)
    offset = head.count("\n")
    checks = [f"enum {{ rocpy_check_{i} = ({name}) }};" for i, name in enumerate(candidates)]
    bad = failing_lines(head + "\n".join(checks) + "\n", include_dirs, defines)
    rest = []
    for i, name in enumerate(candidates):
        if offset + i + 1 in bad:
            rest.append(name)
        else:
            result.integers.append(name)

    # a pointer constant may hide behind another macro (NVIDIA's
    # HIP_LAUNCH_PARAM_END is CU_LAUNCH_PARAM_END): let the compiler decide,
    # but never for strings, which would convert to a pointer too
    pointerish = [n for n in rest if '"' not in macros[n]]
    # 5 is GCC's and clang's pointer_type_class
    checks = [f"static void *const rocpy_check_{i} = ({name}); "
              f"_Static_assert(__builtin_classify_type({name}) == 5, \"pointer\");"
              for i, name in enumerate(pointerish)]
    bad = failing_lines(head + "\n".join(checks) + "\n", include_dirs, defines)
    result.pointers = [n for i, n in enumerate(pointerish) if offset + i + 1 not in bad]
    return result
