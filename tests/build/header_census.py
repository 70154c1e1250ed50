"""Count what the ROCm headers declare, independently of the cffi pipeline.

A plain scanner over the preprocessed text (brace depth, statements, regular
expressions): no pycparser, so a bug in the pipeline's parser cannot hide
itself from the coverage test.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_NUMBER = re.compile(r"^\(*\s*-?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)*$")


@dataclass
class Census:
    functions: set[str] = field(default_factory=set)
    structs: set[str] = field(default_factory=set)
    enums: set[str] = field(default_factory=set)
    enum_constants: set[str] = field(default_factory=set)
    constants: set[str] = field(default_factory=set)


def _strip_attributes(text: str) -> str:
    out, i = [], 0
    for m in re.finditer(r"__attribute__\s*\(\(", text):
        if m.start() < i:
            continue
        depth, j = 0, m.end() - 2
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        out.append(text[i:m.start()])
        i = j
    out.append(text[i:])
    return "".join(out)


def census(text: str, macros: dict[str, str]) -> Census:
    """Scan preprocessed ROCm-only header text and its object-like macros."""
    c = Census()
    text = _strip_attributes(text)
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{", text):
        c.structs.add(m.group(1))
    for m in re.finditer(r"\benum\s+(\w+)?\s*\{([^}]*)\}", text):
        if m.group(1):
            c.enums.add(m.group(1))
        for item in m.group(2).split(","):
            name = item.split("=")[0].strip()
            if re.fullmatch(r"[A-Za-z_]\w*", name):
                c.enum_constants.add(name)
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            if depth == 0:
                _statement(c, text[start:i], body=True)
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            _statement(c, text[start:i], body=False)
            start = i + 1
    for name, body in macros.items():
        if not name.startswith("__") and _NUMBER.match(body):
            c.constants.add(name)
    return c


def _statement(c: Census, stmt: str, body: bool) -> None:
    stmt = " ".join(stmt.split())
    if not stmt or stmt.startswith("typedef") or re.match(r"(struct|union|enum)\b[^(]*$", stmt):
        return
    m = re.search(r"\b([A-Za-z_]\w*)\s*\((?!\s*\*)", stmt)
    if m and not body or (m and body and stmt.endswith(")")):
        c.functions.add(m.group(1))
