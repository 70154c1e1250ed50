"""Compile real kernels once per session for the code object tests.

Compilers and LLVM tools are found by probing, never by assuming one LLVM
version (``kernels.compile.find_llvm_tool``: the LLVM that ``hipcc`` uses
first, then ROCm's, then versioned names newest first).  Tests needing a tool
that is missing skip with the reason.
"""
from __future__ import annotations

import hashlib
import os
import re
import struct
import subprocess
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest

from kernels.compile import find_hipcc, find_llvm_tool, hipcc_llvm_version, llvm_tool_env

HIP_SOURCE = r"""
#include <hip/hip_runtime.h>
#include <cstdio>

struct Pair { int a; double b; char c; };

extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

extern "C" __global__ void scalars(char c, short s, int i, long l, float f, double d, bool b,
                                   long* out) {
  out[0] = c + s + i + l + (long)f + (long)d + b;
}

extern "C" __global__ void bystruct(Pair p, int* out) { out[0] = p.a + (int)p.b + p.c; }

extern "C" __global__ void dynlds(float* out, int n) {
  extern __shared__ float tile[];
  tile[threadIdx.x] = threadIdx.x * gridDim.y;
  __syncthreads();
  if (threadIdx.x < n) out[threadIdx.x] = tile[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void pf(int x) { printf("x=%d\n", x); }

__device__ int table[16];
"""

# OpenCL C for bare ELF code objects: every scalar width with type names,
# qualifiers, images and samplers; only builtins, so no device library is needed.
CL_SOURCE = r"""
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef struct { int a; double b; char c; } S;
kernel void clk(global const float* restrict a, global float* b, local float* tmp,
                constant int* c, S s, char ch, uchar uc, short sh, ushort us, int i, uint ui,
                long l, ulong ul, float f, double d, half h, float4 v4,
                read_only image2d_t img, sampler_t smp, volatile global int* vol) {
  uint lid = __builtin_amdgcn_workitem_id_x();
  tmp[lid] = a[0];
  __builtin_amdgcn_s_barrier();
  b[lid] = tmp[0] + c[0] + s.a + ch + uc + sh + us + i + ui + l + ul + f + d + (float)h + v4.x;
  vol[0] = 1;
}
kernel void wide(global int* o) {
  constant ushort* ip = (constant ushort*)__builtin_amdgcn_implicitarg_ptr();
  o[__builtin_amdgcn_workitem_id_x()] = ip[6] + ip[7];
}
"""

HIP_ARCHS = ("gfx90a", "gfx908", "gfx1030", "gfx1100", "gfx940")


@dataclass
class Toolchain:
    """Where the compilers and tools are, and why something is missing."""

    hipcc: Optional[str] = None
    clang: Optional[str] = None
    readelf: Optional[str] = None
    readobj: Optional[str] = None
    bundler: Optional[str] = None
    llvm_version: Optional[int] = None
    env: Dict[str, str] = field(default_factory=dict, repr=False)

    def require(self, *names: str) -> None:
        missing = [n for n in names if not getattr(self, n)]
        if missing:
            pytest.skip(f"no {', '.join(missing)} found (probed PATH, $ROCM_PATH/llvm/bin, "
                        "/opt/rocm/llvm/bin, versioned names)")


def _toolchain() -> Toolchain:
    tc = Toolchain()
    tc.hipcc = find_hipcc()
    tc.llvm_version = hipcc_llvm_version()
    tc.env = llvm_tool_env(tc.llvm_version)
    tc.clang = find_llvm_tool("clang", tc.llvm_version)
    tc.readelf = find_llvm_tool("llvm-readelf", tc.llvm_version)
    tc.readobj = find_llvm_tool("llvm-readobj", tc.llvm_version)
    tc.bundler = find_llvm_tool("clang-offload-bundler", tc.llvm_version)
    return tc


@dataclass
class Artifacts:
    """Compiled test inputs: name -> path; ``missing`` says why others are absent."""

    tools: Toolchain
    root: Path
    files: Dict[str, Path] = field(default_factory=dict)
    missing: Dict[str, str] = field(default_factory=dict)
    hip_archs: List[str] = field(default_factory=list)

    def get(self, name: str) -> Path:
        if name not in self.files:
            pytest.skip(f"{name} not built: {self.missing.get(name, 'no compiler')}")
        return self.files[name]

    def data(self, name: str) -> bytes:
        return self.get(name).read_bytes()


def _run(cmd: List[str], env: Dict[str, str]) -> Optional[str]:
    """Run a compiler; return None on success, else the end of its error output."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return str(exc)
    return None if proc.returncode == 0 else (proc.stderr or proc.stdout)[-400:]


@pytest.fixture(scope="session")
def toolchain() -> Toolchain:
    return _toolchain()


@pytest.fixture(scope="session")
def artifacts(toolchain: Toolchain, tmp_path_factory: pytest.TempPathFactory) -> Artifacts:
    """Compile every test input in parallel; skip only if no compiler exists at all."""
    tc = toolchain
    if not tc.hipcc and not tc.clang:
        pytest.skip("no AMDGPU compiler: neither hipcc nor clang found")
    root = tmp_path_factory.mktemp("codeobjects")
    (root / "k.hip").write_text(HIP_SOURCE)
    (root / "k.cl").write_text(CL_SOURCE)
    art = Artifacts(tc, root)
    jobs: Dict[str, List[str]] = {}
    hip = [tc.hipcc, "--genco", "-O2"] if tc.hipcc else None
    if hip:
        for arch in HIP_ARCHS:
            jobs[f"hip-{arch}"] = hip + [f"--offload-arch={arch}", str(root / "k.hip")]
        jobs["hip-v4"] = hip + ["--offload-arch=gfx90a", "-mcode-object-version=4",
                                str(root / "k.hip")]
        jobs["hip-v5"] = hip + ["--offload-arch=gfx90a", "-mcode-object-version=5",
                                "-fhip-kernel-arg-name", str(root / "k.hip")]
        jobs["hip-v5.s"] = jobs["hip-v5"] + ["-S"]
        jobs["hip-gfx1030.s"] = jobs["hip-gfx1030"] + ["-S"]
        jobs["hip-compressed"] = hip + ["--offload-arch=gfx90a", "--offload-compress",
                                        str(root / "k.hip")]
    if tc.clang:
        cl = [tc.clang, "-target", "amdgcn-amd-amdhsa", "-x", "cl", "-cl-std=CL2.0",
              "-cl-kernel-arg-info", "-nogpulib", str(root / "k.cl")]
        jobs["cl-gfx1100-v5"] = cl + ["-mcpu=gfx1100", "-mcode-object-version=5"]
        jobs["cl-gfx90a-v4"] = cl + ["-mcpu=gfx90a", "-mcode-object-version=4"]
        jobs["cl-gfx90a-xnack-v3"] = cl + ["-mcpu=gfx90a:xnack+", "-mcode-object-version=3"]
        jobs["cl-gfx1030-v3"] = cl + ["-mcpu=gfx1030", "-mcode-object-version=3"]
        jobs["cl-gfx900-v2"] = cl + ["-mcpu=gfx900", "-mcode-object-version=2"]
    for name in jobs:
        jobs[name] += ["-o", str(root / name)]

    def build(name: str) -> None:
        error = _run(jobs[name], tc.env)
        if error is None:
            art.files[name] = root / name
        else:
            art.missing[name] = error

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        list(pool.map(build, sorted(jobs)))
    art.hip_archs = [a for a in HIP_ARCHS if f"hip-{a}" in art.files]
    variants = [a for a in art.hip_archs if a != "gfx90a"]
    if hip and "hip-gfx90a" in art.files:
        variants += ["gfx90a:xnack-", "gfx90a:xnack+"]
    if hip and len(variants) >= 2:
        name = "hip-multi"
        error = _run(hip + [f"--offload-arch={a}" for a in variants] +
                     [str(root / "k.hip"), "-o", str(root / name)], tc.env)
        if error is None:
            art.files[name] = root / name
        else:
            art.missing[name] = error
    return art


class LLVM:
    """What LLVM's own tools say about a file, for comparison with rocpy's reading."""

    def __init__(self, tools: Toolchain) -> None:
        self.tools = tools

    def _out(self, tool: str, *args: str) -> str:
        self.tools.require(tool)
        proc = subprocess.run([getattr(self.tools, tool), *args], capture_output=True,
                              text=True, timeout=60, check=True, env=self.tools.env)
        return proc.stdout

    def metadata(self, path: Path) -> Any:
        """The AMDGPU metadata note as ``llvm-readelf --notes`` prints it (YAML), loaded."""
        yaml = pytest.importorskip("yaml")
        text = self._out("readelf", "--notes", str(path))
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip() == "---")
        end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == "...")
        loader = type("MetadataLoader", (yaml.SafeLoader,), {})
        # LLVM tags strings YAML would read as something else: `.name: !str n`.
        loader.add_constructor("!str", lambda ld, node: ld.construct_scalar(node))
        return yaml.load("\n".join(lines[start + 1:end]), Loader=loader)

    def symbols(self, path: Path) -> List[Tuple[Any, ...]]:
        """``.symtab`` rows of ``llvm-readelf -s``: (name, value, size, type, bind, vis, ndx)."""
        rows, current = [], None
        for line in self._out("readelf", "-s", "--wide", str(path)).splitlines():
            if line.startswith("Symbol table"):
                current = "'.symtab'" in line
                continue
            m = re.match(r"\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)"
                         r"\s*(\S*)$", line)
            if current and m and m.group(7):
                ndx = int(m.group(6)) if m.group(6).isdigit() else None
                rows.append((m.group(7), int(m.group(1), 16), int(m.group(2)), m.group(3),
                             m.group(4), m.group(5), ndx))
        return rows

    def header_flags(self, path: Path) -> Tuple[int, List[str]]:
        """(ABI version, e_flags names) from ``llvm-readobj -h``."""
        text = self._out("readobj", "-h", str(path))
        abi = int(re.search(r"ABIVersion: (\d+)", text).group(1))
        block = text[text.index("Flags ["):]
        block = block[:block.index("]")]
        return abi, re.findall(r"(EF_AMDGPU_\w+)", block)

    def bundle_ids(self, path: Path) -> List[str]:
        return self._out("bundler", "--list", "--type=o", f"--input={path}").split()

    def unbundle(self, path: Path, entry_id: str, out: Path) -> bytes:
        self._out("bundler", "--unbundle", "--type=o", f"--input={path}",
                  f"--targets={entry_id}", f"--output={out}")
        return out.read_bytes()


@pytest.fixture(scope="session")
def llvm(toolchain: Toolchain) -> LLVM:
    return LLVM(toolchain)


@pytest.fixture(scope="session")
def elf_path(artifacts: Artifacts, tmp_path_factory: pytest.TempPathFactory):
    """``elf_path(name, index=0)``: a file holding one bare ELF code object of an artifact."""
    from rocpy.codeobject import load
    out = tmp_path_factory.mktemp("elves")

    def get(name: str, index: int = 0) -> Path:
        f = load(artifacts.get(name))
        if f.format == "elf":
            return artifacts.get(name)
        path = out / f"{name}.{index}.elf"
        if not path.exists():
            path.write_bytes(f.code_object(index).data)
        return path
    return get


BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"


def _make_bundle(entries, align=16):
    """An uncompressed bundle of (entry ID, data) pairs, as clang-offload-bundler lays it out."""
    header = len(BUNDLE_MAGIC) + 8 + sum(24 + len(i) for i, _ in entries)
    offsets, pos = [], -(-header // align) * align
    for _, data in entries:
        offsets.append(pos)
        pos = -(-(pos + len(data)) // align) * align
    out = bytearray(BUNDLE_MAGIC + struct.pack("<Q", len(entries)))
    for (entry_id, data), off in zip(entries, offsets):
        out += struct.pack("<QQQ", off, len(data), len(entry_id)) + entry_id.encode()
    for (_, data), off in zip(entries, offsets):
        out += bytes(off - len(out)) + data
    return bytes(out)


def _make_ccob(bundle, version=3, method=1, size=None):
    """A compressed bundle (CCOB) of ``bundle``; ``size`` overrides the uncompressed size."""
    if method == 0:
        payload = zlib.compress(bundle)
    else:
        zstandard = pytest.importorskip("zstandard")
        payload = zstandard.ZstdCompressor().compress(bundle)
    usize = len(bundle) if size is None else size
    digest = int.from_bytes(hashlib.md5(bundle).digest()[:8], "little")
    head = b"CCOB" + struct.pack("<HH", version, method)
    if version == 1:
        return head + struct.pack("<IQ", usize, digest) + payload
    if version == 2:
        return head + struct.pack("<IIQ", 24 + len(payload), usize, digest) + payload
    return head + struct.pack("<QQQ", 32 + len(payload), usize, digest) + payload


@pytest.fixture(scope="session")
def make_bundle():
    """``make_bundle([(entry ID, data), ...])``: an uncompressed offload bundle."""
    return _make_bundle


@pytest.fixture(scope="session")
def make_ccob():
    """``make_ccob(bundle, version=3, method=1, size=None)``: a compressed (CCOB) bundle."""
    return _make_ccob
