"""Turn preprocessed ROCm headers into cffi ``cdef`` text with pycparser.

Keeps typedefs, structs, unions, enums and prototypes; drops inline bodies
(the prototype of a ``static inline`` helper stays: API mode compiles a call
to it); declares enums with a trailing ``...`` so the compiler supplies the
values; declares ``aligned(N)`` structs partially (``...;``) so the compiler
supplies their layout; regenerates ``typedef enum X {...} A, B;`` with the
body once.
"""
from __future__ import annotations

import copy
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any

from pycparser import c_ast, c_generator, c_parser

from .clean import clean

# Types from libc that the ROCm headers use.  They are declared here only so
# pycparser can parse; cffi knows them natively, so they never reach the cdef.
_LIBC_TYPES = """
typedef int size_t; typedef int ssize_t; typedef int ptrdiff_t; typedef int wchar_t;
typedef int int8_t; typedef int int16_t; typedef int int32_t; typedef int int64_t;
typedef int uint8_t; typedef int uint16_t; typedef int uint32_t; typedef int uint64_t;
typedef int intptr_t; typedef int uintptr_t; typedef int FILE; typedef int pid_t;
typedef int bool;
"""
_LIBC_TYPE_NAMES = {
    "size_t", "ssize_t", "ptrdiff_t", "wchar_t", "int8_t", "int16_t", "int32_t",
    "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t",
    "uintptr_t", "FILE", "pid_t", "bool"}


@dataclass
class Function:
    """One function prototype of the headers."""

    name: str
    result: str            # C spelling of the return type
    params: list[tuple[str, str]]   # (declaration with a name, name)
    variadic: bool
    inline: bool           # defined in the header (static inline)

    def prototype(self, name: str | None = None) -> str:
        params = ", ".join(p for p, _ in self.params) or "void"
        if self.variadic:
            params += ", ..."
        return _declare(self.result, f"{name or self.name}({params})")


def _declare(result: str, declarator: str) -> str:
    # ``result`` may be a pointer-to-function spelling; keep it simple: the
    # headers only return plain types and pointers.
    return f"{result} {declarator}"


@dataclass
class Declarations:
    """Everything the pipeline learned from the headers."""

    cdef: str
    functions: dict[str, Function] = field(default_factory=dict)
    structs: set[str] = field(default_factory=set)
    unions: set[str] = field(default_factory=set)
    enums: set[str] = field(default_factory=set)
    enum_constants: set[str] = field(default_factory=set)
    typedefs: set[str] = field(default_factory=set)
    partial_structs: set[str] = field(default_factory=set)
    # struct/union tag or typedef name -> member names (anonymous inner
    # structs' and unions' members included: C reaches them directly)
    members: dict[str, list[str]] = field(default_factory=dict)


class _Generator(c_generator.CGenerator):  # type: ignore[misc]  # pycparser is untyped
    """CGenerator that writes enums as ``{A, B, ...}`` (compiler-supplied values)."""

    def visit_Enum(self, n: Any) -> str:
        if n.values is None:
            return "enum " + (n.name or "")
        # pycparser 3.x keeps ``#pragma`` lines among the enumerators
        names = ", ".join(e.name for e in n.values.enumerators
                          if isinstance(e, c_ast.Enumerator))
        return "enum " + (n.name + " " if n.name else "") + "{" + names + ", ...}"


def _type_body(node: Any) -> Any:
    """The struct/union/enum node a declaration defines, or None."""
    t = node.type
    while isinstance(t, (c_ast.TypeDecl, c_ast.PtrDecl, c_ast.ArrayDecl)):
        t = t.type
    if isinstance(t, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
        return t
    return None


def _has_body(t: Any) -> bool:
    if isinstance(t, c_ast.Enum):
        return t.values is not None
    return t.decls is not None


def _is_bitfield_struct(t: Any) -> bool:
    return isinstance(t, (c_ast.Struct, c_ast.Union)) and any(
        d.bitsize is not None for d in (t.decls or []))


def parse(text: str, types_only_lines: Set[int] = frozenset()) -> Declarations:
    """Parse preprocessed, ROCm-only header text into declarations and cdef.

    Functions declared on ``types_only_lines`` (1-based lines of ``text``) are
    left out; their types stay.
    """
    cleaned = clean(text)
    prelude_lines = _LIBC_TYPES.count("\n")
    aligned_lines = {n + prelude_lines for n in cleaned.aligned_lines}
    skip_function_lines = {n + prelude_lines for n in types_only_lines}
    ast = c_parser.CParser().parse(_LIBC_TYPES + cleaned.text, filename="<rocm>")
    # pycparser places a typedef at its declarator (the closing line), so a
    # statement owns every line after the previous statement's place
    places = [0] + [ext.coord.line for ext in ast.ext]
    gen = _Generator()
    decls = Declarations(cdef="")
    lines: list[str] = []
    emitted_bodies: dict[int, str | None] = {}     # id(body node) -> first typedef name
    emitted_named: set[tuple[str, str]] = set()

    for index, ext in enumerate(ast.ext):
        if isinstance(ext, c_ast.Typedef) and ext.name in _LIBC_TYPE_NAMES:
            continue
        if isinstance(ext, c_ast.FuncDef):
            if ext.coord is None or ext.coord.line not in skip_function_lines:
                _add_function(decls, ext.decl, inline=True, gen=gen)
            continue
        if isinstance(ext, c_ast.Decl) and isinstance(ext.type, c_ast.FuncDecl):
            if ext.coord is None or ext.coord.line not in skip_function_lines:
                _add_function(decls, ext, inline="static" in (ext.storage or []) or
                              "inline" in (ext.funcspec or []), gen=gen)
            continue
        if isinstance(ext, c_ast.Pragma) or isinstance(ext, c_ast.StaticAssert):
            continue
        body = _type_body(ext)
        if body is not None and _has_body(body):
            kind = type(body).__name__.lower()
            key = (kind, body.name) if body.name else None
            if id(body) in emitted_bodies or (key and key in emitted_named):
                ext = _without_body(ext, body, emitted_bodies.get(id(body)))
            else:
                emitted_bodies[id(body)] = getattr(ext, "name", None)
                if key:
                    emitted_named.add(key)
                _record_type(decls, body)
                if isinstance(body, (c_ast.Struct, c_ast.Union)) and isinstance(ext, c_ast.Typedef):
                    decls.members[ext.name] = _member_names(body)
                span = range(places[index] + 1, places[index + 1] + 1)
                if (isinstance(body, (c_ast.Struct, c_ast.Union))
                        and any(line in aligned_lines for line in span)
                        and not _is_bitfield_struct(body)):
                    body = _partial(body)
                    ext = _replace_body(ext, body)
                    decls.partial_structs.add(body.name or ext.name)
        _let_compiler_size_arrays(ext)
        if isinstance(ext, c_ast.Typedef):
            decls.typedefs.add(ext.name)
            target = _typedef_target(ext)
            if target in decls.members and ext.name not in decls.members:
                decls.members[ext.name] = decls.members[target]
        if isinstance(ext, c_ast.Decl) and ext.name and "extern" not in (ext.storage or []):
            continue        # a variable definition (none expected in the headers)
        text_out = gen.visit(ext)
        lines.append(text_out + ";")
    decls.cdef = "\n".join(lines)
    return decls


class _ArraySizer(c_ast.NodeVisitor):  # type: ignore[misc]  # pycparser is untyped
    """Array lengths that are expressions (``8 - sizeof(x)``) become ``[...]``:
    cffi's parser takes only numbers, and the compiler knows the value."""

    def visit_ArrayDecl(self, node: Any) -> None:
        if node.dim is not None and not isinstance(node.dim, c_ast.Constant):
            node.dim = c_ast.ID("...")
        self.generic_visit(node)


def _let_compiler_size_arrays(ext: Any) -> None:
    _ArraySizer().visit(ext)


def _member_names(body: Any) -> list[str]:
    names: list[str] = []
    for d in body.decls or []:
        if not isinstance(d, c_ast.Decl):
            continue
        if d.name:
            names.append(d.name)
        elif isinstance(d.type, (c_ast.Struct, c_ast.Union)):
            names += _member_names(d.type)
    return names


def _typedef_target(ext: c_ast.Typedef) -> str | None:
    """The struct/union tag or type name a plain ``typedef X Y;`` renames."""
    t = ext.type
    if not isinstance(t, c_ast.TypeDecl):
        return None         # a pointer, array or function type
    if isinstance(t.type, (c_ast.Struct, c_ast.Union)):
        tag: str = t.type.name
        return tag
    if isinstance(t.type, c_ast.IdentifierType) and len(t.type.names) == 1:
        typedef: str = t.type.names[0]
        return typedef
    return None


def _record_type(decls: Declarations, body: Any) -> None:
    """Record a struct/union/enum body and the bodies nested in it (a tag defined
    inside a struct is a file-scope tag in C: HIP 7's hipStreamBatchMemOpParams)."""
    if isinstance(body, c_ast.Enum):
        if body.name:
            decls.enums.add(body.name)
        for e in body.values.enumerators:
            if isinstance(e, c_ast.Enumerator):
                decls.enum_constants.add(e.name)
        return
    if body.name:
        (decls.structs if isinstance(body, c_ast.Struct) else decls.unions).add(body.name)
        decls.members[body.name] = _member_names(body)
    for d in body.decls or []:
        inner = _type_body(d) if isinstance(d, c_ast.Decl) else None
        if inner is not None and _has_body(inner):
            _record_type(decls, inner)


def _partial_marker() -> c_ast.Decl:
    """A ``...;`` member: pycparser has no node for it, so fake a declaration.

    A plain ``Decl``, not a subclass: pycparser 2.2x ends a member with ``;``
    only when ``type(member)`` is exactly ``Decl``."""
    return c_ast.Decl(name=None, quals=[], align=[], storage=[], funcspec=[],
                      type=c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(["..."])),
                      init=None, bitsize=None)


def _partial(body: Any) -> Any:
    body = copy.copy(body)
    body.decls = list(body.decls) + [_partial_marker()]
    return body


def _replace_body(ext: Any, new_body: Any) -> Any:
    ext = copy.deepcopy(ext)
    holder = ext
    while not isinstance(holder.type, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
        holder = holder.type
    holder.type = new_body
    return ext


def _reference(body: Any) -> Any:
    """``struct X`` / ``enum X`` without the body.

    A copy of the node with its body dropped, never a new node: the node
    constructors differ between pycparser releases (3.x's ``Enum`` takes an
    ``underlying_type``; every node there takes ``attributes``)."""
    ref = copy.copy(body)
    if isinstance(ref, c_ast.Enum):
        ref.values = None
    else:
        ref.decls = None
    return ref


def _without_body(ext: Any, body: Any, first_typedef: str | None) -> Any:
    """Refer to an already-emitted struct/enum instead of repeating its body."""
    if body.name:
        return _replace_body(ext, _reference(body))
    # anonymous body shared by several typedef names: alias the first one
    ext = copy.deepcopy(ext)
    holder = ext
    while not isinstance(holder.type, (c_ast.Struct, c_ast.Union, c_ast.Enum)):
        holder = holder.type
    holder.type = c_ast.IdentifierType([first_typedef])
    return ext


def _add_function(decls: Declarations, decl: c_ast.Decl, inline: bool, gen: Any) -> None:
    func = decl.type
    result_decl = copy.deepcopy(func.type)
    _rename(result_decl, None)
    result = gen._generate_type(result_decl)
    params: list[tuple[str, str]] = []
    variadic = False
    for i, p in enumerate(func.args.params if func.args else []):
        if isinstance(p, c_ast.EllipsisParam):
            variadic = True
            continue
        if isinstance(p, c_ast.Typename) and _is_void(p):
            continue
        p = copy.deepcopy(p)
        name = getattr(p, "name", None) or f"arg{i}"
        _rename(p.type, name)
        if isinstance(p, c_ast.Typename):
            p = c_ast.Decl(name, p.quals, [], [], [], p.type, None, None)
        p.name = name
        params.append((gen.visit(p), name))
    decls.functions[decl.name] = Function(decl.name, result.strip(), params,
                                          variadic, inline)


def _is_void(p: Any) -> bool:
    t = p.type
    return (isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType)
            and t.type.names == ["void"])


def _rename(node: Any, name: str | None) -> None:
    """Set the declarator name deep inside a type (None removes it)."""
    while not isinstance(node, c_ast.TypeDecl):
        if isinstance(node, c_ast.FuncDecl):
            node = node.type
        else:
            node = node.type
    node.declname = name
