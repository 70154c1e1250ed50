"""Modules and launches (hipamd hip_module.cpp, hip_platform.cpp,
hip_fatbin.cpp): code objects compiled at test time by hipcc, kernels run
through the stub's emulations."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from .helpers import (BACKEND, HostLog, check, ffi, hipamd, lib, malloc, ok, run_python, stream,
                      stub_only)

pytestmark = pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")


def load(path):
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, path.encode()))
    return m[0]


def function(module, name):
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, module, name.encode()))
    return f[0]


def params(*values):
    """kernelParams: an array of pointers to each argument's value."""
    keep = list(values)
    arr = ffi.new("void *[]", [ffi.cast("void *", v) for v in keep])
    return arr, keep


def arg(ctype, value):
    return ffi.new(ctype + " *", value)


def bundle_elf(path):
    """The first amdgcn ELF of an offload bundle."""
    data = open(path, "rb").read()
    assert data.startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    (count,) = struct.unpack_from("<Q", data, 24)
    pos = 32
    for _ in range(count):
        offset, size, idlen = struct.unpack_from("<QQQ", data, pos)
        ident = data[pos + 24:pos + 24 + idlen].decode()
        pos += 24 + idlen
        if ident.startswith("hipv4-amdgcn") or ident.startswith("hip-amdgcn"):
            return data[offset:offset + size]
    raise AssertionError("no amdgcn entry")


@pytest.fixture(scope="module")
def vadd(hip_kernel):
    m = load(hip_kernel("vadd"))
    yield m, function(m, "vadd")
    ok(lib.hipModuleUnload(m))


@pytest.fixture(scope="module")
def fill(hip_kernel):
    m = load(hip_kernel("fill"))
    yield m, function(m, "fill")
    ok(lib.hipModuleUnload(m))


def launch_vadd(f, a, b, c, n, stream_=ffi.NULL, block=256):
    p, keep = params(arg("void *", a), arg("void *", b), arg("void *", c), arg("int", n))
    status = lib.hipModuleLaunchKernel(f, (n + block - 1) // block, 1, 1, block, 1, 1, 0,
                                       stream_, p, ffi.NULL)
    del keep
    return status


# platform-independent (AMD): load, get a function, launch, read back
def test_vadd(vadd):
    _, f = vadd
    n = 1000
    a, b = np.arange(n, dtype=np.float32), np.full(n, 2, dtype=np.float32)
    da, db, dc = malloc(n * 4), malloc(n * 4), malloc(n * 4)
    ok(lib.hipMemcpy(da, ffi.from_buffer(a), n * 4, lib.hipMemcpyHostToDevice))
    ok(lib.hipMemcpy(db, ffi.from_buffer(b), n * 4, lib.hipMemcpyHostToDevice))
    ok(launch_vadd(f, da, db, dc, n))
    c = np.zeros(n, dtype=np.float32)
    ok(lib.hipMemcpy(ffi.from_buffer(c), dc, n * 4, lib.hipMemcpyDeviceToHost))
    assert (c == a + b).all()
    for d in (da, db, dc):
        ok(lib.hipFree(d))


# platform-independent (AMD): the same launch through `extra`
def test_launch_with_extra_buffer(vadd):
    _, f = vadd
    n = 64
    da, db, dc = malloc(n * 4), malloc(n * 4), malloc(n * 4)
    ok(lib.hipMemsetD32(da, 0x3F800000, n))          # 1.0f
    ok(lib.hipMemsetD32(db, 0x40000000, n))          # 2.0f
    raw = ffi.new("char[32]")
    ffi.memmove(raw, struct.pack("<QQQi", int(ffi.cast("uintptr_t", da)),
                                 int(ffi.cast("uintptr_t", db)),
                                 int(ffi.cast("uintptr_t", dc)), n), 28)
    size = ffi.new("size_t *", 32)
    extra = ffi.new("void *[5]", [lib.HIP_LAUNCH_PARAM_BUFFER_POINTER, raw,
                                  lib.HIP_LAUNCH_PARAM_BUFFER_SIZE, size,
                                  lib.HIP_LAUNCH_PARAM_END])
    ok(lib.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, ffi.NULL, ffi.NULL, extra))
    c = np.zeros(n, dtype=np.float32)
    ok(lib.hipMemcpy(ffi.from_buffer(c), dc, n * 4, lib.hipMemcpyDeviceToHost))
    assert (c == 3.0).all()
    bad = ffi.new("void *[5]", [lib.HIP_LAUNCH_PARAM_BUFFER_SIZE, raw,
                                lib.HIP_LAUNCH_PARAM_BUFFER_POINTER, size,
                                lib.HIP_LAUNCH_PARAM_END])
    check(lib.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, ffi.NULL, ffi.NULL, bad),
          "hipErrorNotInitialized")
    p, keep = params(arg("void *", da), arg("void *", db), arg("void *", dc), arg("int", n))
    check(lib.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, ffi.NULL, p, extra),
          "hipErrorInvalidValue")
    for d in (da, db, dc):
        ok(lib.hipFree(d))


# hipamd-specific (5.2): launch configuration statuses
@hipamd
def test_bad_launch_configurations(vadd):
    _, f = vadd
    d = malloc(1024)
    p, keep = params(arg("void *", d), arg("void *", d), arg("void *", d), arg("int", 256))

    def launch(grid=(1, 1, 1), block=(256, 1, 1), shared=0, func=f, stream_=ffi.NULL):
        return lib.hipModuleLaunchKernel(func, *grid, *block, shared, stream_, p, ffi.NULL)

    ok(launch())
    check(launch(block=(0, 1, 1)), "hipErrorInvalidValue")
    check(launch(grid=(0, 1, 1)), "hipErrorInvalidValue")
    check(launch(block=(1025, 1, 1)), "hipErrorInvalidConfiguration")
    check(launch(block=(32, 32, 2)), "hipErrorInvalidConfiguration")
    check(launch(grid=(2**31, 1, 1), block=(4, 1, 1)), "hipErrorInvalidConfiguration")
    check(launch(func=ffi.NULL), "hipErrorInvalidImage")
    check(launch(shared=128 << 10), "hipErrorOutOfMemory")
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    check(launch(stream_=dead), "hipErrorContextIsDestroyed")
    check(lib.hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, ffi.NULL, ffi.NULL, ffi.NULL),
          "hipErrorInvalidValue")                           # arguments are needed
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipFree(d))


# hipamd-specific statuses of loading
@hipamd
def test_load_statuses(hip_kernel, tmp_path):
    m = ffi.new("hipModule_t *")
    check(lib.hipModuleLoad(m, str(tmp_path / "missing.hsaco").encode()), "hipErrorFileNotFound")
    empty = tmp_path / "empty.hsaco"
    empty.write_bytes(b"")
    check(lib.hipModuleLoad(m, str(empty).encode()), "hipErrorInvalidKernelFile")
    junk = tmp_path / "junk.hsaco"
    junk.write_bytes(b"this is not a code object" * 10)
    check(lib.hipModuleLoad(m, str(junk).encode()), "hipErrorInvalidKernelFile")
    check(lib.hipModuleLoadData(m, ffi.new("char[]", b"junk" * 16)), "hipErrorInvalidKernelFile")
    check(lib.hipModuleLoad(ffi.NULL, hip_kernel("vadd").encode()), "hipErrorInvalidValue")
    check(lib.hipModuleLoadData(m, ffi.NULL), "hipErrorInvalidValue")
    other = hip_kernel("vadd", archs=("gfx1030",))
    check(lib.hipModuleLoad(m, other.encode()), "hipErrorNoBinaryForGpu")
    elf = ffi.new("char[]", bundle_elf(other))
    check(lib.hipModuleLoadData(m, elf), "hipErrorNoBinaryForGpu")
    check(lib.hipModuleUnload(ffi.NULL), "hipErrorNotFound")


# platform-independent (AMD): a module from memory, bundle or bare ELF
def test_load_data_and_data_ex(hip_kernel):
    path = hip_kernel("vadd", archs=("gfx90a", "gfx1030"))
    image = ffi.new("char[]", open(path, "rb").read())
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoadData(m, image))
    function(m[0], "vadd")
    ok(lib.hipModuleUnload(m[0]))
    check(lib.hipModuleUnload(m[0]), "hipErrorNotFound")
    elf = ffi.new("char[]", bundle_elf(hip_kernel("vadd")))
    ok(lib.hipModuleLoadDataEx(m, elf, 0, ffi.NULL, ffi.NULL))
    function(m[0], "vadd")
    ok(lib.hipModuleUnload(m[0]))


# hipamd-specific: function and global lookups
@hipamd
def test_functions_and_globals(hip_kernel):
    m = load(hip_kernel("args"))
    f = ffi.new("hipFunction_t *")
    check(lib.hipModuleGetFunction(f, m, b"nope"), "hipErrorNotFound")
    check(lib.hipModuleGetFunction(f, m, b""), "hipErrorNotFound")
    check(lib.hipModuleGetFunction(f, m, b"scalars.kd"), "hipErrorNotFound")
    check(lib.hipModuleGetFunction(ffi.NULL, m, b"scalars"), "hipErrorInvalidValue")
    check(lib.hipModuleGetFunction(f, m, ffi.NULL), "hipErrorInvalidValue")
    ptr, size = ffi.new("hipDeviceptr_t *"), ffi.new("size_t *")
    ok(lib.hipModuleGetGlobal(ptr, size, m, b"counter"))
    assert size[0] == 4
    value = np.zeros(1, dtype=np.int32)
    ok(lib.hipMemcpy(ffi.from_buffer(value), ptr[0], 4, lib.hipMemcpyDeviceToHost))
    assert value[0] == 3
    ok(lib.hipModuleGetGlobal(ptr, size, m, b"table"))
    table = np.zeros(16, dtype=np.float32)
    ok(lib.hipMemcpy(ffi.from_buffer(table), ptr[0], 64, lib.hipMemcpyDeviceToHost))
    assert list(table[:4]) == [1.0, 2.0, 3.0, 0.0]
    ok(lib.hipModuleGetGlobal(ptr, size, m, b"scratch"))
    assert size[0] == 800
    check(lib.hipFree(ptr[0]), "hipErrorInvalidValue")        # the module's, not ours
    check(lib.hipModuleGetGlobal(ptr, size, m, b"nope"), "hipErrorNotFound")
    check(lib.hipModuleGetGlobal(ptr, size, m, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipModuleGetGlobal(ffi.NULL, size, m, b"counter"))    # 5.2: a no-op
    ok(lib.hipModuleUnload(m))
    check(lib.hipModuleGetFunction(f, m, b"scalars"), "hipErrorNotFound")


# hipamd-specific: attributes from the metadata
@hipamd
def test_function_attributes(vadd):
    _, f = vadd
    v = ffi.new("int *")
    ok(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f))
    assert v[0] == 1024
    ok(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f))
    assert v[0] == 0
    ok(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f))
    assert v[0] == 65536
    ok(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_PTX_VERSION, f))
    assert v[0] == 30
    ok(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_NUM_REGS, f))
    assert v[0] > 0
    check(lib.hipFuncGetAttribute(v, 999, f), "hipErrorInvalidValue")
    check(lib.hipFuncGetAttribute(ffi.NULL, lib.HIP_FUNC_ATTRIBUTE_NUM_REGS, f),
          "hipErrorInvalidValue")
    check(lib.hipFuncGetAttribute(v, lib.HIP_FUNC_ATTRIBUTE_NUM_REGS, ffi.NULL),
          "hipErrorInvalidValue")
    check(lib.hipFuncGetAttributes(ffi.NULL, f), "hipErrorInvalidValue")


# stub: hipFuncGetAttributes also takes a hipFunction_t (no host functions
# are ever registered with the stub)
@stub_only
def test_func_get_attributes_of_module_function(vadd):
    _, f = vadd
    a = ffi.new("hipFuncAttributes *")
    ok(lib.hipFuncGetAttributes(a, f))
    assert a.maxThreadsPerBlock == 1024 and a.ptxVersion == 30 and a.numRegs > 0
    check(lib.hipFuncGetAttributes(a, ffi.cast("void *", 0x1234)), "hipErrorInvalidSymbol")
    check(lib.hipLaunchKernel(ffi.cast("void *", 0x1234), (1, 1, 1), (1, 1, 1), ffi.NULL, 0,
                              ffi.NULL), "hipErrorInvalidDeviceFunction")


# platform-independent (AMD): kernels keep stream order with copies and host
# work, on several streams fed by several threads
def test_kernels_in_stream_order(fill):
    import threading
    _, f = fill
    n = 4096
    results = {}

    def worker(k):
        s = stream(lib.hipStreamNonBlocking)
        d = malloc(n * 4)
        log = HostLog()
        log.enqueue(s, "slow", delay=0.02)
        outs = []
        for v in range(5):
            p, keep = params(arg("void *", d), arg("unsigned", 100 * k + v), arg("int", n))
            ok(lib.hipModuleLaunchKernel(f, n // 256, 1, 1, 256, 1, 1, 0, s, p, ffi.NULL))
            out = np.zeros(n, dtype=np.uint32)
            ok(lib.hipMemcpyAsync(ffi.from_buffer(out), d, n * 4, lib.hipMemcpyDeviceToHost, s))
            outs.append(out)
        ok(lib.hipStreamSynchronize(s))
        results[k] = [int(o[0]) if (o == o[0]).all() else -1 for o in outs]
        ok(lib.hipStreamDestroy(s))
        ok(lib.hipFree(d))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: [100 * k + v for v in range(5)] for k in range(3)}


# platform-independent (AMD): kernels captured into a graph, and kernel nodes
def test_kernel_in_graph(fill):
    _, f = fill
    n = 512
    d = malloc(n * 4)
    ok(lib.hipMemset(d, 0, n * 4))
    s = stream()
    p, keep = params(arg("void *", d), arg("unsigned", 42), arg("int", n))
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    ok(lib.hipModuleLaunchKernel(f, n // 128, 1, 1, 128, 1, 1, 0, s, p, ffi.NULL))
    g = ffi.new("hipGraph_t *")
    ok(lib.hipStreamEndCapture(s, g))
    out = np.zeros(n, dtype=np.uint32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, n * 4, lib.hipMemcpyDeviceToHost))
    assert (out == 0).all()                         # captured, not run
    node = ffi.new("hipGraphNode_t *")
    kp = ffi.new("hipKernelNodeParams *")
    kp.func = f
    kp.gridDim.x, kp.gridDim.y, kp.gridDim.z = n // 128, 1, 1
    kp.blockDim.x, kp.blockDim.y, kp.blockDim.z = 64, 1, 1     # half the items
    p2, keep2 = params(arg("void *", d), arg("unsigned", 7), arg("int", n))
    kp.kernelParams = p2
    roots = ffi.new("hipGraphNode_t[1]")
    count = ffi.new("size_t *", 1)
    ok(lib.hipGraphGetRootNodes(g[0], roots, count))
    ok(lib.hipGraphAddKernelNode(node, g[0], roots, 1, kp))
    t = ffi.new("hipGraphNodeType *")
    ok(lib.hipGraphNodeGetType(node[0], t))
    assert t[0] == lib.hipGraphNodeTypeKernel
    x = ffi.new("hipGraphExec_t *")
    ok(lib.hipGraphInstantiate(x, g[0], ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(x[0], s))
    ok(lib.hipStreamSynchronize(s))
    ok(lib.hipMemcpy(ffi.from_buffer(out), d, n * 4, lib.hipMemcpyDeviceToHost))
    assert (out[:n // 2] == 7).all() and (out[n // 2:] == 42).all()
    kp.kernelParams = ffi.NULL
    check(lib.hipGraphAddKernelNode(node, g[0], ffi.NULL, 0, kp), "hipErrorInvalidValue")
    kp.func = ffi.cast("void *", 0x1234)
    kp.kernelParams = p2
    check(lib.hipGraphAddKernelNode(node, g[0], ffi.NULL, 0, kp), "hipErrorInvalidDeviceFunction")
    ok(lib.hipGraphExecDestroy(x[0]))
    ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))
    ok(lib.hipFree(d))


# stub: a kernel without an emulation fails its launch, nothing is enqueued
@stub_only
def test_kernel_without_emulation(hip_kernel):
    m = load(hip_kernel("args"))
    f = function(m, "scalars")
    out = malloc(8)
    p, keep = params(arg("signed char", 1), arg("short", 2), arg("int", 3), arg("long long", 4),
                     arg("float", 5), arg("double", 6), arg("unsigned char", 7),
                     arg("void *", out))
    check(lib.hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, ffi.NULL, p, ffi.NULL),
          "hipErrorLaunchFailure")
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipFree(out))
    ok(lib.hipModuleUnload(m))


# stub: an injected queue error fails the launch
@stub_only
def test_injected_queue_error(vadd):
    _, f = vadd
    d = malloc(1024)
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_QUEUE_ERROR, 0, 1)
    try:
        check(launch_vadd(f, d, d, d, 256), "hipErrorLaunchFailure")
        ok(launch_vadd(f, d, d, d, 256))
    finally:
        lib.rocpy_stub_clear_faults()
    ok(lib.hipDeviceSynchronize())
    ok(lib.hipFree(d))


FILL_16 = """
from rocpy import hip
lib, ffi = hip.lib, hip.ffi
m = ffi.new('hipModule_t *'); f = ffi.new('hipFunction_t *')
assert lib.hipModuleLoad(m, {path!r}.encode()) == 0
assert lib.hipModuleGetFunction(f, m[0], b'fill') == 0
d = ffi.new('void **'); lib.hipMalloc(d, 64)                     # 16 unsigned
print(hex(int(ffi.cast('uintptr_t', d[0])) + 64), flush=True)     # the first byte past them
args = [ffi.new('void **', d[0]), ffi.new('unsigned *', 1), ffi.new('int *', {n})]
p = ffi.new('void *[3]', [ffi.cast('void *', a) for a in args])
{before}
assert lib.hipModuleLaunchKernel(f[0], 1,1,1, {n},1,1, 0, ffi.NULL, p, ffi.NULL) == 0
lib.hipDeviceSynchronize()
print('survived')
"""


# stub: a memory fault in a kernel kills the process, as on hardware: an
# injected one, and a kernel reaching past its buffer, whose report names the
# first byte past it (as the HSA side's does)
@stub_only
@pytest.mark.parametrize("n,before,report", [
    (16, "lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_MEMORY_FAULT, 0, 1)",
     "Memory access fault by GPU node-1 on kernel fill (injected)"),
    (32, "", "Memory access fault by GPU node-1 on address {past} (kernel fill on device 0)"),
], ids=["injected", "past the buffer"])
def test_memory_fault_aborts(hip_kernel, n, before, report):
    r = run_python(FILL_16.format(path=hip_kernel("fill"), n=n, before=before))
    assert r.returncode == -6 and "survived" not in r.stdout, r.stderr
    assert report.format(past=r.stdout.split()[0]) in r.stderr, r.stderr


PROBE = """
#include <hip/hip_runtime.h>
extern "C" __global__ void hidden_probe(int *out, int n) {
    if ((int)threadIdx.x < n) out[threadIdx.x] = blockDim.x * gridDim.x + blockDim.y * gridDim.y;
}
"""


# stub: arguments and hidden arguments as an emulation sees them (code object
# v5: block counts, group sizes, remainders, grid dims, dynamic LDS)
@stub_only
def test_kernarg_layout_seen_by_an_emulation(kernel_cache, tmp_path):
    from kernels import readelf
    from kernels.compile import compile_hip, find_hipcc
    if find_hipcc() is None or readelf.find_readelf() is None:
        pytest.skip("hipcc and llvm-readelf are needed")
    src = tmp_path / "hidden_probe.hip"
    src.write_text(PROBE)
    path = compile_hip("hidden_probe", kernel_cache, flags=("-mcode-object-version=5",),
                       source=str(src))
    elf = tmp_path / "probe.elf"
    elf.write_bytes(bundle_elf(path))
    kernel = readelf.metadata(str(elf))["amdhsa.kernels"][0]
    from rocpy import stub
    seen = []

    def emulate(d):
        seen.append((bytes(d.kernarg), d.grid, d.block, d.group_segment_size))
        return 0

    stub.register_kernel("hidden_probe", emulate)
    try:
        m = load(path)
        f = function(m, "hidden_probe")
        out = malloc(64)
        p, keep = params(arg("void *", out), arg("int", 9))
        ok(lib.hipModuleLaunchKernel(f, 3, 2, 1, 20, 3, 1, 100, ffi.NULL, p, ffi.NULL))
        ok(lib.hipDeviceSynchronize())
        ok(lib.hipFree(out))
        ok(lib.hipModuleUnload(m))
    finally:
        stub.unregister_kernel("hidden_probe")
    kernarg, grid, block, lds = seen[0]
    assert grid == (60, 6, 1) and block == (20, 3, 1)
    assert lds == kernel[".group_segment_fixed_size"] + 100
    assert len(kernarg) >= kernel[".kernarg_segment_size"]
    expected = {"hidden_block_count_x": 3, "hidden_block_count_y": 2, "hidden_block_count_z": 1,
                "hidden_group_size_x": 20, "hidden_group_size_y": 3, "hidden_group_size_z": 1,
                "hidden_remainder_x": 0, "hidden_remainder_y": 0, "hidden_grid_dims": 3,
                "hidden_dynamic_lds_size": 100}
    fmt = {1: "<B", 2: "<H", 4: "<I", 8: "<Q"}
    checked = set()
    for a in kernel[".args"]:
        value = struct.unpack_from(fmt[a[".size"]], kernarg, a[".offset"])[0]
        kind = a[".value_kind"]
        if kind == "global_buffer":
            assert value == int(ffi.cast("uintptr_t", out))
        elif kind == "by_value":
            assert value == 9
        elif kind in expected:
            assert value == expected[kind], kind
            checked.add(kind)
        elif kind.startswith("hidden_global_offset"):
            assert value == 0
    assert {"hidden_block_count_x", "hidden_group_size_x"} <= checked
