"""Helpers for driving the HSA runtime through ``rocpy.hsa.lib`` with C-level calls.

Everything here is thin: it saves the tests from spelling out cffi
boilerplate (out-parameters, iteration callbacks, AQL packet writing), and
never hides a status: helpers that must succeed assert it.
"""
from __future__ import annotations

import os
import re
import struct
import subprocess
import sys
import textwrap

from rocpy import hsa

lib, ffi = hsa.lib, hsa.ffi

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
WAIT_FOREVER = 2**64 - 1
SECOND = 10**9               # timeouts are in timestamp ticks: ns on the stub
UINT32_MAX = 2**32 - 1

# keeps cffi callbacks the runtime may still call alive until the process ends
_keepalive: list = []


def keep(obj):
    _keepalive.append(obj)
    return obj


def status_name(status: int) -> str:
    return ffi.string(ffi.cast("hsa_status_t", status))


def check(status: int, expected: int = 0) -> None:
    assert status == expected, f"{status_name(status)} != {status_name(expected)}"


# ---- agents ------------------------------------------------------------------

def agents() -> list:
    out = []

    @ffi.callback("hsa_status_t(hsa_agent_t, void*)")
    def cb(agent, data):
        out.append(agent.handle)
        return lib.HSA_STATUS_SUCCESS
    check(lib.hsa_iterate_agents(cb, ffi.NULL))
    return [agent(h) for h in out]


def agent(handle: int):
    return ffi.new("hsa_agent_t*", {"handle": handle})[0]


def device_type(a) -> int:
    v = ffi.new("hsa_device_type_t*")
    check(lib.hsa_agent_get_info(a, lib.HSA_AGENT_INFO_DEVICE, v))
    return v[0]


def cpu_agent():
    return [a for a in agents() if device_type(a) == lib.HSA_DEVICE_TYPE_CPU][0]


def gpu_agents() -> list:
    return [a for a in agents() if device_type(a) == lib.HSA_DEVICE_TYPE_GPU]


def agent_info(a, attribute: int, ctype: str):
    v = ffi.new(ctype)
    check(lib.hsa_agent_get_info(a, attribute, v))
    return v


# ---- memory ------------------------------------------------------------------

def pools(a) -> list:
    out = []

    @ffi.callback("hsa_status_t(hsa_amd_memory_pool_t, void*)")
    def cb(pool, data):
        out.append(pool.handle)
        return lib.HSA_STATUS_SUCCESS
    check(lib.hsa_amd_agent_iterate_memory_pools(a, cb, ffi.NULL))
    return [ffi.new("hsa_amd_memory_pool_t*", {"handle": h})[0] for h in out]


def pool_info(pool, attribute: int, ctype: str):
    v = ffi.new(ctype)
    check(lib.hsa_amd_memory_pool_get_info(pool, attribute, v))
    return v[0]


def find_pool(a, *, segment: str = "global", fine: bool = False, kernarg: bool = False):
    seg = {"global": lib.HSA_AMD_SEGMENT_GLOBAL, "group": lib.HSA_AMD_SEGMENT_GROUP}[segment]
    for p in pools(a):
        if pool_info(p, lib.HSA_AMD_MEMORY_POOL_INFO_SEGMENT, "hsa_amd_segment_t*") != seg:
            continue
        if seg != lib.HSA_AMD_SEGMENT_GLOBAL:
            return p
        flags = pool_info(p, lib.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t*")
        is_kernarg = bool(flags & lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
        is_fine = bool(flags & lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)
        if is_kernarg == kernarg and is_fine == fine:
            return p
    raise LookupError(f"no {segment} pool fine={fine} kernarg={kernarg}")


def allocate(pool, size: int):
    p = ffi.new("void**")
    check(lib.hsa_amd_memory_pool_allocate(pool, size, 0, p))
    return p[0]


def allow(ptr, *agent_list) -> None:
    arr = ffi.new("hsa_agent_t[]", list(agent_list))
    check(lib.hsa_amd_agents_allow_access(len(agent_list), arr, ffi.NULL, ptr))


def pointer_info(ptr):
    info = ffi.new("hsa_amd_pointer_info_t*")
    info.size = ffi.sizeof("hsa_amd_pointer_info_t")
    check(lib.hsa_amd_pointer_info(ptr, info, ffi.NULL, ffi.NULL, ffi.NULL))
    return info


def accessible_agents(ptr) -> list[int]:
    info = ffi.new("hsa_amd_pointer_info_t*")
    info.size = ffi.sizeof("hsa_amd_pointer_info_t")
    n = ffi.new("uint32_t*")
    arr = ffi.new("hsa_agent_t**")
    check(lib.hsa_amd_pointer_info(ptr, info, lib_malloc(), n, arr))
    handles = [arr[0][i].handle for i in range(n[0])]
    libc_free(arr[0])
    return handles


_libc = None


def _c():
    global _libc
    if _libc is None:
        import ctypes
        import ctypes.util
        _libc = ctypes.CDLL(ctypes.util.find_library("c"))
    return _libc


def lib_malloc():
    import ctypes
    return ffi.cast("void*(*)(size_t)", ctypes.cast(_c().malloc, ctypes.c_void_p).value)


def libc_free(p) -> None:
    import ctypes
    _c().free(ctypes.c_void_p(int(ffi.cast("uintptr_t", p))))


# ---- signals -----------------------------------------------------------------

def signal(value: int = 1):
    s = ffi.new("hsa_signal_t*")
    check(lib.hsa_signal_create(value, 0, ffi.NULL, s))
    return s[0]


def wait_eq(sig, value: int, timeout_ns: int = 5 * SECOND) -> int:
    return lib.hsa_signal_wait_scacquire(sig, lib.HSA_SIGNAL_CONDITION_EQ, value, timeout_ns,
                                         lib.HSA_WAIT_STATE_BLOCKED)


# ---- queues and packets -----------------------------------------------------------

def queue(gpu, size: int = 64, callback=ffi.NULL, data=ffi.NULL):
    q = ffi.new("hsa_queue_t**")
    check(lib.hsa_queue_create(gpu, size, lib.HSA_QUEUE_TYPE_MULTI, callback, data, UINT32_MAX, UINT32_MAX, q))
    return q[0]


def error_recorder():
    """A queue error callback that records (status, queue address) pairs."""
    seen = []

    @ffi.callback("void(hsa_status_t, hsa_queue_t*, void*)")
    def cb(status, source, data):
        seen.append((status, int(ffi.cast("uintptr_t", source))))
    keep(cb)
    return cb, seen


def _slot(q, ctype: str):
    index = lib.hsa_queue_add_write_index_scacq_screl(q, 1)
    packet = ffi.cast(ctype + "*", q.base_address) + (index % q.size)
    return index, packet


def _publish(q, packet, index: int, header: int) -> None:
    # the header goes last, in one 16-bit store, as producers must do
    ffi.cast("uint16_t*", packet)[0] = header
    lib.hsa_signal_store_screlease(q.doorbell_signal, index)


def header(packet_type: int, barrier: bool = True) -> int:
    h = packet_type << lib.HSA_PACKET_HEADER_TYPE
    if barrier:
        h |= 1 << lib.HSA_PACKET_HEADER_BARRIER
    h |= lib.HSA_FENCE_SCOPE_SYSTEM << lib.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE
    h |= lib.HSA_FENCE_SCOPE_SYSTEM << lib.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE
    return h


def dispatch(q, kernel_object: int, kernarg, grid=(1, 1, 1), block=(1, 1, 1), completion=None,
             dims: int = 1, group: int = 0, packet_type=None, publish: bool = True) -> int:
    index, p = _slot(q, "hsa_kernel_dispatch_packet_t")
    p.setup = dims << lib.HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS
    p.workgroup_size_x, p.workgroup_size_y, p.workgroup_size_z = block
    p.grid_size_x, p.grid_size_y, p.grid_size_z = grid
    p.private_segment_size = 0
    p.group_segment_size = group
    p.kernel_object = kernel_object
    p.kernarg_address = kernarg
    p.completion_signal = completion if completion is not None else ffi.new("hsa_signal_t*")[0]
    if publish:
        _publish(q, p, index, header(lib.HSA_PACKET_TYPE_KERNEL_DISPATCH if packet_type is None else packet_type))
    return index


def barrier(q, deps, completion=None, kind: str = "and", publish: bool = True) -> int:
    ctype = "hsa_barrier_and_packet_t" if kind == "and" else "hsa_barrier_or_packet_t"
    index, p = _slot(q, ctype)
    for i in range(5):
        p.dep_signal[i] = deps[i] if i < len(deps) else ffi.new("hsa_signal_t*")[0]
    p.completion_signal = completion if completion is not None else ffi.new("hsa_signal_t*")[0]
    if publish:
        t = lib.HSA_PACKET_TYPE_BARRIER_AND if kind == "and" else lib.HSA_PACKET_TYPE_BARRIER_OR
        _publish(q, p, index, header(t))
    return index


# ---- executables ----------------------------------------------------------------

class Kernel:
    """A code object loaded for one GPU, and one of its kernels."""

    def __init__(self, path: str, gpu, name: str):
        self.data = open(path, "rb").read()
        self.buffer = ffi.from_buffer(self.data)
        reader = ffi.new("hsa_code_object_reader_t*")
        check(lib.hsa_code_object_reader_create_from_memory(self.buffer, len(self.data), reader))
        self.reader = reader[0]
        exe = ffi.new("hsa_executable_t*")
        check(lib.hsa_executable_create_alt(lib.HSA_PROFILE_FULL, lib.HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                                            ffi.NULL, exe))
        self.executable = exe[0]
        check(lib.hsa_executable_load_agent_code_object(self.executable, gpu, self.reader, ffi.NULL, ffi.NULL))
        check(lib.hsa_executable_freeze(self.executable, ffi.NULL))
        sym = ffi.new("hsa_executable_symbol_t*")
        check(lib.hsa_executable_get_symbol_by_name(self.executable, (name + ".kd").encode(),
                                                    ffi.new("hsa_agent_t*", gpu), sym))
        self.symbol = sym[0]
        self.object = self.info(lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, "uint64_t*")
        self.kernarg_size = self.info(lib.HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, "uint32_t*")

    def info(self, attribute: int, ctype: str):
        v = ffi.new(ctype)
        check(lib.hsa_executable_symbol_get_info(self.symbol, attribute, v))
        return v[0]

    def close(self) -> None:
        check(lib.hsa_executable_destroy(self.executable))
        check(lib.hsa_code_object_reader_destroy(self.reader))


def bundle_entry(path: str, arch: str = "gfx90a") -> bytes:
    """The ELF for ``arch`` in a clang offload bundle (uncompressed)."""
    data = open(path, "rb").read()
    assert data.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    (count,) = struct.unpack_from("<Q", data, 24)
    pos = 32
    for _ in range(count):
        offset, size, id_len = struct.unpack_from("<QQQ", data, pos)
        pos += 24
        target = data[pos:pos + id_len].decode()
        pos += id_len
        if target.startswith("hip") and target.split("--")[-1].split(":")[0] == arch:
            return data[offset:offset + size]
    raise LookupError(arch)


def readelf_kernels(elf_path: str) -> dict[str, dict[str, int]]:
    """Per kernel, the integer fields llvm-readelf --notes shows in its metadata."""
    from kernels.readelf import find_readelf     # here: subprocesses import this module alone
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}   # no sanitizer runtime in the tool
    text = subprocess.run([find_readelf(), "--notes", elf_path], check=True, capture_output=True, text=True,
                          env=env).stdout
    kernels: dict[str, dict[str, int]] = {}
    for block in re.split(r"\n\s*- \.", text.split("amdhsa.kernels:")[1]):
        name = re.search(r"\.?name:\s+(\S+)", block)
        fields = dict(re.findall(r"\.(\w+_size|kernarg_segment_align):\s+(\d+)", block))
        if name and "kernarg_segment_size" in fields:
            kernels[name.group(1)] = {k: int(v) for k, v in fields.items()}
    return kernels


# ---- subprocesses ------------------------------------------------------------

PRELUDE = """
import sys
sys.path.insert(0, {tests!r})
from hsa_raw import *
lib.hsa_init()
"""


def run_python(code: str, env: dict | None = None, timeout: float = 30) -> subprocess.CompletedProcess:
    """Run ``code`` (after a prelude that imports these helpers and calls hsa_init)
    in a fresh interpreter on the stub backend."""
    full = PRELUDE.format(tests=os.path.dirname(os.path.abspath(__file__))) + textwrap.dedent(code)
    e = dict(os.environ, ROCPY_BACKEND="stub", PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", full], cwd=REPO, env=e, capture_output=True, text=True,
                          timeout=timeout)


def assert_aborts(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == -6, f"returncode {proc.returncode}, stderr:\n{proc.stderr}"
    for needle in needles:
        assert needle in proc.stderr, f"{needle!r} not in stderr:\n{proc.stderr}"
