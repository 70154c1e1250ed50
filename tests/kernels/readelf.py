"""What llvm-readelf prints about a code object, as Python data.

The readers of code objects (rocpy.codeobject, the stub's C reader) are
tested against this: the ELF header, section headers, symbol tables and the
NT_AMDGPU_METADATA note, which llvm-readelf prints as YAML (read here by a
small parser for the block style LLVM writes, so no YAML library is needed).
"""
from __future__ import annotations

import re
import subprocess

from .compile import find_llvm_tool


def find_readelf() -> str | None:
    """llvm-readelf by any of its names (``find_llvm_tool``), the LLVM hipcc uses
    first (an older one may not know newer metadata: LLVM 14 calls v5's invalid)."""
    return find_llvm_tool("llvm-readelf")


def _run(path: str, *options: str) -> str:
    tool = find_readelf()
    if tool is None:
        raise FileNotFoundError("llvm-readelf not found")
    return subprocess.run([tool, *options, path], check=True, capture_output=True,
                          text=True).stdout


def header(path: str) -> dict:
    """{'abi_version': int, 'flags': int, 'machine': str}."""
    text = _run(path, "-h")
    out = {}
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        value = value.strip()
        if key == "ABI Version":
            out["abi_version"] = int(value, 0)
        elif key == "Flags":
            out["flags"] = int(value.split()[0], 0)
        elif key == "Machine":
            out["machine"] = value
    return out


_SECTION = re.compile(r"^\s*\[\s*(\d+)\]\s+(\S+)\s+(\S+)\s+([0-9a-f]{16})\s+"
                      r"([0-9a-f]+)\s+([0-9a-f]+)\s")


def sections(path: str) -> dict[int, dict]:
    """Section index -> {'name', 'type', 'addr', 'offset', 'size'}."""
    out = {}
    for line in _run(path, "-S", "-W").splitlines():
        m = _SECTION.match(line)
        if m:
            out[int(m.group(1))] = {"name": m.group(2), "type": m.group(3),
                                    "addr": int(m.group(4), 16),
                                    "offset": int(m.group(5), 16),
                                    "size": int(m.group(6), 16)}
    return out


_TABLE = re.compile(r"^Symbol table '([^']+)' contains \d+ entries:")
_SYMBOL = re.compile(r"^\s*\d+:\s+([0-9a-f]+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s?(.*)$")


def symbols(path: str) -> dict[str, list[dict]]:
    """Table name ('.symtab', '.dynsym') -> [{'name', 'value', 'size', 'type',
    'bind', 'ndx'}]; ndx is an int, or 'UND', 'ABS'..."""
    out: dict[str, list[dict]] = {}
    table = None
    for line in _run(path, "-s", "-W").splitlines():
        m = _TABLE.match(line)
        if m:
            table = out.setdefault(m.group(1), [])
            continue
        m = _SYMBOL.match(line)
        if m and table is not None:
            ndx = m.group(6)
            table.append({"value": int(m.group(1), 16), "size": int(m.group(2), 0),
                          "type": m.group(3), "bind": m.group(4),
                          "ndx": int(ndx) if ndx.isdigit() else ndx,
                          "name": m.group(7)})
    return out


def metadata(path: str) -> dict:
    """The NT_AMDGPU_METADATA note as llvm-readelf --notes decodes it."""
    lines = _run(path, "--notes").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "AMDGPU Metadata:":
            body = []
            for text in lines[i + 1:]:
                if text.strip() == "...":
                    break
                if text.strip() != "Invalid AMDGPU Metadata":   # older verifiers
                    body.append(text)
            return parse_yaml("\n".join(body))
    raise ValueError(f"{path}: llvm-readelf shows no AMDGPU metadata")


def _scalar(text: str):
    if text.startswith("[") and text.endswith("]"):     # flow sequence: [], [ 1, 2 ]
        inner = text[1:-1].strip()
        return [_scalar(x.strip()) for x in inner.split(",")] if inner else []
    if text == "{}":
        return {}
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].encode().decode("unicode_escape")
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if re.fullmatch(r"0x[0-9a-fA-F]+", text):
        return int(text, 16)
    return text


_KEY = re.compile(r"^([^\s:'\"][^:]*):(?:\s+(.*))?$")


def parse_yaml(text: str):
    """Block-style YAML as LLVM's YAML writer prints it: mappings, sequences
    ("- " items, possibly starting a mapping on the same line), scalars."""
    lines: list[tuple[int, str]] = []
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body == "---":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while body == "-" or body.startswith("- "):
            lines.append((indent, "-"))
            rest = body[1:]
            indent += 1 + len(rest) - len(rest.lstrip(" "))
            body = rest.strip()
        if body:
            lines.append((indent, body))
    pos = 0

    def node(indent: int):
        nonlocal pos
        if lines[pos][1] == "-":
            seq = []
            while pos < len(lines) and lines[pos] == (indent, "-"):
                pos += 1
                seq.append(node(lines[pos][0]) if pos < len(lines) else None)
            return seq
        if not _KEY.match(lines[pos][1]):
            pos += 1
            return _scalar(lines[pos - 1][1])
        mapping = {}
        while pos < len(lines) and lines[pos][0] == indent and lines[pos][1] != "-":
            m = _KEY.match(lines[pos][1])
            if not m:
                raise ValueError(f"unexpected line in YAML: {lines[pos][1]!r}")
            pos += 1
            key, value = m.group(1).strip(), m.group(2)
            if value is not None and value.strip():
                mapping[key] = _scalar(value.strip())
            elif pos < len(lines) and (lines[pos][0] > indent or lines[pos] == (indent, "-")):
                mapping[key] = node(lines[pos][0])
            else:
                mapping[key] = None
        return mapping

    return node(lines[0][0]) if lines else None
