"""Run the C preprocessor over the ROCm headers and split the result by file.

The output keeps ``#define`` lines (``-dD``) and line markers, so every
declaration and every macro can be traced back to the header it came from;
only the ROCm headers' own content (files under ``hsa/`` or ``hip/`` of the
include directory) is kept, so nothing of libc leaks into the declarations.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field

_LINE_MARKER = re.compile(r'^# (\d+) "([^"]*)"')


@dataclass
class Preprocessed:
    """Preprocessed ROCm declarations and macros."""

    text: str                               # declarations, ROCm files only
    # 1-based lines of ``text`` that come from a types-only directory (CUDA's
    # headers on the nvidia platform: their types are needed, their functions not)
    types_only_lines: set[int] = field(default_factory=set)
    macros: dict[str, str] = field(default_factory=dict)   # object-like
    macro_files: dict[str, str] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)


def compiler() -> str:
    """The C compiler used for preprocessing and checks (``$CC`` or cc/gcc/clang)."""
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name.split()[0]):
            return name
    raise RuntimeError("no C compiler found (set CC)")


def wrapper_source(headers: list[str]) -> str:
    return "".join(f"#include <{h}>\n" for h in headers)


def run_cpp(headers: list[str], include_dirs: list[str], defines: list[str]) -> str:
    """The raw ``cc -E -dD`` output for a file including ``headers``."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "rocpy_headers.c")
        with open(src, "w") as f:
            f.write(wrapper_source(headers))
        cmd = [*compiler().split(), "-E", "-dD", "-x", "c", "-std=gnu11"]
        cmd += [f"-D{d}" for d in defines]
        cmd += [f"-I{d}" for d in include_dirs]
        cmd.append(src)
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"preprocessing the ROCm headers failed:\n{res.stderr}")
        return res.stdout


def is_rocm_file(path: str, include_dirs: list[str]) -> bool:
    """True for a header of the ROCm tree itself (``<inc>/hsa/*``, ``<inc>/hip/*``)."""
    real = os.path.realpath(path)
    for inc in include_dirs:
        for sub in ("hsa", "hip"):
            root = os.path.realpath(os.path.join(inc, sub)) + os.sep
            if real.startswith(root):
                return True
    return False


def _under(path: str, dirs: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(d) + os.sep) for d in dirs)


def preprocess(headers: list[str], include_dirs: list[str], defines: list[str],
               types_only_dirs: Sequence[str] = ()) -> Preprocessed:
    """Preprocess ``headers`` and keep what the ROCm headers themselves declare.

    Files under ``types_only_dirs`` are kept too, marked so that only their
    types are declared (the nvidia platform's HIP types are CUDA's).
    """
    raw = run_cpp(headers, include_dirs + list(types_only_dirs), defines)
    keep_cache: dict[str, tuple[bool, bool]] = {}
    out: list[str] = []
    result = Preprocessed(text="")
    current, keep, types_only = "", False, False
    for line in raw.splitlines():
        marker = _LINE_MARKER.match(line)
        if marker:
            current = marker.group(2)
            if current not in keep_cache:
                rocm = is_rocm_file(current, include_dirs)
                extra = not rocm and _under(current, list(types_only_dirs))
                keep_cache[current] = (rocm or extra, extra)
            keep, types_only = keep_cache[current]
            if keep:
                result.files.add(current)
            out.append("")
            continue
        if not keep:
            continue
        if types_only:
            result.types_only_lines.add(len(out) + 1)
            if line.startswith("#"):
                continue
        if line.startswith("#define "):
            _record_macro(result, line, current)
            continue
        if line.startswith("#undef "):
            name = line.split()[1]
            result.macros.pop(name, None)
            continue
        if line.startswith("#"):
            continue
        out.append(line)
    result.text = "\n".join(out)
    return result


_DEFINE = re.compile(r"#define\s+([A-Za-z_]\w*)(\(?)\s*(.*)$")


def _record_macro(result: Preprocessed, line: str, path: str) -> None:
    m = _DEFINE.match(line)
    if not m or m.group(2):          # function-like macros are not constants
        return
    name, body = m.group(1), m.group(3).strip()
    if body:
        result.macros[name] = body
        result.macro_files[name] = path


def _is_gcc() -> bool:
    out = subprocess.run([*compiler().split(), "--version"], capture_output=True, text=True)
    return "Free Software Foundation" in out.stdout and "clang" not in out.stdout


def failing_lines(source: str, include_dirs: list[str], defines: list[str]) -> set[int]:
    """The 1-based lines of C ``source`` the compiler reports an error on."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rocpy_check.c")
        with open(path, "w") as f:
            f.write(source)
        cmd = [*compiler().split(), "-fsyntax-only", "-std=gnu11", "-w", "-x", "c"]
        if _is_gcc():
            # report errors at the expansion point (our line), not in the header
            cmd += ["-fmax-errors=0", "-ftrack-macro-expansion=0"]
        cmd += [f"-D{d}" for d in defines] + [f"-I{d}" for d in include_dirs]
        res = subprocess.run(cmd + [path], capture_output=True, text=True)
        # with -w only errors are reported; an error inside a macro expansion is
        # placed in the header, and our line shows up as "in expansion of", so
        # every line of ours the diagnostics mention failed
        return {int(m.group(1)) for m in
                re.finditer(re.escape(path) + r":(\d+):\d+:", res.stderr)}
