"""Strip what the C compiler understands and pycparser/cffi do not.

Removes ``__attribute__((...))``, ``__asm__("...")`` labels, ``__extension__``
and similar GNU spellings, keeping line numbers; remembers the lines that
carried an ``aligned(N)`` attribute (the structs declared there take their
layout from the compiler: they are declared partially later).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_ALIGN_MARK = "__rocpy_aligned__"
_DROP_WORDS = re.compile(
    r"\b(__extension__|__restrict__|__restrict|__inline__|__inline|"
    r"__volatile__|__const|__signed__|_Noreturn|__thread)\b")
_RENAME_WORDS = {"__signed__": "signed", "__const": "const", "__inline": "inline",
                 "__inline__": "inline", "__volatile__": "volatile"}


@dataclass
class Cleaned:
    text: str
    aligned_lines: set[int] = field(default_factory=set)   # 1-based


def _balanced_end(text: str, start: int) -> int:
    """Index just past the parenthesised group starting at ``text[start] == '('``."""
    depth = 0
    i = start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1) + 1
            while text[i - 2] == "\\":
                i = text.index('"', i) + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced parentheses in header text")


def _remove_calls(text: str, keyword: str, keep_aligned: bool) -> str:
    pattern = re.compile(r"\b" + re.escape(keyword) + r"\s*\(")
    out, pos = [], 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue
        end = _balanced_end(text, m.end() - 1)
        out.append(text[pos:m.start()])
        removed = text[m.start():end]
        if keep_aligned and re.search(r"\baligned\b|__aligned__", removed):
            out.append(f" {_ALIGN_MARK} ")
        out.append("\n" * removed.count("\n"))    # keep line numbers
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _strip_function_bodies(text: str) -> str:
    """Empty every top-level function body (``) {...}``), keeping line numbers.

    Inline bodies are never declared, and some (HIP's NVIDIA headers) hold
    C++ that no C parser accepts.
    """
    out, depth, i, n = [], 0, 0, len(text)
    last_significant = ""
    while i < n:
        c = text[i]
        if c == "{" and depth == 0 and last_significant == ")":
            j, d = i, 0
            while j < n:
                if text[j] in "\"'":
                    q, j = text[j], j + 1
                    while j < n and text[j] != q:
                        j += 2 if text[j] == "\\" else 1
                elif text[j] == "{":
                    d += 1
                elif text[j] == "}":
                    d -= 1
                    if d == 0:
                        break
                j += 1
            out.append("{}" + "\n" * text.count("\n", i, j))
            i = j + 1
            last_significant = "}"
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if not c.isspace():
            last_significant = c
        out.append(c)
        i += 1
    return "".join(out)


def clean(text: str) -> Cleaned:
    """Return ``text`` without GNU extensions, noting aligned structs."""
    text = _strip_function_bodies(text)
    text = _remove_calls(text, "__attribute__", keep_aligned=True)
    text = _remove_calls(text, "__attribute", keep_aligned=True)
    text = _remove_calls(text, "__declspec", keep_aligned=True)
    text = _remove_calls(text, "__asm__", keep_aligned=False)
    text = _remove_calls(text, "__asm", keep_aligned=False)
    text = _DROP_WORDS.sub(lambda m: _RENAME_WORDS.get(m.group(1), ""), text)
    aligned = {i + 1 for i, line in enumerate(text.split("\n")) if _ALIGN_MARK in line}
    text = text.replace(_ALIGN_MARK, "")
    return Cleaned(text=text, aligned_lines=aligned)
