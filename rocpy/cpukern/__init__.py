"""HIP kernels compiled for the CPU, so that the stub runs a user's own kernels.

::

    from rocpy import cpukern
    cpu = cpukern.build(source)                  # c++ with rocpy's hip_cpu.h
    data = cpukern.build_combined(source, ["gfx90a"])   # hipcc code objects + CPU build
    mod = rocpy.hip.Module.load(data)            # the stub runs the CPU build;
                                                 # a ROCm runtime the gfx90a code object
    a, b = cpukern.compile_unit(src_a), cpukern.compile_unit(src_b)   # -fgpu-rdc
    linked = cpukern.link_units([a, b])          # one CPU build of both

On the stub, `rocpy.hip.Program` compiles this way too.  The header
(``rocpy/_native/cpukern/include/hip_cpu.h``) gives HIP's device names their
CPU meaning; docs/cpu-kernels.md describes what runs and how.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping

from ..codeobject.bundle import read_bundle
from ._bundle import BUNDLE_ID, carries_cpu_build, combine, cpu_build_of, write_bundle
from .._toolchain import COMPILE_TIMEOUT_S, find_hipcc
from ._rdc import UNIT_INFO_ID, compile_unit, is_unit, link_units, read_unit
from ._driver import (INCLUDE, CpuBuild, CpuCompileError, build, cache_dir, compiler, expression,
                      instantiations, scan)


def hipcc_code_object(source: str, target: str, name: str = "program.hip",
                      headers: Mapping[str, str] | None = None, options: Iterable[str] = (),
                      hipcc: str | None = None, name_expressions: Iterable[str] = ()) -> bytes:
    """The AMDGPU code object of ``source`` for ``target`` (``hipcc --genco``);
    ``name_expressions`` (``'scale<float>'``) are instantiated in it."""
    exe = hipcc_path(hipcc)
    with tempfile.TemporaryDirectory(prefix="rocpy-cpukern-gpu-") as tmp:
        base = os.path.basename(name) or "program.hip"
        src = os.path.join(tmp, base if base.endswith((".hip", ".cpp", ".cu")) else base + ".hip")
        with open(src, "w") as f:
            f.write(source + "\n" + instantiations(list(name_expressions)))
        for hname, text in (headers or {}).items():
            hpath = os.path.join(tmp, hname)
            os.makedirs(os.path.dirname(hpath), exist_ok=True)
            with open(hpath, "w") as f:
                f.write(text)
        out = os.path.join(tmp, "out.hsaco")
        cmd = [exe, "--genco", "-include", "hip/hip_runtime.h", *options,
               f"--offload-arch={target}", f"-I{tmp}", src, "-o", out]
        return run_genco(cmd, tmp, out, target, "hipcc")


def hipcc_path(hipcc: str | None = None) -> str:
    """``hipcc`` itself, or the one found (CpuCompileError when there is none)."""
    exe = hipcc or find_hipcc()
    if exe is None:
        raise CpuCompileError("no hipcc found (install hipcc, or set HIPCC or ROCM_PATH)")
    return exe


def run_genco(cmd: list[str], tmp: str, out: str, target: str, what: str) -> bytes:
    """Run a ``hipcc --genco`` command in ``tmp`` and return the code object it wrote to
    ``out``; CpuCompileError (``what`` failed, with the log) otherwise."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp,
                              env=dict(os.environ, HIP_PLATFORM="amd"), timeout=COMPILE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CpuCompileError(f"{what} failed for {target}: {exc}") from None
    log = (proc.stdout + proc.stderr).replace(tmp + os.sep, "")
    if proc.returncode != 0 or not os.path.exists(out):
        raise CpuCompileError(f"{what} failed for {target}:\n{log.strip()}", log)
    with open(out, "rb") as f:
        return gpu_code_object(f.read(), target)


def gpu_code_object(data: bytes, target: str) -> bytes:
    """The amdgcn ELF in ``data`` (itself, or the entry of the bundle hipcc --genco writes)."""
    if data[:4] == b"\x7fELF":
        return data
    _, entries = read_bundle(data)
    for e in entries:
        if e.target is not None and e.size:
            return data[e.offset:e.offset + e.size]
    raise CpuCompileError(f"no amdgcn code object for {target} in the compiler's output")


def build_combined(source: str, targets: Iterable[str], name: str = "program.hip",
                   headers: Mapping[str, str] | None = None, options: Iterable[str] = (),
                   hipcc: str | None = None, name_expressions: Iterable[str] = ()) -> bytes:
    """One file holding ``source``'s code objects for ``targets`` (hipcc) and its CPU build;
    ``name_expressions`` (``'scale<float>'``) add kernels to both: template instantiations.

    ``Module.load`` of it on the stub runs the CPU build; ROCm runtimes load the
    code object for their GPU and ignore the CPU entry (its kind is none they read).
    """
    if isinstance(targets, str):
        targets = [targets]
    targets = list(targets)
    if not targets:
        raise ValueError("targets: give at least one GPU target (e.g. 'gfx90a')")
    opts = [str(o) for o in options]
    exprs = [str(e) for e in name_expressions]
    cpu = build(source, name, dict(headers or {}), opts, exprs)
    gpu = {t: hipcc_code_object(source, t, name, headers, opts, hipcc, exprs) for t in targets}
    return combine(cpu.data, gpu)


@contextlib.contextmanager
def offer_to_stub(data: bytes) -> Iterator[bool]:
    """On the stub, offer the CPU build ``data`` (a combined file) carries while the block
    runs; yields whether it had one.

    Loaders that hand the stub only the chosen code object (HSA executables) load it
    inside the block: a code object equal to one of the file's GPU code objects then
    holds the build.  HIP modules pass the whole file and the stub finds it itself."""
    from .. import _backend
    backend = _backend.current()
    if backend.name != "stub" or not carries_cpu_build(data):
        yield False
        return
    offer = backend.lib.rocpy_stub_offer_cpu_build(backend.ffi.from_buffer(bytes(data)), len(data))
    try:
        yield offer != backend.ffi.NULL
    finally:
        backend.lib.rocpy_stub_release_cpu_build(offer)


__all__ = ["UNIT_INFO_ID", "compile_unit", "is_unit", "link_units", "read_unit", "offer_to_stub", "BUNDLE_ID", "carries_cpu_build", "CpuBuild", "CpuCompileError", "INCLUDE", "build", "build_combined",
           "cache_dir", "combine", "compiler", "cpu_build_of", "expression", "instantiations", "gpu_code_object", "hipcc_code_object", "scan",
           "write_bundle"]
