"""Separate compilation for the CPU build: the stub's "bitcode" and its linker.

What hipRTC makes of a program compiled with ``-fgpu-rdc`` (relocatable device
code) is LLVM bitcode, which hiprtcLinkComplete links with other bitcode into
one code object.  The stub's counterpart is a *unit*: the program compiled by
the host C++ compiler into a relocatable object (``c++ -c``), so that its
``__device__`` functions and variables keep external linkage and a kernel in
one unit may call a function that another unit defines.  A unit is an offload
bundle (the format of hipcc's bundled bitcode) of three entries:

* ``host-x86_64-unknown-linux-gnu-`` (empty, as hipcc writes it),
* `UNIT_INFO_ID`: JSON ``{"format": 1, "name", "entry", "kernels"}``; ``entry``
  is the C symbol that returns the unit's kernel table (``generate(entry=)``),
* `UNIT_OBJECT_ID`: the ELF relocatable object.

The information also keeps the unit's source, headers, options and name
expressions: the GPU half of the link compiles them again.

`link_units` compiles one more translation unit that defines the build's entry
points (``rocpy_cpukern_kernels`` over every unit's table, ``rocpy_cpukern_abi``)
and links it with the units' objects into one shared object: the CPU build.
Undefined or duplicate symbols fail the link, as they fail a real one, with the
linker's output.  For each GPU target it also links the units' sources with
``hipcc --genco -fgpu-rdc`` (the code object the stub reads kernel metadata
from, and what a ROCm runtime would run), and returns one combined file
(`combine`), which ``hipModuleLoadData`` loads.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

from ..codeobject.bundle import read_bundle
from ._bundle import combine, write_bundle
from ._driver import (ABI_HEADER, FLAGS, INCLUDE, CpuCompileError, _expressions, compile_cached,
                      compiler, generate, instantiations, run_cxx, scan)

#: must equal STUB_RDC_INFO_ID in rocpy/_native/stub/hip_rtc_linker.c
UNIT_INFO_ID = "host-x86_64-unknown-linux-gnu-rocpyrdcinfo"
UNIT_OBJECT_ID = "host-x86_64-unknown-linux-gnu-rocpyrdc"
UNIT_FORMAT = 1
_OBJECT_FLAGS = tuple(f for f in FLAGS if f != "-shared") + ("-c",)


def compile_unit(source: str, name: str = "program.hip", headers: Mapping[str, str] | None = None,
                 options: Iterable[str] = (), name_expressions: Iterable[str] = ()) -> bytes:
    """``source`` compiled for separate linking (``-fgpu-rdc``): a unit (module docstring).

    Raises `CpuCompileError` as `build` does: the source is compiled here, so
    errors in it surface at compile time, as hipRTC's do."""
    if not isinstance(source, str):
        raise TypeError(f"source must be str, not {type(source).__name__}")
    kernels, fibers = scan(source, name)
    exprs = _expressions(source, [str(e) for e in name_expressions])
    # the entry names the unit's content, so two different units never clash
    probe = generate(source, name, kernels, fibers, exprs, entry="rocpy_cpukern_unit")
    entry = "rocpy_cpukern_unit_" + hashlib.sha256(probe.encode()).hexdigest()[:24]
    unit = generate(source, name, kernels, fibers, exprs, entry=entry)
    path, _ = compile_cached(unit, name, dict(headers or {}), [str(o) for o in options],
                             _OBJECT_FLAGS, ".o")
    with open(path, "rb") as f:
        obj = f.read()
    info = json.dumps({"format": UNIT_FORMAT, "name": name, "entry": entry,
                       "kernels": list(kernels), "source": source,
                       "headers": dict(headers or {}), "options": [str(o) for o in options],
                       "name_expressions": list(exprs)}).encode()
    return write_bundle([("host-x86_64-unknown-linux-gnu-", b""), (UNIT_INFO_ID, info),
                         (UNIT_OBJECT_ID, obj)])


def is_unit(data: bytes) -> bool:
    """Whether ``data`` is a unit `compile_unit` wrote."""
    try:
        read_unit(data)
    except CpuCompileError:
        return False
    return True


def read_unit(data: bytes) -> tuple[dict[str, Any], bytes]:
    """A unit's information and object; `CpuCompileError` naming what it is not."""
    try:
        blob, entries = read_bundle(bytes(data))
    except Exception:
        raise CpuCompileError("not a rocpy CPU unit (an offload bundle from "
                              "'rocpy cpukern build --rdc')") from None
    found = {e.id: bytes(blob[e.offset:e.offset + e.size]) for e in entries}
    if UNIT_INFO_ID not in found or UNIT_OBJECT_ID not in found:
        kinds = ", ".join(sorted(found)) or "none"
        raise CpuCompileError(f"not a rocpy CPU unit: its bundle entries are {kinds} (LLVM "
                              "bitcode from a compiler is one the stub cannot link)")
    try:
        info = json.loads(found[UNIT_INFO_ID])
    except ValueError:
        raise CpuCompileError("a rocpy CPU unit with unreadable information") from None
    if not isinstance(info, dict) or info.get("format") != UNIT_FORMAT or \
            not isinstance(info.get("entry"), str) or not info["entry"].isidentifier() or \
            not isinstance(info.get("source"), str):
        raise CpuCompileError(f"a rocpy CPU unit of another format ({info!r:.80})")
    return info, found[UNIT_OBJECT_ID]


def _glue(entries: list[str]) -> str:
    decls = "".join(f'extern "C" const rocpy_cpukern_kernel_t *{e}(size_t *n);\n' for e in entries)
    calls = "".join(f"        add({e});\n" for e in entries)
    return ('#include <vector>\n#include "rocpy_cpukern.h"\n' + decls +
            "static const std::vector<rocpy_cpukern_kernel_t> &rocpy_cpukern_all() {\n"
            "    static const std::vector<rocpy_cpukern_kernel_t> all = [] {\n"
            "        std::vector<rocpy_cpukern_kernel_t> v;\n"
            "        auto add = [&v](rocpy_cpukern_kernels_fn f) {\n"
            "            size_t n = 0;\n"
            "            const rocpy_cpukern_kernel_t *t = f(&n);\n"
            "            v.insert(v.end(), t, t + n);\n"
            "        };\n" + calls +
            "        v.push_back({nullptr, nullptr, nullptr});\n"
            "        return v;\n    }();\n    return all;\n}\n"
            'extern "C" __attribute__((visibility("default"))) const rocpy_cpukern_kernel_t *\n'
            "rocpy_cpukern_kernels(size_t *n) {\n"
            "    *n = rocpy_cpukern_all().size() - 1;\n"
            "    return rocpy_cpukern_all().data();\n}\n"
            'extern "C" __attribute__((visibility("default"))) int rocpy_cpukern_abi(void) '
            "{ return ROCPY_CPUKERN_ABI; }\n")


def hipcc_linked_code_object(parts: list[dict[str, Any]], target: str,
                             hipcc: str | None = None) -> bytes:
    """The AMDGPU code object of the units' sources compiled and linked together
    (``hipcc --genco -fgpu-rdc``), each source in its own folder with its headers;
    the options of every unit apply to all (one compiler run)."""
    from . import hipcc_path, run_genco
    exe = hipcc_path(hipcc)
    with tempfile.TemporaryDirectory(prefix="rocpy-cpukern-link-gpu-") as tmp:
        srcs: list[str] = []
        opts: list[str] = []
        for i, info in enumerate(parts):
            d = os.path.join(tmp, str(i))
            base = os.path.basename(str(info["name"])) or "program.hip"
            src = os.path.join(d, base if base.endswith((".hip", ".cpp", ".cu")) else base + ".hip")
            exprs = list(info.get("name_expressions") or [])
            files = {src: str(info["source"]) + "\n" + instantiations(exprs)}
            headers = dict(info.get("headers") or {})
            files.update({os.path.join(d, h): str(t) for h, t in headers.items()})
            for path, text in files.items():
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            srcs.append(src)
            opts += [str(o) for o in info.get("options") or []
                     if str(o).startswith(("-D", "-U", "-I", "-O", "-std=")) and str(o) not in opts]
        out = os.path.join(tmp, "linked.hsaco")
        cmd = [exe, "--genco", "-fgpu-rdc", "-include", "hip/hip_runtime.h", *opts,
               f"--offload-arch={target}", *srcs, "-o", out]
        return run_genco(cmd, tmp, out, target, "hipcc -fgpu-rdc")


def link_units(units: Iterable[bytes], name: str = "linked", targets: Iterable[str] = (),
               hipcc: str | None = None) -> bytes:
    """The ``units`` linked together: one file (`combine`) of the CPU build and, for
    each of ``targets``, the GPU code object of their sources (`hipcc_linked_code_object`:
    the stub reads its kernels' metadata from it, and a ROCm runtime runs it)."""
    parts = [read_unit(u) for u in units]
    if not parts:
        raise CpuCompileError(f"{name}: nothing to link (no inputs)")
    if isinstance(targets, str):
        targets = [targets]
    cxx = compiler()
    with tempfile.TemporaryDirectory(prefix="rocpy-cpukern-link-") as tmp:
        objs = []
        for i, (info, obj) in enumerate(parts):
            p = os.path.join(tmp, f"{i}-{os.path.basename(str(info.get('name')))}.o")
            with open(p, "wb") as f:
                f.write(obj)
            objs.append(p)
        glue = os.path.join(tmp, "link.cpp")
        with open(glue, "w") as f:
            f.write(_glue([str(info["entry"]) for info, _ in parts]))
        out = os.path.join(tmp, "linked.so")
        # -z defs: an undefined symbol fails the link, as it fails hipRTC's
        run_cxx([cxx, *FLAGS, "-Wl,-z,defs", f"-I{INCLUDE}", f"-I{ABI_HEADER}", glue, *objs,
                 "-o", out], tmp, f"the link of {name}")
        with open(out, "rb") as f:
            cpu = f.read()
    infos = [info for info, _ in parts]
    return combine(cpu, {t: hipcc_linked_code_object(infos, t, hipcc) for t in targets})


__all__ = ["UNIT_INFO_ID", "UNIT_OBJECT_ID", "compile_unit", "is_unit", "link_units", "read_unit"]
