"""Compile HIP kernel source for the host: scan, generate the kernel table, run c++.

The user's source is compiled as it is, after ``include/hip_cpu.h`` (which
gives HIP's device names their CPU meaning), followed by a table of its
``__global__`` kernels: the launch template in ``hip_cpu_device.h`` unpacks
a kernarg buffer by each kernel's parameter types, so no signature is parsed
here, only the kernels' names.  Objects are cached by a hash of everything
that goes into them under ``$XDG_CACHE_HOME/rocpy/cpukern`` (``~/.cache``).
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

from .._toolchain import COMPILE_TIMEOUT_S, find_cxx

_HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(os.path.dirname(_HERE), "_native", "cpukern", "include")
ABI_HEADER = os.path.join(os.path.dirname(_HERE), "_native", "cpukern")
FLAGS = ("-std=c++17", "-O2", "-fPIC", "-shared", "-pthread",
         "-Wno-unused-result")

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"')
_KERNEL = re.compile(r"__global__\b((?:[^;{}()]|\([^()]*\))*?)\bvoid\s+(\w+)\s*\(")
#: ``template __global__ void k<float>(float *);``: an explicit instantiation is a kernel
_INSTANTIATION = re.compile(r"\btemplate\s+__global__\s+void\s+(\w+\s*<[^;{}()]*>)\s*\(")
_TEMPLATE_BEFORE = re.compile(r"template\s*<[^;{}]*>\s*(?:extern\s+\"C\"\s*)?$")
_FIBERS = re.compile(r"\b(__syncthreads\w*|__syncwarp|__shfl\w*|__ballot\w*|__any\w*|__all\w*|"
                     r"__activemask)\b")
_DYNAMIC_SHARED = re.compile(r"extern\s+__shared__\s+(?:__align__\s*\(\s*\d+\s*\)\s*)?"
                             r"([\w:\s\*]+?)\s+(\w+)\s*\[\s*\]\s*;")
#: what the CPU build cannot provide, and why
_UNSUPPORTED = (
    (re.compile(r"\b__builtin_amdgcn_\w+"), "an AMDGPU built-in"),
    (re.compile(r"\b__builtin_nvvm_\w+"), "an NVVM built-in"),
    (re.compile(r"\b(?:asm|__asm__)\b\s*(?:volatile\b|__volatile__\b)?\s*\("), "inline assembly"),
    (re.compile(r"\b(?:tex[123]D\w*|texture\s*<|surf[123]D\w*|hipTextureObject_t|"
                r"hipSurfaceObject_t)"), "textures and surfaces"),
    (re.compile(r"\b__builtin_amdgcn|\b__ockl_\w+|\b__ocml_\w+"), "an AMD device library call"),
)


class CpuCompileError(RuntimeError):
    """The source cannot be built for the CPU; ``log`` holds the reason or the compiler's output."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log: str = log or message


@dataclass(frozen=True)
class CpuBuild:
    """A CPU build: the shared object's ``path`` and bytes, its kernels and, for each,
    whether its work-items run as fibers (else as a plain loop)."""

    path: str
    data: bytes
    kernels: tuple[str, ...]
    fibers: dict[str, bool]
    cached: bool


def _strip(source: str) -> str:
    return _STRINGS.sub('""', _COMMENTS.sub(" ", source))


def _line(source: str, pos: int) -> int:
    return source.count("\n", 0, pos) + 1


_FUNCTION = re.compile(r"\b(\w+)\s*\((?:[^;{}()]|\([^()]*\))*\)\s*(?:const\s*)?\{")
_WORD = re.compile(r"\b\w+\b")
_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)((?:[^\n]|\\\n)*)", re.M)


def _bodies(code: str) -> dict[str, str]:
    """Function name -> the text of its bodies (overloads joined), by brace matching."""
    out: dict[str, str] = {}
    for m in _FUNCTION.finditer(code):
        depth, i = 1, m.end()
        while i < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            i += 1
        out[m.group(1)] = out.get(m.group(1), "") + code[m.end():i]
    for m in _MACRO.finditer(code):     # a macro is a "function" its users call
        out[m.group(1)] = out.get(m.group(1), "") + m.group(2)
    return out


def _needs_fibers(code: str, kernels: list[str]) -> dict[str, bool]:
    """Which kernels reach a barrier or warp op, through the functions and macros they
    name (by name: an overload, a template or an #if branch with one marks them all)."""
    bodies = _bodies(code)
    sync = {f for f, b in bodies.items() if _FIBERS.search(b)}
    changed = True
    while changed:
        changed = False
        for f, b in bodies.items():
            if f not in sync and any(w.group(0) in sync for w in _WORD.finditer(b)):
                sync.add(f)
                changed = True
    return {k: k in sync for k in kernels}


def scan(source: str, name: str = "program.hip") -> tuple[tuple[str, ...], dict[str, bool]]:
    """The kernels of ``source`` and, for each, whether it needs fibers (a barrier or warp
    op); raises `CpuCompileError` naming what the CPU build cannot provide."""
    code = _strip(source)
    for pattern, what in _UNSUPPORTED:
        m = pattern.search(code)
        if m:
            raise CpuCompileError(f"{name}:{_line(code, m.start())}: {m.group(0).strip()} is "
                                  f"{what}, which the rocpy CPU build cannot provide")
    kernels = []
    for m in _KERNEL.finditer(code):
        if _TEMPLATE_BEFORE.search(code[:m.start()]):
            continue   # a template kernel: only its instantiations are kernels (not listed)
        if m.group(2) not in kernels:
            kernels.append(m.group(2))
    return tuple(kernels), _needs_fibers(code, kernels)


def expression(name_expression: str) -> str:
    """A name expression (``'scale<float>'``, ``'&scale<float>'``) as the kernel table and
    hiprtcGetLoweredName know it: without the ``&`` and the outer blanks."""
    return name_expression.strip().lstrip("&").strip()


def instantiations(name_expressions: tuple[str, ...] | list[str]) -> str:
    """Source that makes each name expression's kernel exist (a template's instantiation):
    a host pointer to it, which hipcc's device pass also emits (as hipRTC's own does)."""
    return "".join(f"static const void *__rocpy_name_expression_{i} __attribute__((used)) = "
                   f"reinterpret_cast<const void *>(&{expression(e)});\n"
                   for i, e in enumerate(name_expressions))


def _fibers_of(expr: str, code: str, cache: dict[str, bool]) -> bool:
    base = re.match(r"\s*(?:::)?((?:\w+::)*)(\w+)", expr)
    ident = base.group(2) if base else expr
    if ident not in cache:
        cache.update(_needs_fibers(code, [ident]))
    return cache[ident]


def generate(source: str, name: str, kernels: tuple[str, ...], fibers: dict[str, bool],
             name_expressions: tuple[str, ...] = (), entry: str | None = None) -> str:
    """The translation unit: the header, the source, the kernel table (the kernels
    found, then one row per name expression: a template kernel's instantiation).

    ``entry``: a separately compiled unit (``-fgpu-rdc``, `rocpy.cpukern.compile_unit`)
    exports its table under this name instead of the build's two entry points,
    which the link (`rocpy.cpukern.link_units`) defines once over every unit."""
    body = _DYNAMIC_SHARED.sub(lambda m: f"{m.group(1)} *{m.group(2)} = "
                               f"({m.group(1)} *)::rocpy_cpu::dynamic_shared();", source)
    rows = "".join(f"    ROCPY_CPU_KERNEL({k}, {'true' if fibers[k] else 'false'}),\n"
                   for k in kernels)
    code, cache = _strip(source), dict(fibers)
    for e in dict.fromkeys(expression(x) for x in name_expressions):
        if e in kernels:
            continue
        f = "true" if _fibers_of(e, code, cache) else "false"
        quoted_e = e.replace("\\", "\\\\").replace('"', '\\"')
        rows += (f'    {{"{quoted_e}", (const void *)&{e}, [](rocpy_cpukern_launch_t *L) '
                 f"{{ return ::rocpy_cpu::launcher<&{e}>::run(L, {f}); }}}},\n")
    count = rows.count("\n")
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return (f'#include "hip_cpu.h"\n#line 1 "{quoted}"\n{body}\n'
            "#line 1 \"<rocpy cpukern table>\"\n"
            "static const rocpy_cpukern_kernel_t rocpy_cpukern_table[] = {\n"
            f"{rows}    {{nullptr, nullptr, nullptr}}\n}};\n"
            + (f'extern "C" const rocpy_cpukern_kernel_t *{entry}(size_t *n) '
               f"{{\n    *n = {count};\n    return rocpy_cpukern_table;\n}}\n" if entry else
            'extern "C" __attribute__((visibility("default"))) const rocpy_cpukern_kernel_t *\n'
            "rocpy_cpukern_kernels(size_t *n) {\n"
            f"    *n = {count};\n    return rocpy_cpukern_table;\n}}\n"
            'extern "C" __attribute__((visibility("default"))) int rocpy_cpukern_abi(void) '
            "{ return ROCPY_CPUKERN_ABI; }\n"))


def compiler() -> str:
    """The host C++ compiler (`rocpy._toolchain.find_cxx`); `CpuCompileError` if none."""
    cxx = find_cxx()
    if cxx is None:
        raise CpuCompileError("no host C++ compiler found (install g++, or set ROCPY_CPUKERN_CXX)")
    return cxx


def cache_dir() -> str:
    """Where CPU builds are cached: ``$XDG_CACHE_HOME/rocpy/cpukern`` (default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "rocpy", "cpukern")


def _header_digest() -> bytes:
    h = hashlib.sha256()
    for d in (INCLUDE, ABI_HEADER):
        for f in sorted(os.listdir(d)):
            p = os.path.join(d, f)
            if f.endswith(".h") and os.path.isfile(p):
                with open(p, "rb") as fh:
                    h.update(f.encode() + b"\0" + fh.read())
    return h.digest()


def build(source: str, name: str = "program.hip", headers: dict[str, str] | None = None,
          options: tuple[str, ...] | list[str] = (),
          name_expressions: tuple[str, ...] | list[str] = ()) -> CpuBuild:
    """Compile ``source`` (HIP device code) into a CPU build; see the module docstring.

    ``headers`` maps include names to text (as `rocpy.hip.Program`); ``options``
    are passed on to the compiler where they mean something to it (``-D``, ``-I``,
    ``-U``, ``-O``), others (``--offload-arch`` and the like) are dropped.
    ``name_expressions`` (``'scale<float>'``) add kernels: template instantiations.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be str, not {type(source).__name__}")
    kernels, fibers = scan(source, name)
    unit = generate(source, name, kernels, fibers, _expressions(source, name_expressions))
    out, cached = compile_cached(unit, name, headers, options, FLAGS, ".so")
    with open(out, "rb") as f:
        return CpuBuild(out, f.read(), kernels, fibers, cached)


def _expressions(source: str, name_expressions: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(str(e) for e in name_expressions) + tuple(
        m.group(1) for m in _INSTANTIATION.finditer(_strip(source)))


def compile_cached(unit: str, name: str, headers: dict[str, str] | None,
                   options: tuple[str, ...] | list[str], flags: tuple[str, ...],
                   suffix: str) -> tuple[str, bool]:
    """Compile the C++ ``unit`` with ``flags`` (and the ``options`` the compiler takes)
    into the cache; the output's path and whether it was cached already."""
    cxx = compiler()
    opts = [o for o in options if o.startswith(("-D", "-U", "-I", "-O", "-std="))]
    key = hashlib.sha256()
    for part in (unit, cxx, " ".join(flags), " ".join(opts), repr(sorted((headers or {}).items()))):
        key.update(part.encode() + b"\0")
    key.update(_header_digest())
    digest = key.hexdigest()[:32]
    out_dir = cache_dir()
    out = os.path.join(out_dir, f"{digest}{suffix}")
    if os.path.exists(out):
        return out, True
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rocpy-cpukern-") as tmp:
        for hname, text in (headers or {}).items():
            hpath = os.path.join(tmp, hname)
            os.makedirs(os.path.dirname(hpath), exist_ok=True)
            with open(hpath, "w") as f:
                f.write(text)
        src = os.path.join(tmp, "unit.cpp")
        with open(src, "w") as f:
            f.write(unit)
        tmp_out = os.path.join(tmp, "unit" + suffix)
        run_cxx([cxx, *flags, *opts, f"-I{tmp}", f"-I{INCLUDE}", f"-I{ABI_HEADER}", src,
                 "-o", tmp_out], tmp, f"the CPU build of {name}")
        os.replace(tmp_out, out + f".{os.getpid()}")
        os.replace(out + f".{os.getpid()}", out)
    return out, False


def run_cxx(cmd: list[str], cwd: str, what: str) -> None:
    """Run the compiler; `CpuCompileError` with its output (``cwd`` left out of it) if it fails."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd,
                              timeout=COMPILE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CpuCompileError(f"{what} failed: {cmd[0]}: {exc}") from None
    log = (proc.stdout + proc.stderr).replace(cwd + os.sep, "")
    if proc.returncode != 0:
        raise CpuCompileError(f"{what} failed:\n{log.strip()}", log)
