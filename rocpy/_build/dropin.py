"""The stub runtime linked again as drop-in ROCm libraries.

``rocpy._lib_stub`` is the stub for Python.  The same object files (compiled
once, by the cffi build) are linked here a second time as shared libraries
named like the real ones, so unchanged programs (``rocminfo``, hipcc-built
binaries, C and C++ programs) load them with ``LD_LIBRARY_PATH`` pointing at
their folder (``rocpy stub env|run|libdir``):

- ``libhsa-runtime64.so.1``: the HSA half (``hsa_*.c``), the shared core
  (``stub_*.c``) and the weak defaults of the HSA functions.  The core's
  functions that the other libraries call are exported under the private
  version node ``ROCPY_STUB_PRIVATE`` (no program links against them).
- ``libamdhip64.so.<major>``: the HIP half (``hip_*.c``), the weak defaults of
  the HIP functions; its run path is ``$ORIGIN``, so it finds this HSA library
  even without ``LD_LIBRARY_PATH``.
- ``libhiprtc.so.<major>`` where the installed ROCm splits hipRTC off (6.x),
  else hipRTC lives in the HIP library as in 5.x.

Exports are exactly the real library's: where the real library is installed
(and its major version is the headers'), each symbol the stub defines and the
real library exports gets the real library's version node (``hip_4.2`` ...
``hip_5.2``, ``ROCR_1``), with the real chain of node parents.  Without it,
every declared function goes in the headers' node (``hip_<major>.<minor>``,
``ROCR_1``).  The version scripts are generated at build time; nothing is
copied into the repository.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection

if TYPE_CHECKING:
    from .api import Api

PRIVATE_NODE = "ROCPY_STUB_PRIVATE"
#: the drop-in folder, next to ``_lib_stub``: rocpy/_stub_libs
FOLDER = "_stub_libs"


@dataclass
class Exports:
    """A library's exported symbols by version node and the nodes' parents (in order)."""

    symbols: dict[str, str] = field(default_factory=dict)     # name -> node
    nodes: list[tuple[str, str | None]] = field(default_factory=list)   # (node, parent)


def read_exports(path: str) -> Exports:
    """The defined dynamic symbols of ``path`` with their version nodes."""
    out = Exports()
    with open(path, "rb") as f:
        elf = ELFFile(f)
        names: dict[int, str] = {}
        for section in elf.iter_sections():
            if isinstance(section, GNUVerDefSection):
                for verdef, auxiter in section.iter_versions():
                    aux = [a.name for a in auxiter]
                    names[verdef["vd_ndx"]] = aux[0]
                    if not verdef["vd_flags"] & 1:      # VER_FLG_BASE: the soname
                        out.nodes.append((aux[0], aux[1] if len(aux) > 1 else None))
        versym = next((s for s in elf.iter_sections() if isinstance(s, GNUVerSymSection)), None)
        dynsym = elf.get_section_by_name(".dynsym")
        if not isinstance(dynsym, SymbolTableSection):
            return out
        for i, sym in enumerate(dynsym.iter_symbols()):
            if sym["st_shndx"] in ("SHN_UNDEF", "SHN_ABS") or not sym.name:   # ABS: the node names
                continue
            index = versym.get_symbol(i)["ndx"] if versym is not None else 0
            node = names.get(index if isinstance(index, int) else 0)
            if node and node not in (n for n, _ in out.nodes):
                continue                         # the base version: not a node of ours
            if node:
                out.symbols[sym.name] = node
    return out


def object_symbols(paths: list[str]) -> tuple[set[str], set[str]]:
    """(defined global symbols, undefined symbols) over the object files ``paths``."""
    defined: set[str] = set()
    undefined: set[str] = set()
    for path in paths:
        with open(path, "rb") as f:
            symtab = ELFFile(f).get_section_by_name(".symtab")
            if not isinstance(symtab, SymbolTableSection):
                continue
            for sym in symtab.iter_symbols():
                if not sym.name or sym["st_info"]["bind"] not in ("STB_GLOBAL", "STB_WEAK"):
                    continue
                (undefined if sym["st_shndx"] == "SHN_UNDEF" else defined).add(sym.name)
    return defined, undefined - defined


@dataclass
class Library:
    """One drop-in library: its file name, the stub sources it holds, its node for new names."""

    key: str                 # 'hsa', 'hip', 'hiprtc'
    soname: str
    default_node: str
    sources: list[str] = field(default_factory=list)


def header_version(macros: dict[str, str]) -> tuple[int, int]:
    """``HIP_VERSION_MAJOR/MINOR`` of the headers."""
    def number(name: str) -> int:
        m = re.match(r"\s*\(?\s*(\d+)", macros.get(name, "0"))
        return int(m.group(1)) if m else 0
    return number("HIP_VERSION_MAJOR"), number("HIP_VERSION_MINOR")


def libraries(version: tuple[int, int], split_hiprtc: bool) -> list[Library]:
    """The libraries for headers of HIP ``version``; hipRTC separate where ROCm splits it."""
    major, minor = version
    libs = [Library("hsa", "libhsa-runtime64.so.1", "ROCR_1"),
            Library("hip", f"libamdhip64.so.{major}", f"hip_{major}.{minor}")]
    if split_hiprtc:
        libs.append(Library("hiprtc", f"libhiprtc.so.{major}", f"hiprtc_{major}.{minor}"))
    return libs


def owner(source: str, split_hiprtc: bool) -> str:
    """Which library a stub source (or generated defaults file) goes into."""
    base = os.path.basename(source)
    if base.startswith("stub_defaults_"):          # stub_defaults_{hsa,hip,hiprtc}.c
        group = base[len("stub_defaults_"):-len(".c")]
        return "hip" if group == "hiprtc" and not split_hiprtc else group
    if base.startswith(("hsa_", "stub_")):
        return "hsa"
    if split_hiprtc and base == "hip_rtc.c":
        return "hiprtc"
    return "hip"


def function_group(name: str) -> str:
    """Which generated defaults file declares function ``name``."""
    if name.startswith("hsa_"):
        return "hsa"
    if name.startswith("hiprtc"):
        return "hiprtc"
    return "hip"


def real_exports(installed: dict[str, str], key: str, soname: str) -> Exports | None:
    """The installed real library's exports, if it is the same soname (same major)."""
    path = installed.get(key)
    if not path or not os.path.exists(path):
        return None
    real = read_exports(path)
    with open(path, "rb") as f:
        dynamic: Any = ELFFile(f).get_section_by_name(".dynamic")
        so = next((t.soname for t in dynamic.iter_tags() if t.entry.d_tag == "DT_SONAME"), None) \
            if dynamic else None
    return real if so == soname else None


def version_script(lib: Library, defined: set[str], declared: set[str], real: Exports | None,
                   private: set[str]) -> str:
    """The version script text of ``lib``.

    With the real library: every symbol it exports that the stub defines,
    under the real node.  Without: every declared function the stub defines,
    under ``lib.default_node``.  ``private`` (the core's functions other
    drop-in libraries call) goes under ``ROCPY_STUB_PRIVATE``.
    """
    by_node: dict[str, list[str]] = {}
    if real is not None:
        nodes = list(real.nodes)
        for name, node in real.symbols.items():
            if name in defined:
                by_node.setdefault(node, []).append(name)
    else:
        nodes = [(lib.default_node, None)]
        by_node[lib.default_node] = [n for n in declared if n in defined]
    text = []
    for node, parent in nodes:
        names = sorted(by_node.get(node, []))
        body = "".join(f"    {n};\n" for n in names)
        text.append(f"{node} {{\n  global:\n{body}}}{' ' + parent if parent else ''};\n"
                    if names else f"{node} {{}}{' ' + parent if parent else ''};\n")
    body = "".join(f"    {n};\n" for n in sorted(private))
    text.append(f"{PRIVATE_NODE} {{\n  global:\n{body}  local: *;\n}};\n" if private
                else f"{PRIVATE_NODE} {{ local: *; }};\n")
    return "".join(text)


def link(compiler: Any, objects: dict[str, str], out_dir: str, gen_dir: str, declared: set[str],
         installed: dict[str, str], version: tuple[int, int], extra_args: list[str]) -> list[str]:
    """Link the drop-in libraries into ``out_dir`` from ``objects`` (source -> object file).

    ``compiler`` is the build's (distutils) compiler; returns the paths written.
    """
    split = "hiprtc" in installed or version[0] >= 6
    libs = libraries(version, split)
    groups: dict[str, list[str]] = {lib.key: [] for lib in libs}
    for source, obj in sorted(objects.items()):
        groups[owner(source, split)].append(obj)
    symbols = {key: object_symbols(objs) for key, objs in groups.items()}
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for lib in libs:
        defined, _ = symbols[lib.key]
        # what the other libraries take from this one that is no API function
        wanted = set().union(*(symbols[k][1] for k in symbols if k != lib.key))
        real = real_exports(installed, lib.key, lib.soname)
        api_names = set(real.symbols) if real else declared
        private = {n for n in wanted & defined if n not in api_names}
        if lib.key == "hsa":   # the control surface, for C emulations (rocpy_stub.h)
            private |= {n for n in defined if n.startswith("rocpy_stub_")}
        script = os.path.join(gen_dir, f"dropin_{lib.key}.map")
        with open(script, "w") as f:
            f.write(version_script(lib, defined, declared, real, private))
        target = os.path.join(out_dir, lib.soname)
        deps = [] if lib.key == "hsa" else [os.path.join(out_dir, "libhsa-runtime64.so.1")]
        if lib.key == "hiprtc":
            deps.append(os.path.join(out_dir, libs[1].soname))
        # the other drop-in libraries by soname, found through $ORIGIN; the C
        # compiler itself, not distutils' linker line (Python's LDFLAGS add
        # the interpreter's run path)
        rpath = [] if lib.key == "hsa" else ["-Wl,-rpath,$ORIGIN", "-Wl,--enable-new-dtags"]
        command = ([compiler.compiler_so[0], "-shared", "-o", target] + groups[lib.key] + deps +
                   [f"-Wl,-soname,{lib.soname}", f"-Wl,--version-script={script}",
                    "-Wl,--no-undefined", "-pthread"] + rpath + extra_args)
        compiler.spawn(command)
        written.append(target)
        # the unversioned name too: bindings dlopen("libamdhip64.so") (hip-python does)
        link_name = os.path.join(out_dir, lib.soname.split(".so")[0] + ".so")
        if os.path.lexists(link_name):
            os.unlink(link_name)
        os.symlink(lib.soname, link_name)
    return written


def build(cmd: Any, api: Api) -> list[str]:
    """The build step (setup.py's build_ext, after the extensions): link the
    drop-in libraries from ``rocpy._lib_stub``'s objects next to it."""
    ext = next((e for e in cmd.extensions if e.name == "rocpy._lib_stub"), None)
    if ext is None or os.environ.get("ROCPY_STUB_SANITIZE"):
        return []          # sanitized objects need the sanitizer runtime preloaded: no drop-ins
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    stub_dir = os.path.join("rocpy", "_native", "stub")
    sources = [s for s in ext.sources
               if os.path.dirname(s) == stub_dir or os.path.basename(s).startswith("stub_defaults_")]
    objs = cmd.compiler.object_filenames(sources, output_dir=cmd.build_temp)
    objects = {s: o if os.path.isabs(o) else os.path.join(project, o) for s, o in zip(sources, objs)}
    out_dir = os.path.join(os.path.dirname(cmd.get_ext_fullpath(ext.name)), FOLDER)
    gen_dir = os.path.join(project, "build", "rocpy-generated")
    return link(cmd.compiler, objects, out_dir, gen_dir, set(api.library_functions()),
                api.install.libraries, header_version(api.macros), [])
