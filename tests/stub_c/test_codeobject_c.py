"""The stub's C reader of code objects (rocpy/_native/stub/stub_codeobject*.c,
stub_co_*.c), built alone with ASan and UBSan into tests/stub_c/
test_codeobject.c, against what llvm-readelf prints for the same files.

Kernels are compiled at test time (hipcc --genco offload bundles: one and
several targets, code object v3/v4/v5; clang + ld.lld bare ELF from OpenCL).
Then target matching, bundle selection, and bad input: truncations, bad
headers and tables, crafted metadata notes, byte flips and random mutations,
each giving its status with no sanitizer report.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import struct
import subprocess

import pytest
from kernels import readelf
from kernels.compile import compile_cl, compile_hip, find_hipcc, find_llvm_tool

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUB = os.path.join(ROOT, "rocpy", "_native", "stub")
READER_SOURCES = sorted([os.path.join(STUB, "stub_codeobject.c")] +
                        glob.glob(os.path.join(STUB, "stub_co_*.c")))
SANITIZER_ENV = {
    "ASAN_OPTIONS": "detect_leaks=1:halt_on_error=1:abort_on_error=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
}
MI200 = "gfx90a:sramecc+:xnack-"
MULTI = ("gfx908", "gfx90a", "gfx1030")
NAME_LEN = 256
U32_FIELDS = ("kernarg_segment_size", "kernarg_segment_align", "group_segment_fixed_size",
              "private_segment_fixed_size", "wavefront_size", "sgpr_count", "vgpr_count",
              "max_flat_workgroup_size")
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
HOST_ID = "host-x86_64-unknown-linux"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")


# ---- the driver --------------------------------------------------------------

class Driver:
    def __init__(self, path: str, tmp: str):
        self.path, self.tmp, self.count = path, tmp, 0

    def run(self, *args: str, timeout: float = 120) -> str:
        env = dict(os.environ, **SANITIZER_ENV)
        r = subprocess.run([self.path, *args], capture_output=True, text=True, env=env, check=False,
                           timeout=timeout)
        report = r.stderr + r.stdout
        assert r.returncode == 0 and "Sanitizer" not in report and "runtime error" not in report, \
            f"{' '.join(args)}: rc={r.returncode}\n{r.stderr[-6000:]}"
        return r.stdout

    def dump(self, path: str, device: str | None = None, elf_out: str | None = None) -> dict:
        args = ["dump", path]
        if device:
            args += ["--device", device]
        if elf_out:
            args += ["--write-elf", elf_out]
        return json.loads(self.run(*args))

    def parse(self, data: bytes, device: str | None = None) -> dict:
        """Dump of a code object given as bytes."""
        self.count += 1
        path = os.path.join(self.tmp, f"input-{self.count}.bin")
        with open(path, "wb") as f:
            f.write(data)
        return self.dump(path, device)

    def status(self, data: bytes, device: str | None = None) -> str:
        return self.parse(data, device)["status"]

    def matches(self, pairs: list[tuple[str, str]]) -> list[bool]:
        return json.loads(self.run("match", *[s for pair in pairs for s in pair]))

    def robust(self, path: str, device: str | None = None, rng: tuple[int, int] | None = None,
               seconds: float = 2.0, iterations: int = 20000) -> dict:
        args = ["robust", path, "--seconds", str(seconds), "--iterations", str(iterations)]
        if device:
            args += ["--device", device]
        if rng:
            args += ["--range", str(rng[0]), str(rng[1])]
        return json.loads(self.run(*args, timeout=600))

    def robust_note(self, desc: bytes, seconds: float = 2.0, iterations: int = 20000) -> dict:
        path = os.path.join(self.tmp, "note.msgpack")
        with open(path, "wb") as f:
            f.write(desc)
        return json.loads(self.run("robust-note", path, "--seconds", str(seconds),
                                   "--iterations", str(iterations), timeout=600))


@pytest.fixture(scope="session")
def tco(tmp_path_factory) -> Driver:
    tmp = str(tmp_path_factory.mktemp("stub_c"))
    exe = os.path.join(tmp, "test_codeobject")
    cmd = ["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O1", "-g",
           "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
           "-fno-omit-frame-pointer", "-I", STUB,
           os.path.join(HERE, "test_codeobject.c"), *READER_SOURCES, "-o", exe]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    return Driver(exe, tmp)


@pytest.fixture(scope="session")
def need_readelf():
    if readelf.find_readelf() is None:
        pytest.skip("llvm-readelf is not installed")


@pytest.fixture(scope="session")
def bare_elf(kernel_cache):
    """compile_cl for tests/kernels/scale.cl; skips without clang/ld.lld."""
    if find_llvm_tool("clang") is None or find_llvm_tool("ld.lld") is None:
        pytest.skip("clang and ld.lld are needed for bare ELF code objects")
    return lambda target="gfx90a": compile_cl("scale", kernel_cache, target)


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


# ---- bundles, built and read here ------------------------------------------------

def bundle_entries(data: bytes) -> list[tuple[str, bytes]]:
    assert data.startswith(BUNDLE_MAGIC)
    (count,) = struct.unpack_from("<Q", data, 24)
    pos, out = 32, []
    for _ in range(count):
        off, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        out.append((data[pos:pos + id_len].decode(), data[off:off + size]))
        pos += id_len
    return out


def bundle_entry_offsets(data: bytes) -> list[tuple[str, int, int]]:
    (count,) = struct.unpack_from("<Q", data, 24)
    pos, out = 32, []
    for _ in range(count):
        off, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        out.append((data[pos:pos + id_len].decode(), off, size))
        pos += id_len
    return out


def make_bundle(entries: list[tuple[str, bytes]], align: int = 4096) -> bytes:
    """A bundle as clang-offload-bundler lays it out."""
    table = b"".join(struct.pack("<QQQ", 0, 0, len(i)) + i.encode() for i, _ in entries)
    pos = -(-(32 + len(table)) // align) * align
    header, blobs = [], b""
    for ident, code in entries:
        header.append(struct.pack("<QQQ", pos, len(code), len(ident)) + ident.encode())
        blobs += code
        pos += len(code)
        pad = -pos % align if code else 0
        blobs += b"\0" * pad
        pos += pad
    head = BUNDLE_MAGIC + struct.pack("<Q", len(entries)) + b"".join(header)
    start = -(-len(head) // align) * align
    return head + b"\0" * (start - len(head)) + blobs


def raw_bundle(table: list[tuple[int, int, bytes]], size: int, count: int | None = None) -> bytes:
    """A bundle whose table says exactly `table`, padded to `size` bytes."""
    head = BUNDLE_MAGIC + struct.pack("<Q", len(table) if count is None else count)
    head += b"".join(struct.pack("<QQQ", o, s, len(i)) + i for o, s, i in table)
    return head + b"\xab" * max(0, size - len(head))


def amdgcn_elf(bundle_path: str) -> bytes:
    [code] = [c for i, c in bundle_entries(read(bundle_path)) if "amdgcn" in i]
    return code


# ---- the oracle: llvm-readelf -----------------------------------------------------

def expected_kind(value_kind: str) -> str:
    if value_kind in ("global_buffer", "dynamic_shared_pointer"):
        return value_kind
    return "hidden" if value_kind.startswith("hidden_") else "by_value"


def machine_name(elf: str) -> str | None:
    """The processor as llvm-readobj names the e_flags mach, if it is installed."""
    tool = find_llvm_tool("llvm-readobj")
    if tool is None:
        return None
    text = subprocess.run([tool, "--file-headers", elf], capture_output=True, text=True,
                          check=True).stdout
    for word in text.split():
        if word.startswith("EF_AMDGPU_MACH_AMDGCN_"):
            return word[len("EF_AMDGPU_MACH_AMDGCN_"):].lower()
    return None


def v3_target(proc: str, flags: int) -> str:
    """ROCr's reading of a v3 ELF: a set bit is '+', else '-' where supported."""
    features = {"gfx908": "sx", "gfx90a": "sx", "gfx906": "sx", "gfx900": "x"}.get(proc, "")
    out = proc
    if flags & 0x200 or "s" in features:
        out += ":sramecc+" if flags & 0x200 else ":sramecc-"
    if flags & 0x100 or "x" in features:
        out += ":xnack+" if flags & 0x100 else ":xnack-"
    return out


def check_against_readelf(got: dict, elf: str) -> None:
    """Every field the C reader printed, against llvm-readelf for the same ELF."""
    assert got["status"] == "ok", got
    data = read(elf)
    assert got["elf_size"] == len(data)
    header = readelf.header(elf)
    assert header["machine"] == "EM_AMDGPU"
    assert got["version"] == header["abi_version"] + 2
    meta = readelf.metadata(elf)
    proc = got["target"].split(":")[0]
    mach = machine_name(elf)
    if mach is not None:
        assert proc == mach
    if got["version"] >= 4:
        assert "amdgcn-amd-amdhsa--" + got["target"] == meta["amdhsa.target"]
    else:
        assert got["target"] == v3_target(proc, header["flags"])

    kernels = meta.get("amdhsa.kernels") or []
    assert [k["full_name"] for k in got["kernels"]] == [k[".name"] for k in kernels]
    sections = readelf.sections(elf)
    tables = readelf.symbols(elf)
    table = tables.get(".symtab") or tables.get(".dynsym") or []
    by_name = {s["name"]: s for s in table}
    for g, m in zip(got["kernels"], kernels):
        assert g["name"] == m[".name"][:NAME_LEN - 1]
        assert g["full_symbol"] == m[".symbol"]
        assert g["symbol"] == m[".symbol"][:NAME_LEN - 1]
        for field in U32_FIELDS:
            assert g[field] == m.get("." + field, 0), field
        want = [(a[".offset"], a[".size"], expected_kind(a[".value_kind"]), a[".value_kind"])
                for a in m.get(".args", [])]
        assert [(a["offset"], a["size"], a["kind"], a["value_kind"]) for a in g["args"]] == want
        assert g["found_by_name"] == 1 and g["found_by_symbol"] == 1
        # The descriptor: where the symbol says, and its first fields agree.
        sym = by_name[m[".symbol"]]
        assert sym["type"] == "OBJECT"
        sec = sections[sym["ndx"]]
        assert g["descriptor_offset"] == sec["offset"] + sym["value"] - sec["addr"]
        group, private, kernarg = struct.unpack_from("<III", data, g["descriptor_offset"])
        assert (group, private, kernarg) == (g["group_segment_fixed_size"],
                                             g["private_segment_fixed_size"],
                                             g["kernarg_segment_size"])

    kernel_symbols = {k[".symbol"] for k in kernels}
    want_vars = [s for s in table
                 if s["type"] == "OBJECT" and s["bind"] != "LOCAL"
                 and isinstance(s["ndx"], int) and s["ndx"] > 0
                 and not s["name"].endswith(".kd") and s["name"] not in kernel_symbols]
    assert [(v["full_name"], v["size"]) for v in got["variables"]] == \
        [(s["name"], s["size"]) for s in want_vars]
    for v, s in zip(got["variables"], want_vars):
        sec = sections[s["ndx"]]
        offset = 0 if sec["type"] == "NOBITS" else sec["offset"] + s["value"] - sec["addr"]
        assert v["elf_offset"] == offset, v["full_name"]
        assert v["name"] == s["name"][:NAME_LEN - 1]
        assert v["found"] == 1


def dump_and_check(tco: Driver, path: str, tmp_path, device: str | None = None) -> dict:
    elf = str(tmp_path / f"selected-{os.path.basename(path)}-{device}.elf")
    got = tco.dump(path, device, elf)
    check_against_readelf(got, elf)
    got["elf_path"] = elf
    return got


# ---- tests: real code objects against llvm-readelf ------------------------------

def test_reader_compiles_clean_at_O2(tmp_path):
    for src in READER_SOURCES:
        r = subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-O2",
                            "-fvisibility=hidden", "-c", src, "-o", str(tmp_path / "x.o")],
                           capture_output=True, text=True, check=False)
        assert r.returncode == 0, f"{src}:\n{r.stderr}"


@pytest.mark.parametrize("name", ["vadd", "fill", "empty", "args"])
@pytest.mark.parametrize("device", [None, MI200])
def test_single_target_bundle(tco, need_readelf, hip_kernel, tmp_path, name, device):
    got = dump_and_check(tco, hip_kernel(name), tmp_path, device)
    assert got["target"] == "gfx90a" and got["version"] == 4
    assert [k["full_name"] for k in got["kernels"]] == {
        "vadd": ["vadd"], "fill": ["fill"], "empty": ["empty"],
        "args": ["scalars", "by_struct", "dyn_lds"]}[name]


def test_args_kernel_values(tco, need_readelf, hip_kernel, tmp_path):
    got = dump_and_check(tco, hip_kernel("args"), tmp_path, MI200)
    k = {k["full_name"]: k for k in got["kernels"]}
    sizes = [a["size"] for a in k["scalars"]["args"] if a["kind"] != "hidden"]
    assert sizes == [1, 2, 4, 8, 4, 8, 1, 8]          # char short int ll float double uchar ptr
    explicit = [a for a in k["by_struct"]["args"] if a["kind"] != "hidden"]
    assert [(a["size"], a["kind"]) for a in explicit] == \
        [(24, "by_value"), (8, "global_buffer"), (24, "by_value")]
    v = {v["full_name"]: v for v in got["variables"]}
    assert {"counter", "table", "scratch"} <= set(v)
    elf = read(got["elf_path"])
    assert struct.unpack_from("<i", elf, v["counter"]["elf_offset"]) == (3,)
    assert struct.unpack_from("<3f", elf, v["table"]["elf_offset"]) == (1.0, 2.0, 3.0)
    assert v["table"]["size"] == 64 and v["scratch"]["size"] == 800
    assert v["scratch"]["elf_offset"] == 0             # __device__ without initializer: bss


@pytest.mark.parametrize("name", ["vadd", "args"])
@pytest.mark.parametrize("device,wave", [("gfx908:sramecc+:xnack-", 64),
                                         ("gfx90a:sramecc-:xnack+", 64), ("gfx1030", 32)])
def test_multi_target_bundle(tco, need_readelf, hip_kernel, tmp_path, name, device, wave):
    got = dump_and_check(tco, hip_kernel(name, archs=MULTI), tmp_path, device)
    assert got["target"] == device.split(":")[0]
    assert {k["wavefront_size"] for k in got["kernels"]} == {wave}


def test_multi_target_bundle_without_device_takes_first_amdgcn(tco, need_readelf, hip_kernel,
                                                               tmp_path):
    path = hip_kernel("vadd", archs=MULTI)
    first = next(i for i, _ in bundle_entries(read(path)) if "amdgcn" in i)
    got = dump_and_check(tco, path, tmp_path)
    assert got["target"] == first.rsplit("--", 1)[1]
    assert tco.status(read(path), "gfx942:sramecc+:xnack-") == "no_target"
    assert tco.status(read(path), "gfx90a") == "ok"    # 'any' entries serve it


@pytest.mark.parametrize("name", ["vadd", "args"])
def test_code_object_v5_hidden_arguments(tco, need_readelf, hip_kernel, tmp_path, name):
    got = dump_and_check(tco, hip_kernel(name, flags=("-mcode-object-version=5",)), tmp_path,
                         MI200)
    assert got["version"] == 5
    hidden = [a for k in got["kernels"] for a in k["args"] if a["kind"] == "hidden"]
    assert all(a["value_kind"].startswith("hidden_") for a in hidden)
    if name == "vadd":            # uses blockDim: the compiler keeps hidden arguments
        assert len(hidden) > 3


def test_code_object_v3(tco, need_readelf, hip_kernel, tmp_path):
    path = hip_kernel("vadd", flags=("-mcode-object-version=3",))
    got = dump_and_check(tco, path, tmp_path)
    # v3 has no 'any': a processor's feature is on (bit set) or off.
    assert got["version"] == 3 and got["target"] == "gfx90a:sramecc+:xnack+"
    assert tco.status(read(path), "gfx90a:sramecc+:xnack+") == "ok"
    assert tco.status(read(path), MI200) == "no_target"


@pytest.mark.parametrize("target", ["gfx90a:sramecc-:xnack+", "gfx90a", "gfx1030",
                                    "gfx908:xnack-"])
def test_bare_elf(tco, need_readelf, bare_elf, tmp_path, target):
    got = dump_and_check(tco, bare_elf(target), tmp_path)
    assert got["target"] == target
    k = {k["full_name"]: k for k in got["kernels"]}
    assert [a["kind"] for a in k["scale"]["args"]][:4] == \
        ["global_buffer", "by_value", "by_value", "dynamic_shared_pointer"]
    assert [a["kind"] for a in k["lookup"]["args"]][:3] == \
        ["global_buffer", "dynamic_shared_pointer", "dynamic_shared_pointer"]


def test_bare_elf_must_serve_the_device(tco, bare_elf):
    data = read(bare_elf("gfx90a:sramecc-:xnack+"))
    assert tco.status(data, "gfx90a:sramecc-:xnack+") == "ok"
    assert tco.status(data, MI200) == "no_target"
    assert tco.status(data, "gfx1030") == "no_target"


def test_dynsym_only(tco, need_readelf, hip_kernel, tmp_path):
    strip = find_llvm_tool("llvm-strip")
    if strip is None:
        pytest.skip("llvm-strip is not installed")
    elf = tmp_path / "args.elf"
    elf.write_bytes(amdgcn_elf(hip_kernel("args")))
    subprocess.run([strip, "--strip-all", str(elf)], check=True)
    assert ".symtab" not in readelf.symbols(str(elf))
    got = dump_and_check(tco, str(elf), tmp_path)
    assert {"counter", "table", "scratch"} <= {v["full_name"] for v in got["variables"]}


def generated_kernel(tmp_path, name: str, source: str) -> str:
    if find_hipcc() is None:
        pytest.skip("hipcc is not installed")
    src = tmp_path / f"{name}.hip"
    src.write_text("#include <hip/hip_runtime.h>\n" + source)
    return compile_hip(name, str(tmp_path), ("gfx90a",), source=str(src))


def test_names_longer_than_the_fixed_buffers(tco, need_readelf, tmp_path):
    kernel, var = "k" + "x" * 300, "v" + "y" * 300
    path = generated_kernel(tmp_path, "long_names",
                            f'__device__ int {var} = 5;\n'
                            f'extern "C" __global__ void {kernel}(int *p) {{ p[0] = {var}; }}\n')
    got = dump_and_check(tco, path, tmp_path)
    [k] = got["kernels"]
    assert k["full_name"] == kernel and len(k["name"]) == NAME_LEN - 1
    assert k["full_symbol"] == kernel + ".kd" and k["found_by_name"] == 1
    v = next(v for v in got["variables"] if v["full_name"].startswith("v"))
    assert v["full_name"] == var and len(v["name"]) == NAME_LEN - 1 and v["found"] == 1


def test_more_arguments_than_supported(tco, need_readelf, tmp_path):
    params = ", ".join(f"int a{i}" for i in range(80))
    path = generated_kernel(tmp_path, "many_args",
                            f'extern "C" __global__ void many({params}, int *o) '
                            '{ o[0] = a79; }\n')
    meta = readelf.metadata(_write(tmp_path, amdgcn_elf(path)))
    assert len(meta["amdhsa.kernels"][0][".args"]) > 64
    assert tco.status(read(path)) == "unsupported"


def _write(tmp_path, data: bytes, name: str = "code.elf") -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# ---- target ids ---------------------------------------------------------------------

MATCHES = [
    # code object target, device target, runs?
    ("gfx90a", MI200, True),                           # 'any' runs anywhere
    ("gfx90a:xnack-", MI200, True),
    ("gfx90a:xnack+", MI200, False),
    ("gfx90a:sramecc+", MI200, True),
    ("gfx90a:sramecc-", MI200, False),
    ("gfx90a:sramecc+:xnack-", MI200, True),
    ("gfx90a:xnack-:sramecc+", MI200, True),           # feature order is free
    ("gfx90a:sramecc-:xnack+", "gfx90a:sramecc-:xnack+", True),
    ("gfx908", MI200, False),
    ("gfx90a", "gfx90a", True),
    ("gfx90a:xnack-", "gfx90a", False),                # device does not support xnack
    ("gfx1030", "gfx1030", True),
    ("gfx1030:xnack-", "gfx1030", False),
    ("gfx1100", "gfx1101", False),
    ("amdgcn-amd-amdhsa--gfx90a:xnack-", "amdgcn-amd-amdhsa--" + MI200, True),
    ("gfx10-3-generic", "gfx1031", True),
    ("gfx10-3-generic", "gfx1010:xnack-", False),
    ("gfx9-generic:xnack-", "gfx906:sramecc+:xnack-", True),
    ("gfx9-generic:xnack+", "gfx906:sramecc+:xnack-", False),
    ("gfx1031", "gfx10-3-generic", False),
    ("gfx90", "gfx90a", False),
    ("gfx90a", "gfx90", False),
    ("gfx90a:xnack", MI200, False),                    # malformed
    ("gfx90a:foo+", MI200, False),
    ("gfx90a:xnack-:xnack-", MI200, False),
    ("gfx90a:", MI200, False),
    ("gfx90a::xnack-", MI200, False),
    ("", MI200, False),
    ("gfx90a", "", False),
]


def test_target_matching(tco):
    got = tco.matches([(c, d) for c, d, _ in MATCHES])
    assert got == [want for _, _, want in MATCHES]


# ---- bundle selection ------------------------------------------------------------------

@pytest.fixture(scope="session")
def elves(hip_kernel):
    """Bare ELFs of vadd for several targets, taken out of hipcc's bundles."""
    multi = dict(bundle_entries(read(hip_kernel("vadd", archs=MULTI))))
    return {"gfx90a": amdgcn_elf(hip_kernel("vadd")),
            "gfx90a:xnack-": amdgcn_elf(hip_kernel("vadd", archs=("gfx90a:xnack-",))),
            "gfx1030": multi["hipv4-amdgcn-amd-amdhsa--gfx1030"]}


def entry(target: str, code: bytes, kind: str = "hipv4") -> tuple[str, bytes]:
    return (f"{kind}-amdgcn-amd-amdhsa--{target}", code)


@pytest.mark.parametrize("reverse", [False, True])
def test_bundle_prefers_exact_match_over_any(tco, elves, reverse):
    amdgcn = [entry("gfx90a", elves["gfx90a"]), entry("gfx90a:xnack-", elves["gfx90a:xnack-"])]
    if reverse:
        amdgcn.reverse()
    data = make_bundle([(HOST_ID, b"")] + amdgcn)
    assert tco.parse(data, MI200)["target"] == "gfx90a:xnack-"
    assert tco.parse(data, "gfx90a:sramecc+:xnack+")["target"] == "gfx90a"
    assert tco.parse(data, "gfx90a")["target"] == "gfx90a"
    assert tco.parse(data)["target"] == amdgcn[0][0].rsplit("--", 1)[1]


@pytest.mark.parametrize("ident", ["hip-amdgcn-amd-amdhsa-gfx90a", "hip-amdgcn-amd-amdhsa--gfx90a",
                                   "openmp-amdgcn-amd-amdhsa--gfx90a",
                                   "hipv4-amdgcn-amd-amdhsa-unknown-gfx90a"])
def test_bundle_id_spellings(tco, elves, ident):
    data = make_bundle([(HOST_ID, b""), (ident, elves["gfx90a"])])
    assert tco.parse(data, MI200)["target"] == "gfx90a"


def test_bundle_without_a_serving_entry(tco, elves):
    assert tco.status(make_bundle([(HOST_ID, b"")]), MI200) == "no_target"
    assert tco.status(make_bundle([(HOST_ID, b"")])) == "no_target"
    assert tco.status(make_bundle([]), MI200) == "no_target"
    assert tco.status(make_bundle([entry("gfx1030", elves["gfx1030"])]), MI200) == "no_target"
    # An entry whose id serves the device but whose ELF is for another GPU.
    lying = make_bundle([entry("gfx90a", elves["gfx1030"])])
    assert tco.status(lying, MI200) == "no_target"
    assert tco.parse(lying)["target"] == "gfx1030"


def test_unsupported_bundles(tco, elves):
    assert tco.status(b"CCOB" + b"\x01\x00\x02\x00" + b"\x00" * 64, MI200) == "unsupported"
    bitcode = make_bundle([(HOST_ID, b""), entry("gfx90a", b"BC\xc0\xde" + b"\x00" * 60)])
    assert tco.status(bitcode, MI200) == "unsupported"


def test_malformed_bundles(tco, elves):
    elf = elves["gfx90a"]
    ident = b"hipv4-amdgcn-amd-amdhsa--gfx90a"
    size = 4096 + len(elf)

    def bundle(table, count=None):
        data = bytearray(raw_bundle(table, size, count))
        data[4096:4096 + len(elf)] = elf
        return bytes(data)

    good = [(4096, 0, HOST_ID.encode()), (4096, len(elf), ident)]
    assert tco.status(bundle(good), MI200) == "ok"
    bad = {
        "count 2^63": bundle(good, count=1 << 63),
        "count 2^32": bundle(good, count=1 << 32),
        "count 2^64-1": bundle(good, count=(1 << 64) - 1),
        "count one too many": bundle(good, count=3),
        "offset past the end": bundle([(size + 1, 16, ident)]),
        "size past the end": bundle([(4096, size, ident)]),
        "offset + size wraps": bundle([(2**64 - 8, 16, ident)]),
        "overlapping entries": bundle([(4096, len(elf), ident), (4096 + 16, 64, ident)]),
        "entry over the header": bundle([(0, 64, ident), (4096, len(elf), ident)]),
        "entry not an ELF": bundle([(4096 + 8, len(elf) - 8, ident)]),
        "wrong magic": b"__CLANG_OFFLOAD_BUNDLX__" + bundle(good)[24:],
        "magic only": BUNDLE_MAGIC,
        "magic and half a count": BUNDLE_MAGIC + b"\x01\x00\x00",
    }
    huge_id = bytearray(bundle(good))
    struct.pack_into("<Q", huge_id, 32 + 16, 1 << 63)          # first entry's id length
    bad["id length 2^63"] = bytes(huge_id)
    got = {name: tco.status(data, MI200) for name, data in bad.items()}
    assert got == {name: "invalid" for name in bad}


# ---- bad ELF files ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def vadd_elf(hip_kernel, tmp_path_factory, need_readelf):
    """(bytes, path, {section name: section}, .symtab list) of the gfx90a vadd ELF."""
    path = str(tmp_path_factory.mktemp("vadd_elf") / "vadd.elf")
    data = amdgcn_elf(hip_kernel("vadd"))
    with open(path, "wb") as f:
        f.write(data)
    secs = {s["name"]: s for s in readelf.sections(path).values()}
    return data, path, secs, readelf.symbols(path)[".symtab"]


def patched(data: bytes, at: int, fmt: str, *values) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def test_bad_elf_headers(tco, vadd_elf):
    data = vadd_elf[0]
    assert tco.status(data, MI200) == "ok"
    cases = {
        "empty": (b"", "invalid"),
        "63 bytes": (data[:63], "invalid"),
        "magic": (b"\x7fELX" + data[4:], "invalid"),
        "ELFCLASS32": (patched(data, 4, "B", 1), "invalid"),
        "big endian": (patched(data, 5, "B", 2), "invalid"),
        "x86-64": (patched(data, 18, "<H", 62), "invalid"),
        "OS ABI none": (patched(data, 7, "B", 0), "unsupported"),
        "code object v2": (patched(data, 8, "B", 0), "unsupported"),
        "code object v9": (patched(data, 8, "B", 7), "unsupported"),
        "no processor": (patched(data, 48, "B", 0), "unsupported"),
        "unknown processor": (patched(data, 48, "B", 0xfe), "unsupported"),
        "shentsize 40": (patched(data, 58, "<H", 40), "invalid"),
        "phentsize 32": (patched(data, 54, "<H", 32), "invalid"),
        "shoff past the end": (patched(data, 40, "<Q", len(data)), "invalid"),
        "shoff 2^64-1": (patched(data, 40, "<Q", 2**64 - 1), "invalid"),
        "phoff past the end": (patched(data, 32, "<Q", len(data) - 8), "invalid"),
        "shnum 0xffff": (patched(data, 60, "<H", 0xffff), "invalid"),
        "sections gone": (patched(data, 60, "<H", 0), "invalid"),   # no symbols: no .kd
        "garbage": (bytes(range(256)) * 8, "invalid"),
    }
    got = {name: tco.status(d, None) for name, (d, _) in cases.items()}
    assert got == {name: want for name, (_, want) in cases.items()}


def note_at(vadd_elf) -> int:
    data, _, secs, _ = vadd_elf
    off = secs[".note"]["offset"]
    assert struct.unpack_from("<III", data, off) [0] == 7 and data[off + 12:off + 19] == b"AMDGPU\0"
    return off


def test_bad_notes(tco, vadd_elf):
    data = vadd_elf[0]
    off = note_at(vadd_elf)
    descsz = struct.unpack_from("<I", data, off + 4)[0]
    cases = {
        "note type 33": patched(data, off + 8, "<I", 33),
        "owner AMDGPX": patched(data, off + 12, "6s", b"AMDGPX"),
        "namesz huge": patched(data, off, "<I", 0xfffffff0),
        "descsz past the note": patched(data, off + 4, "<I", descsz + 4096),
        "descsz 2^32-1": patched(data, off + 4, "<I", 0xffffffff),
    }
    for cut in range(0, descsz, 7):                    # a metadata cut anywhere
        cases[f"desc cut to {cut}"] = patched(data, off + 4, "<I", cut)
    got = {name: tco.status(d, MI200) for name, d in cases.items()}
    assert got == {name: "invalid" for name in cases}


def test_bad_symbols(tco, vadd_elf):
    data, _, secs, symtab = vadd_elf
    index = next(i for i, s in enumerate(symtab) if s["name"] == "vadd.kd")
    sym = secs[".symtab"]["offset"] + 24 * index
    strtab = secs[".strtab"]
    name_at = data.index(b"vadd.kd\0", strtab["offset"])
    cases = {
        "strtab not terminated": patched(data, strtab["offset"] + strtab["size"] - 1, "B", 0x41),
        ".kd renamed": patched(data, name_at + 6, "B", ord("x")),
        ".kd st_name past strtab": patched(data, sym, "<I", strtab["size"]),
        ".kd undefined": patched(data, sym + 6, "<H", 0),
        ".kd in a bad section": patched(data, sym + 6, "<H", 999),
        ".kd st_value past its section": patched(data, sym + 8, "<Q", 2**63),
        ".kd at its section's end": patched(data, sym + 8, "<Q", secs[".rodata"]["addr"] +
                                            secs[".rodata"]["size"] - 32),
        "symtab size not a multiple": patched(data, secs_header(data, ".symtab", secs) + 32,
                                              "<Q", secs[".symtab"]["size"] - 1),
    }
    got = {name: tco.status(d, MI200) for name, d in cases.items()}
    assert got == {name: "invalid" for name in cases}


def secs_header(data: bytes, name: str, secs: dict) -> int:
    """File offset of the section header of `name`."""
    shoff = struct.unpack_from("<Q", data, 40)[0]
    want = secs[name]["offset"]
    for i in range(struct.unpack_from("<H", data, 60)[0]):
        at = shoff + 64 * i
        if struct.unpack_from("<Q", data, at + 24)[0] == want and \
                struct.unpack_from("<I", data, at + 4)[0] == 2:        # SHT_SYMTAB
            return at
    raise AssertionError(name)


# ---- crafted metadata notes ---------------------------------------------------------------

class Raw(bytes):
    """Bytes already in msgpack form (a chosen width, a type the encoder lacks)."""


def mp(v) -> bytes:
    """A small msgpack encoder, enough to write metadata notes."""
    if isinstance(v, Raw):
        return bytes(v)
    if v is None:
        return b"\xc0"
    if isinstance(v, bool):
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 128:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if v >= 0:
            for code, fmt in ((0xcc, ">B"), (0xcd, ">H"), (0xce, ">I"), (0xcf, ">Q")):
                if v < 1 << (8 * struct.calcsize(fmt)):
                    return bytes([code]) + struct.pack(fmt, v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, float):
        return b"\xcb" + struct.pack(">d", v)
    if isinstance(v, str):
        s = v.encode()
        if len(s) < 32:
            return bytes([0xa0 | len(s)]) + s
        return (b"\xd9" + struct.pack(">B", len(s)) if len(s) < 256
                else b"\xda" + struct.pack(">H", len(s))) + s
    if isinstance(v, bytes):
        return b"\xc4" + struct.pack(">B", len(v)) + v
    if isinstance(v, list):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else b"\xdc" + struct.pack(">H", len(v))
        return head + b"".join(mp(x) for x in v)
    if isinstance(v, dict):
        head = bytes([0x80 | len(v)]) if len(v) < 16 else b"\xde" + struct.pack(">H", len(v))
        return head + b"".join(mp(k) + mp(x) for k, x in v.items())
    raise TypeError(v)


@pytest.fixture(scope="session")
def args_elf(hip_kernel, tmp_path_factory, need_readelf):
    """(bytes, note offset, readelf's metadata) of the gfx90a args ELF."""
    path = str(tmp_path_factory.mktemp("args_elf") / "args.elf")
    data = amdgcn_elf(hip_kernel("args"))
    with open(path, "wb") as f:
        f.write(data)
    secs = {s["name"]: s for s in readelf.sections(path).values()}
    off = secs[".note"]["offset"]
    assert data[off + 12:off + 19] == b"AMDGPU\0"
    return data, off, readelf.metadata(path)


def with_note(elf: tuple, desc: bytes) -> bytes:
    """The ELF with its metadata replaced by `desc` (no longer than the original)."""
    data, off, _ = elf
    namesz, descsz, ntype = struct.unpack_from("<III", data, off)
    assert (namesz, ntype) == (7, 32) and len(desc) <= descsz, len(desc)
    b = bytearray(data)
    struct.pack_into("<I", b, off + 4, len(desc))
    b[off + 20:off + 20 + descsz] = desc + b"\0" * (descsz - len(desc))
    return bytes(b)


def small_metadata(meta: dict) -> dict:
    """readelf's metadata keeping only what the reader uses (room for extras)."""
    keep = {"." + f for f in U32_FIELDS} | {".name", ".symbol"}
    kernels = []
    for k in meta["amdhsa.kernels"]:
        small = {key: v for key, v in k.items() if key in keep}
        small[".args"] = [{".offset": a[".offset"], ".size": a[".size"],
                           ".value_kind": a[".value_kind"]} for a in k.get(".args", [])]
        kernels.append(small)
    return {"amdhsa.version": [1, 1], "amdhsa.kernels": kernels}


def test_reencoded_metadata_reads_the_same(tco, args_elf):
    original = tco.parse(args_elf[0], MI200)
    assert original["status"] == "ok"
    assert tco.parse(with_note(args_elf, mp(args_elf[2])), MI200) == original
    assert tco.parse(with_note(args_elf, mp(small_metadata(args_elf[2]))), MI200) == original


def test_metadata_with_every_msgpack_type(tco, args_elf):
    """Other widths of the same values, and values of every type to skip."""
    original = tco.parse(args_elf[0], MI200)
    meta = small_metadata(args_elf[2])
    k = meta["amdhsa.kernels"][0]
    extras = {"x.nil": None, "x.true": True, "x.f32": Raw(b"\xca\x3f\x80\x00\x00"),
              "x.f64": 1.5, "x.bin": b"\x00\x01", "x.bin16": Raw(b"\xc5\x00\x02ab"),
              "x.ext8": Raw(b"\xc7\x02\x05ab"), "x.fixext4": Raw(b"\xd6\x01abcd"),
              "x.neg": -5, "x.neg64": Raw(b"\xd3" + struct.pack(">q", -2**40)),
              "x.nested": {"a": [1, {"b": [None, "c"]}]}, 7: "an int key"}
    k.update({".kernarg_segment_size": Raw(b"\xcf" + struct.pack(">Q", k[".kernarg_segment_size"])),
              ".sgpr_count": Raw(b"\xd2" + struct.pack(">i", k[".sgpr_count"])),
              ".vgpr_count": Raw(b"\xcd" + struct.pack(">H", k[".vgpr_count"])),
              ".name": Raw(b"\xd9" + bytes([len(k[".name"])]) + k[".name"].encode()),
              ".symbol": Raw(b"\xda" + struct.pack(">H", len(k[".symbol"])) +
                             k[".symbol"].encode()),
              **extras})
    k[".args"][0]["x.extra"] = [True, None, 2.5]
    k[".args"][0][9] = 9
    k[".args"] = Raw(b"\xdc" + struct.pack(">H", len(k[".args"])) +
                     b"".join(mp(a) for a in k[".args"]))
    meta.update(extras)
    got = tco.parse(with_note(args_elf, mp(meta)), MI200)
    assert got == original


def test_metadata_without_kernels(tco, args_elf):
    for meta in ({"amdhsa.version": [1, 1]}, {"amdhsa.kernels": []}, {}):
        got = tco.parse(with_note(args_elf, mp(meta)), MI200)
        assert got["status"] == "ok" and got["kernels"] == [], meta
        assert {"counter", "table", "scratch"} <= {v["full_name"] for v in got["variables"]}


def bad_metadata(meta: dict) -> dict:
    """name -> (metadata bytes, expected status)."""
    def kernel_variant(**changes) -> bytes:
        m = small_metadata(meta)
        k = m["amdhsa.kernels"][0]
        for key, value in changes.items():
            key = "." + key
            if value is _DELETE:
                del k[key]
            else:
                k[key] = value
        return mp(m)

    first = small_metadata(meta)["amdhsa.kernels"][0]
    out = {
        "empty": b"",
        "not a map": b"\x91\xc0",
        "0xc1": mp({"x": Raw(b"\xc1")}),
        "map32 of 2^32-1": b"\xdf\xff\xff\xff\xff",
        "array32 of 2^32-1 kernels": mp({"amdhsa.kernels": Raw(b"\xdd\xff\xff\xff\xff")}),
        "str32 of 2^32-16 as a key": b"\x81\xdb\xff\xff\xff\xf0abc",
        "100 nested arrays": mp({"x": Raw(b"\x91" * 100 + b"\xc0")}),
        "kernels twice": b"\x82" + mp("amdhsa.kernels") + mp([]) + mp("amdhsa.kernels") + mp([]),
        "kernels a map": mp({"amdhsa.kernels": {}}),
        "a kernel an int": mp({"amdhsa.kernels": [5]}),
        "no .symbol": kernel_variant(symbol=_DELETE),
        "no .name": kernel_variant(name=_DELETE),
        "no .kernarg_segment_size": kernel_variant(kernarg_segment_size=_DELETE),
        "no .wavefront_size": kernel_variant(wavefront_size=_DELETE),
        "align 3": kernel_variant(kernarg_segment_align=3),
        "align 0": kernel_variant(kernarg_segment_align=0),
        "wavefront 48": kernel_variant(wavefront_size=48),
        "kernarg size -1": kernel_variant(kernarg_segment_size=-1),
        "kernarg size 2^33": kernel_variant(kernarg_segment_size=2**33),
        "sgpr count a string": kernel_variant(sgpr_count="11"),
        ".name an int": kernel_variant(name=5),
        ".name empty": kernel_variant(name=""),
        ".name with a NUL": kernel_variant(name="sca\0lars"),
        ".symbol not in the ELF": kernel_variant(symbol="nosuch.kd"),
        ".symbol of a variable": kernel_variant(symbol="counter"),
        "arg past the kernarg segment": kernel_variant(
            args=[{".offset": first[".kernarg_segment_size"], ".size": 1,
                   ".value_kind": "by_value"}]),
        "arg offset + size wraps": kernel_variant(
            args=[{".offset": 2**32 - 1, ".size": 2, ".value_kind": "by_value"}]),
        "arg without .value_kind": kernel_variant(args=[{".offset": 0, ".size": 1}]),
        "arg without .size": kernel_variant(args=[{".offset": 0, ".value_kind": "by_value"}]),
        "args a map": kernel_variant(args={}),
        "value_kind an int": kernel_variant(
            args=[{".offset": 0, ".size": 1, ".value_kind": 1}]),
    }
    dup = small_metadata(meta)
    dup["amdhsa.kernels"][1][".symbol"] = dup["amdhsa.kernels"][0][".symbol"]
    out["two kernels, one .kd"] = mp(dup)
    whole = mp(small_metadata(meta))
    for cut in range(1, len(whole), 37):
        out[f"cut at {cut}"] = whole[:cut]
    return {name: (data, "invalid") for name, data in out.items()} | {
        # The count is refused before the arguments are read (the note has no
        # room for 65 real ones; test_more_arguments_than_supported has them).
        "65 arguments": (kernel_variant(args=Raw(b"\xdc\x00\x41" + b"\xc0" * 65)),
                         "unsupported")}


_DELETE = object()


def test_bad_metadata(tco, args_elf):
    cases = bad_metadata(args_elf[2])
    got = {name: tco.status(with_note(args_elf, data), MI200) for name, (data, _) in cases.items()}
    assert got == {name: want for name, (_, want) in cases.items()}


# ---- truncations, flips and random mutations under ASan ---------------------------

def check_robust(r: dict, flipped: int) -> None:
    assert r["whole"]["ok"] == 1, r
    assert sum(r["truncate"].values()) == r["truncate"]["invalid"] > 0, r
    assert sum(r["flip"].values()) == 4 * flipped, r
    assert r["flip"]["invalid"] > 0, r
    assert sum(r["random"].values()) == r["iterations"] >= 500, r
    assert r["random"]["invalid"] > 0, r
    for phase in ("truncate", "flip", "random"):
        assert r[phase]["no_memory"] == 0, r


def note_range_in(path: str, tmp_path) -> tuple[int, int]:
    """[start, end) of the .note section in the file (bundle or ELF)."""
    data = read(path)
    base = 0
    if data.startswith(BUNDLE_MAGIC):
        [(_, base, size)] = [e for e in bundle_entry_offsets(data) if "amdgcn" in e[0]][:1]
        elf = _write(tmp_path, data[base:base + size], "entry.elf")
    else:
        elf = path
    sec = next(s for s in readelf.sections(elf).values() if s["name"] == ".note")
    return base + sec["offset"], base + sec["offset"] + sec["size"]


def test_mutations_of_a_bundle(tco, need_readelf, hip_kernel, tmp_path):
    path = hip_kernel("vadd")
    rng = note_range_in(path, tmp_path)
    check_robust(tco.robust(path, MI200, rng), rng[1] - rng[0])


def test_mutations_of_a_multi_target_bundle(tco, hip_kernel):
    path = hip_kernel("args", archs=MULTI)
    check_robust(tco.robust(path, "gfx1030"), len(read(path)))


def test_mutations_of_a_v5_bundle(tco, need_readelf, hip_kernel, tmp_path):
    path = hip_kernel("args", flags=("-mcode-object-version=5",))
    rng = note_range_in(path, tmp_path)
    check_robust(tco.robust(path, MI200, rng), rng[1] - rng[0])


def test_mutations_of_a_bare_elf(tco, need_readelf, bare_elf, tmp_path):
    path = bare_elf("gfx90a:sramecc-:xnack+")
    rng = note_range_in(path, tmp_path)
    check_robust(tco.robust(path, "gfx90a:sramecc-:xnack+", rng), rng[1] - rng[0])


@pytest.mark.parametrize("flags", [(), ("-mcode-object-version=5",)])
def test_mutations_of_a_note_alone(tco, hip_kernel, flags):
    """The metadata reader on exact-size copies of the note: inside an ELF a
    read past the note's end stays inside the ELF, where ASan cannot see it."""
    data = amdgcn_elf(hip_kernel("args", flags=flags))
    # The note: PT_NOTE's first note (checked to be AMDGPU's metadata).
    phoff, = struct.unpack_from("<Q", data, 32)
    phnum, = struct.unpack_from("<H", data, 56)
    notes = [struct.unpack_from("<Q", data, phoff + 56 * i + 8)[0] for i in range(phnum)
             if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 4]
    namesz, descsz, ntype = struct.unpack_from("<III", data, notes[0])
    assert (namesz, ntype) == (7, 32)
    desc = data[notes[0] + 20:notes[0] + 20 + descsz]
    r = tco.robust_note(desc)
    assert r["whole"]["ok"] == 1, r
    assert r["truncate"]["invalid"] == len(desc), r     # every strict prefix is incomplete
    check_robust(r, len(desc))
