"""Itanium C++ ABI demangling of kernel names: the parameter types.

HIP code object metadata gives each kernel parameter a size, not a type; the
mangled name of every kernel not declared ``extern "C"`` encodes the types
(``_Z5scalePfif`` is ``scale(float*, int, float)``).  `demangle` reads the
subset of the grammar hipcc/clang emits for kernels:

- builtin types (``v b c a h s t i j l m x y n o f d e g w``, ``DF16_``,
  ``Dh``, ``Ds``, ``Di``, ``Du``, ``Dn``), pointers ``P``, lvalue/rvalue
  references ``R``/``O``, qualifiers ``r V K``;
- names: plain (``<len><id>``), nested ``N ... E``, ``St``, the anonymous
  namespace, template arguments ``I ... E`` (types, integer literals
  ``L<type><value>E``, packs ``J ... E``), template parameters ``T_``/``T<n>_``
  and pack expansions ``Dp``, substitutions ``S_``/``S<seq-id>_`` and the
  standard abbreviations (``Sa Sb Ss Si So Sd``);
- class, struct, union and enum types by name.

Anything else (function types, arrays, member pointers, vectors, lambdas,
local names, ABI tags, expressions, ``decltype``) raises `Unknown`: the
caller then has no types, never a guess.  Types render as LLVM's demangler
(``llvm-cxxfilt``) renders them (``float const*``), which the tests compare
with.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

__all__ = ["Unknown", "Type", "Signature", "demangle", "parameter_types"]

_BUILTINS = {
    "v": "void", "w": "wchar_t", "b": "bool", "c": "char", "a": "signed char",
    "h": "unsigned char", "s": "short", "t": "unsigned short", "i": "int",
    "j": "unsigned int", "l": "long", "m": "unsigned long", "x": "long long",
    "y": "unsigned long long", "n": "__int128", "o": "unsigned __int128", "f": "float",
    "d": "double", "e": "long double", "g": "__float128", "z": "...",
}
_D_BUILTINS = {"Dh": "half", "Ds": "char16_t", "Di": "char32_t", "Du": "char8_t",
               "Dn": "std::nullptr_t"}
_STD_ABBREVIATIONS = {"Sa": "std::allocator", "Sb": "std::basic_string", "Ss": "std::string",
                      "Si": "std::istream", "So": "std::ostream", "Sd": "std::iostream"}
#: how LLVM writes integer literals of these types (``Lj4E`` -> ``4u``)
_LITERAL_SUFFIX = {"i": "", "j": "u", "l": "l", "m": "ul", "x": "ll", "y": "ull"}


class Unknown(ValueError):
    """The name uses a construct this demangler does not read (or is not mangled)."""


@dataclass(frozen=True)
class Type:
    """One demangled type.

    ``kind`` is ``"builtin"`` (``name`` is the C spelling), ``"pointer"``,
    ``"reference"`` (``inner`` is the pointee), ``"class"`` (a class, struct,
    union or enum: ``name`` is its qualified name) or ``"pack"`` (template pack
    argument: ``items``).  ``quals`` are the qualifiers in LLVM's order.
    """

    kind: str
    name: str = ""
    inner: Optional["Type"] = None
    quals: Tuple[str, ...] = ()
    ref: str = ""
    items: Tuple["Type", ...] = ()

    def __str__(self) -> str:
        q = "".join(" " + w for w in self.quals)
        if self.kind == "pointer":
            assert self.inner is not None
            return f"{self.inner}*{q}"
        if self.kind == "reference":
            assert self.inner is not None
            return f"{self.inner}{self.ref}"
        if self.kind == "pack":
            return ", ".join(str(t) for t in self.items)
        return self.name + q

    @property
    def unqualified(self) -> "Type":
        """The same type without top-level qualifiers (a by-value parameter's type)."""
        return Type(self.kind, self.name, self.inner, (), self.ref, self.items)


@dataclass(frozen=True)
class Signature:
    """A demangled kernel name: qualified ``name`` (with template arguments), the
    ``params`` types and, for function templates, the ``result`` type."""

    name: str
    params: Tuple[Type, ...]
    result: Optional[Type] = None

    def __str__(self) -> str:
        params = ", ".join(str(p) for p in self.params)
        head = f"{self.result} " if self.result is not None else ""
        return f"{head}{self.name}({params})"


_TemplateArg = Union[Type, str]  # a type, or a literal as rendered


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.subs: List[Union[Type, str]] = []      # candidates: types or name prefixes
        self.tparams: List[_TemplateArg] = []  # of the function template

    # ---- reading ------------------------------------------------------------------

    def peek(self, n: int = 1) -> str:
        return self.s[self.i:self.i + n]

    def take(self, token: str) -> bool:
        if self.s.startswith(token, self.i):
            self.i += len(token)
            return True
        return False

    def fail(self, what: str) -> Unknown:
        return Unknown(f"{what} at offset {self.i} of {self.s!r}")

    def number(self) -> int:
        start = self.i
        while self.i < len(self.s) and self.s[self.i].isdigit():
            self.i += 1
        if start == self.i:
            raise self.fail("expected a number")
        return int(self.s[start:self.i])

    def seq_id(self) -> int:
        """``S_`` is 0, ``S<base-36 n>_`` is n + 1 (the leading ``S`` already read)."""
        if self.take("_"):
            return 0
        start = self.i
        while self.i < len(self.s) and (self.s[self.i].isdigit() or self.s[self.i].isupper()):
            self.i += 1
        if start == self.i or not self.take("_"):
            raise self.fail("bad substitution")
        return int(self.s[start:self.i - 1], 36) + 1

    # ---- names ---------------------------------------------------------------------

    def source_name(self) -> str:
        n = self.number()
        ident = self.s[self.i:self.i + n]
        if len(ident) != n:
            raise self.fail("truncated identifier")
        self.i += n
        return "(anonymous namespace)" if ident.startswith("_GLOBAL__N") else ident

    def substitution(self) -> Union[Type, str]:
        """After ``S``: a numbered candidate (an ``St`` prefix is the caller's)."""
        two = "S" + self.peek()
        if two in _STD_ABBREVIATIONS:
            self.i += 1
            return _STD_ABBREVIATIONS[two]
        k = self.seq_id()
        if k >= len(self.subs):
            raise self.fail(f"substitution {k} of {len(self.subs)}")
        return self.subs[k]

    def template_args(self) -> Tuple[List[_TemplateArg], str]:
        """``I ... E`` (the ``I`` already read): the arguments and their rendering."""
        args: List[_TemplateArg] = []
        while not self.take("E"):
            args.append(self.template_arg())
        text = ", ".join(str(a) for a in args)
        return args, f"<{text}>"

    def template_arg(self) -> _TemplateArg:
        if self.take("L"):
            return self.literal()
        if self.take("J"):
            items = []
            while not self.take("E"):
                item = self.template_arg()
                if not isinstance(item, Type):
                    raise self.fail("non-type pack")
                items.append(item)
            return Type("pack", items=tuple(items))
        if self.peek() == "X":
            raise self.fail("expression template argument")
        return self.type()

    def literal(self) -> str:
        """``L <type> <value> E`` (the ``L`` already read) as LLVM writes it."""
        if self.peek() in ("_", "Z") or self.peek(2) == "_Z":
            raise self.fail("external name literal")
        code = self.peek()
        if code in _BUILTINS and code not in "vz":
            self.i += 1
            type_name = _BUILTINS[code]
        else:
            type_name = str(self.type())
            code = ""
        negative = self.take("n")
        start = self.i
        while self.i < len(self.s) and self.s[self.i] != "E":
            self.i += 1
        value = self.s[start:self.i]
        if not self.take("E") or not value.isdigit():
            raise self.fail("bad literal")
        sign = "-" if negative else ""
        if code == "b":
            return {"0": "false", "1": "true"}.get(value) or f"(bool){value}"
        if code in _LITERAL_SUFFIX:
            return f"{sign}{value}{_LITERAL_SUFFIX[code]}"
        return f"({type_name}){sign}{value}"

    def unqualified_name(self) -> str:
        if self.peek().isdigit():
            return self.source_name()
        raise self.fail("unsupported name component")

    def nested_name(self) -> Tuple[str, Optional[List[_TemplateArg]], str]:
        """``N ... E`` (the ``N`` read): the name, its last template arguments (or None)
        and the name without those (what the substitution table holds last)."""
        if self.peek() in ("r", "V", "K", "R", "O"):
            raise self.fail("member function qualifiers")
        so_far = ""
        last_args: Optional[List[_TemplateArg]] = None
        template_name = ""
        while not self.take("E"):
            if self.take("St"):
                if so_far:
                    raise self.fail("std:: inside a name")
                so_far = "std"
                continue
            if self.peek() == "S":
                self.i += 1
                sub = self.substitution()
                if isinstance(sub, Type):
                    if sub.kind != "class" or sub.quals:
                        raise self.fail("a non-class type as a name prefix")
                    sub = sub.name
                so_far = sub
                last_args = None
                continue  # a substitution is not a new candidate
            if self.take("I"):
                if not so_far:
                    raise self.fail("template arguments without a name")
                args, text = self.template_args()
                template_name = so_far
                so_far += text
                last_args = args
            elif self.peek() == "T":
                raise self.fail("template parameter as a name prefix")
            else:
                part = self.unqualified_name()
                so_far = f"{so_far}::{part}" if so_far else part
                last_args = None
            if self.peek() != "E":
                self.subs.append(so_far)
        if not so_far:
            raise self.fail("empty nested name")
        return so_far, last_args, template_name

    def name(self) -> Tuple[str, Optional[List[_TemplateArg]]]:
        """A (possibly nested, possibly template) name and its last template arguments."""
        if self.take("N"):
            full, args, _ = self.nested_name()
            return full, args
        if self.peek() == "Z":
            raise self.fail("local name")
        if self.take("St"):
            base = "std::" + self.unqualified_name()
        elif self.peek() == "S":
            self.i += 1
            sub = self.substitution()
            if not self.take("I"):
                raise self.fail("substitution as a name without template arguments")
            base = sub.name if isinstance(sub, Type) else sub
            args, text = self.template_args()
            return base + text, args
        else:
            base = self.unqualified_name()
        if self.take("I"):
            self.subs.append(base)  # an unscoped template name is a candidate
            args, text = self.template_args()
            return base + text, args
        return base, None

    # ---- types ---------------------------------------------------------------------

    def type(self) -> Type:
        c = self.peek()
        if c in _BUILTINS:
            self.i += 1
            return Type("builtin", _BUILTINS[c])
        two = self.peek(2)
        if two in _D_BUILTINS:
            self.i += 2
            return Type("builtin", _D_BUILTINS[two])
        if self.take("DF16_"):
            return Type("builtin", "_Float16")
        if c in ("r", "V", "K"):
            quals = []
            for code, word in (("r", "restrict"), ("V", "volatile"), ("K", "const")):
                if self.take(code):
                    quals.append(word)
            inner = self.type()
            if inner.kind not in ("builtin", "class", "pointer"):
                raise self.fail("qualified reference or pack")
            order = [w for w in ("const", "volatile", "restrict") if w in quals + list(inner.quals)]
            t = Type(inner.kind, inner.name, inner.inner, tuple(order), inner.ref, inner.items)
            self.subs.append(t)
            return t
        if c in ("P", "R", "O"):
            self.i += 1
            inner = self.type()
            if inner.kind == "pack":
                raise self.fail("pointer to a pack")
            if c == "P":
                t = Type("pointer", inner=inner)
            else:
                t = Type("reference", inner=inner, ref="&" if c == "R" else "&&")
            self.subs.append(t)
            return t
        if c == "T":
            self.i += 1
            k = self.seq_id()
            if k >= len(self.tparams):
                raise self.fail(f"template parameter {k} of {len(self.tparams)}")
            arg = self.tparams[k]
            if not isinstance(arg, Type):
                raise self.fail("non-type template parameter used as a type")
            self.subs.append(arg)
            return arg
        if self.take("Dp"):
            t = self.type()
            if t.kind != "pack":
                raise self.fail("pack expansion of a non-pack")
            return t
        if c == "S" and two != "St":
            self.i += 1
            sub = self.substitution()
            if self.peek() == "I":  # a template name: template arguments follow
                self.i += 1
                base = sub.name if isinstance(sub, Type) else sub
                _, text = self.template_args()
                t = Type("class", base + text)
                self.subs.append(t)
                return t
            if isinstance(sub, str):
                return Type("class", sub)
            return sub
        if c.isdigit() or c == "N" or two == "St":
            full, _ = self.name()
            t = Type("class", full)
            self.subs.append(t)
            return t
        raise self.fail("unsupported type")

    # ---- the encoding --------------------------------------------------------------

    def encoding(self) -> Signature:
        if not self.take("_Z"):
            raise Unknown(f"{self.s!r} is not a mangled name")
        name, args = self.name()
        result = None
        if args is not None:
            self.tparams = args
            result = self.type()  # function templates encode their return type
        params: List[Type] = []
        while self.i < len(self.s):
            if self.peek() == ".":  # clone suffixes (.cold, .1): not part of the type
                break
            t = self.type()
            params.extend(t.items if t.kind == "pack" else (t,))
        if len(params) == 1 and params[0].kind == "builtin" and params[0].name == "void":
            params = []
        if any(p.kind == "builtin" and p.name in ("void", "...") for p in params):
            raise self.fail("void or variadic parameter")
        return Signature(name, tuple(params), result)


def demangle(symbol: str) -> Signature:
    """The `Signature` of a mangled function name; `Unknown` where it cannot be read."""
    return _Parser(symbol).encoding()


def parameter_types(symbol: str) -> Optional[Tuple[Type, ...]]:
    """The parameter types of a kernel name, or None (``extern "C"``, or unreadable)."""
    try:
        return demangle(symbol).params
    except Unknown:
        return None
