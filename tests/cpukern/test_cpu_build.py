"""How the stub finds and runs CPU builds: lookup order, faults, barriers, unsupported code,
the combined file, the cache."""
from __future__ import annotations

import shutil
import signal
import subprocess

import numpy as np
import pytest

import rocpy
from cpukern_child import run_child

SUB = 'extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n' \
      '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] - b[i];\n}\n'


def _vadd_run(dev, mod, n=300):
    a, b = np.arange(n, dtype=np.float32), np.full(n, 2, np.float32)
    bufs = [dev.context.alloc(n * 4) for _ in range(3)]
    bufs[0].copy_from(a)
    bufs[1].copy_from(b)
    try:
        mod["vadd"].launch((n + 127) // 128, 128, (*bufs, np.int32(n)))
        out = np.empty(n, np.float32)
        bufs[2].copy_to(out)
    finally:
        for x in bufs:
            x.close()
    return a, b, out


def test_cpu_build_goes_before_the_builtin_emulation(dev, compiler, stub_only):
    """Regression: the stub's built-in 'vadd' (a + b) ran in place of a user's kernel of the
    same name; its CPU build now goes first, so a - b comes back."""
    from rocpy import hip
    mod = hip.Program(SUB, name="sub.hip").compile(dev)
    try:
        a, b, out = _vadd_run(dev, mod)
    finally:
        mod.close()
    assert (out == a - b).all()


def test_a_users_emulation_goes_before_the_cpu_build(dev, compiler, stub_only):
    import rocpy.stub
    from rocpy import hip
    mod = hip.Program(SUB, name="sub.hip").compile(dev)

    def emulate(d):
        c = d.array(d.arg(16, "Q"), np.float32, d.arg(24, "i"))
        c[:] = 42
    rocpy.stub.register_kernel("vadd", emulate)
    try:
        _, _, out = _vadd_run(dev, mod)
    finally:
        rocpy.stub.unregister_kernel("vadd")
        mod.close()
    assert (out == 42).all()


@pytest.mark.parametrize("what, snippet", [
    ("__builtin_amdgcn_s_sleep", "__builtin_amdgcn_s_sleep(1);"),
    ("inline assembly", 'asm volatile("s_nop 0");'),
])
def test_unsupported_code_fails_naming_it(dev, compiler, stub_only, what, snippet):
    from rocpy import hip
    src = 'extern "C" __global__ void k(int *p) {\n    ' + snippet + '\n    p[0] = 1;\n}\n'
    with pytest.raises(rocpy.HiprtcError) as info:
        hip.Program(src, name="k.hip").compile(dev)
    assert info.value.name == "HIPRTC_ERROR_COMPILATION"
    assert what in info.value.log and "k.hip:2" in info.value.log
    assert "CPU build cannot provide" in str(info.value)


def test_a_cpu_compile_error_carries_the_compilers_log(stub_only, compiler):
    from rocpy import cpukern
    with pytest.raises(cpukern.CpuCompileError) as info:
        cpukern.build('extern "C" __global__ void k(int *p) { p[0] = undeclared_name; }',
                      "bad.hip")
    assert "undeclared_name" in info.value.log and "bad.hip:1" in info.value.log


def test_builds_are_cached_by_source(stub_only, compiler, tmp_path, monkeypatch):
    from rocpy import cpukern
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = cpukern.build(SUB, "sub.hip")
    again = cpukern.build(SUB, "sub.hip")
    other = cpukern.build(SUB.replace("a[i] - b[i]", "a[i] * b[i]"), "sub.hip")
    assert not first.cached and again.cached and not other.cached
    assert first.path == again.path != other.path and first.path.startswith(str(tmp_path))
    assert first.kernels == ("vadd",) and first.fibers == {"vadd": False}


def test_combined_file_loads_on_the_stub_and_keeps_the_gpu_code_object(dev, compiler, stub_only):
    from rocpy import codeobject, cpukern, hip
    data = cpukern.build_combined(SUB, [dev.target_id, "gfx1030"], name="sub.hip")
    f = codeobject.load(data)
    # what a ROCm runtime picks: the amdgcn entries, the CPU build being none of them
    assert sorted(str(t) for t in f.targets) == sorted([dev.target_id, "gfx1030"])
    assert "vadd" in f.select(dev.target_id).kernels
    assert cpukern.cpu_build_of(data)[:4] == b"\x7fELF"
    mod = hip.Module.load(data, dev)
    try:
        a, b, out = _vadd_run(dev, mod)
    finally:
        mod.close()
    assert (out == a - b).all()


def test_clang_offload_bundler_lists_and_unbundles_the_combined_file(dev, compiler, stub_only,
                                                                      tmp_path):
    from rocpy import cpukern
    tool = shutil.which("clang-offload-bundler") or shutil.which("clang-offload-bundler-15")
    if tool is None:
        pytest.skip("no clang-offload-bundler")
    data = cpukern.build_combined(SUB, [dev.target_id], name="sub.hip")
    path = tmp_path / "sub.co"
    path.write_bytes(data)
    listed = subprocess.run([tool, "--list", "--type=o", f"--input={path}"], capture_output=True,
                            text=True, check=True).stdout.split()
    gpu_id = f"hipv4-amdgcn-amd-amdhsa--{dev.target_id}"
    assert sorted(listed) == sorted(["host-x86_64-unknown-linux-gnu-", gpu_id, cpukern.BUNDLE_ID])
    out = tmp_path / "gpu.o"
    subprocess.run([tool, "--unbundle", "--type=o", f"--input={path}", f"--targets={gpu_id}",
                    f"--output={out}"], check=True, capture_output=True)
    assert out.read_bytes() == cpukern.gpu_code_object(data, dev.target_id)


CHILD = """
import sys, numpy as np, rocpy
from rocpy import hip
from corpus import source
dev = hip.Device(0)
mod = hip.Program(source(sys.argv[1] if len(sys.argv) > 1 else "{file}"), name="{file}.hip").compile(dev)
buf = dev.context.alloc(4096)
print("ptr", buf.ptr, flush=True)
{launch}
dev.sync()
print("survived", flush=True)
"""


def _child(file: str, launch: str):
    return run_child(CHILD.replace("{file}", file).replace("{launch}", launch))


@pytest.mark.parametrize("how", ["stride", "null"])
def test_out_of_bounds_write_is_a_gpu_memory_fault(dev, compiler, stub_only, how):
    stride = 1 << 40
    arg = "None" if how == "null" else "buf"
    proc = _child("oob", f'mod["oob"].launch(1, 64, ({arg}, np.int64({stride})))')
    assert proc.returncode < 0 and "survived" not in proc.stdout, proc.stderr[-2000:]
    ptr = int(proc.stdout.split()[1])
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("rocpy stub: hipModuleLaunchKernel: Memory access fault by GPU node-1 "
                           "on address "), line
    # work-item 0 writes p[0] (in the buffer, or the null page), work-item 1 p[stride]
    want = 0 if how == "null" else ptr + 4 * stride
    assert f"on address {hex(want)} " in line, (line, hex(want))


def test_a_barrier_part_of_the_block_reaches_is_reported(dev, compiler, stub_only):
    """A failed launch, reported at the next synchronization (the stub's rule for a
    kernel that fails without a trap or a fault): the process survives."""
    proc = _child("partial_barrier", 'mod["partial_barrier"].launch(1, 64, (buf,))')
    assert proc.returncode == 1 and "survived" not in proc.stdout, proc.stderr[-2000:]
    assert "hipErrorLaunchFailure" in proc.stderr
    assert "kernel partial_barrier (CPU build) failed: __syncthreads() reached by only part of " \
           "the block" in proc.stderr


def test_a_failed_device_assert_fails_the_launch(dev, compiler, stub_only):
    code = CHILD.replace("{launch}", 'mod["k"].launch(2, 32, (buf, np.int32(5)))').replace(
        'source(sys.argv[1] if len(sys.argv) > 1 else "{file}")',
        "'#include <cassert>\\n" + 'extern "C" __global__ void k(int *p, int lim) '
        "{ assert(threadIdx.x < lim); p[threadIdx.x] = 1; }'").replace("{file}", "assert")
    proc = run_child(code)
    # a trap: the queue fails and ROCclr's queue callback aborts the process
    assert proc.returncode == -signal.SIGABRT and "survived" not in proc.stdout, proc.stderr[-2000:]
    assert "Device-side assertion `threadIdx.x < lim' failed" in proc.stderr
    assert "HSA_STATUS_ERROR_EXCEPTION" in proc.stderr
    assert "kernel k (CPU build) failed: a device-side assert failed" in proc.stderr


def test_warp_operations_at_gfx10_width(compiler, stub_only):
    """gfx1030 has 32-lane wavefronts: the warp corpus kernels see 32 and still match numpy."""
    proc = run_child("""
from rocpy import hip
from corpus import CASES, check, source
dev = hip.Device(0)
print("warp", dev.warp_size, dev.arch, flush=True)
for case in CASES:
    if case.name in ("ballot", "warp_reduce"):
        mod = hip.Program(source(case.file), name=case.file + ".hip").compile(dev)
        got, want, _ = case.run(dev, mod, 1)
        check(case, got, want)
        mod.close()
        print("ok", case.name, flush=True)
""", ROCPY_STUB_ARCH="gfx1030")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["warp", "32", "gfx1030", "ok", "warp_reduce", "ok", "ballot"]


def test_scan_finds_which_kernels_need_fibers(stub_only):
    """A kernel runs as a plain loop only if nothing it names reaches a barrier or warp op."""
    from rocpy import cpukern
    src = """
    #define SYNC() __syncthreads()
    __device__ void helper() { SYNC(); }
    __device__ float shuffle(float v) { return __shfl_xor(v, 1); }
    extern "C" __global__ void plain(int *p) { p[threadIdx.x] = 1; }
    extern "C" __global__ void through_macro(int *p) { helper(); }
    extern "C" __global__ void through_warp(float *p) { p[0] = shuffle(p[0]); }
    template <typename T> __global__ void templated(T *p) { __syncthreads(); }
    __global__ void mangled(int *p) { p[0] = 2; }
    """
    kernels, fibers = cpukern.scan(src)
    assert kernels == ("plain", "through_macro", "through_warp", "mangled")
    assert fibers == {"plain": False, "through_macro": True, "through_warp": True, "mangled": False}


def test_a_mangled_kernel_runs_by_its_symbol(dev, compiler, stub_only):
    """Kernels without extern "C" are found by the mangled name the code object lists."""
    import numpy as np
    from rocpy import hip
    mod = hip.Program("__global__ void twice(int *p, int n) {\n"
                      "    int i = threadIdx.x; if (i < n) p[i] *= 2;\n}\n", name="m.hip").compile(dev)
    buf = dev.context.alloc(64 * 4)
    try:
        name = next(iter(mod.names))
        assert name.startswith("_Z5twice")
        buf.copy_from(np.arange(64, dtype=np.int32))
        mod[name].launch(1, 64, (buf, np.int32(64)))
        out = np.empty(64, np.int32)
        buf.copy_to(out)
    finally:
        buf.close()
        mod.close()
    assert (out == 2 * np.arange(64)).all()
