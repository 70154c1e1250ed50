"""CPU builds belong to the code object they came with: two modules (or HSA executables)
with kernels of the same name each run their own build, and unloading the last holder
drops it (rocpy.stub.cpu_builds)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import rocpy
import rocpy.debug

VADD = 'extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {\n' \
       '    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) c[i] = a[i] OP b[i];\n}\n'
OPS = {"-": np.subtract, "*": np.multiply}
N = 300


def _settle(dev) -> None:
    """Closed modules are unloaded once the work that uses them is done (the reaper)."""
    dev.sync()
    assert rocpy.debug.collect()


def _src(op: str, name: str = "vadd") -> str:
    return VADD.replace("OP", op).replace("vadd", name)


def _run_hip(dev, mod):
    a, b = np.arange(N, dtype=np.float32), np.full(N, 3, np.float32)
    bufs = [dev.context.alloc(N * 4) for _ in range(3)]
    try:
        bufs[0].copy_from(a)
        bufs[1].copy_from(b)
        mod["vadd"].launch((N + 127) // 128, 128, (*bufs, np.int32(N)))
        out = np.empty(N, np.float32)
        bufs[2].copy_to(out)
    finally:
        for x in bufs:
            x.close()
    return a, b, out


def test_two_modules_with_the_same_kernel_name_each_run_their_own(dev, compiler, stub_only):
    """Regression: CPU builds were found by kernel name for the whole process, so the
    module loaded second ran for both (the conftest forgot all builds after each test)."""
    from rocpy import hip, stub
    before = stub.cpu_builds()
    sub = hip.Program(_src("-"), name="sub.hip").compile(dev)
    mul = hip.Program(_src("*"), name="mul.hip").compile(dev)
    try:
        assert stub.cpu_builds() == before + 2
        for mod, op in ((sub, "-"), (mul, "*"), (sub, "-")):
            a, b, out = _run_hip(dev, mod)
            assert (out == OPS[op](a, b)).all(), op
        sub.close()
        _settle(dev)
        assert stub.cpu_builds() == before + 1
        a, b, out = _run_hip(dev, mul)
        assert (out == a * b).all()
    finally:
        sub.close()
        mul.close()
    _settle(dev)
    assert stub.cpu_builds() == before


def test_a_module_loaded_twice_shares_one_build_until_both_unload(dev, compiler, stub_only):
    from rocpy import cpukern, hip, stub
    data = cpukern.build_combined(_src("-"), [dev.target_id], name="sub.hip")
    before = stub.cpu_builds()
    one, two = hip.Module.load(data), hip.Module.load(data)
    try:
        assert stub.cpu_builds() == before + 1
        one.close()
        _settle(dev)
        assert stub.cpu_builds() == before + 1
        a, b, out = _run_hip(dev, two)
        assert (out == a - b).all()
    finally:
        one.close()
        two.close()
    _settle(dev)
    assert stub.cpu_builds() == before


@pytest.fixture
def stub_has_hsa(stub_only):
    from rocpy import _backend
    if not _backend.current().has_hsa:
        pytest.skip("this build's stub has no HSA half")


def _run_hsa(gpu, pool, q, exe, name="vadd"):
    from rocpy import hsa
    a, b = np.arange(N, dtype=np.float32), np.full(N, 3, np.float32)
    bufs = [pool.allocate(N * 4) for _ in range(3)]
    try:
        for x, v in zip(bufs, (a, b, np.zeros(N, np.float32))):
            x.allow_access([gpu])
            x.numpy(np.float32)[:] = v
        done = hsa.Signal(1)
        try:
            q.dispatch(exe.kernel(name), 384, 128, (*bufs, np.int32(N)), completion_signal=done)
            assert done.wait("eq", 0, timeout=60, raise_on_timeout=True) == 0
        finally:
            done.close()
        return a, b, bufs[2].numpy(np.float32).copy()
    finally:
        for x in bufs:
            x.close()


def test_two_hsa_executables_with_the_same_kernel_name_each_run_their_own(stub_has_hsa, compiler):
    from rocpy import cpukern, hsa, stub
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        files = {op: cpukern.build_combined(_src(op), [gpu.target], name=f"v{i}.hip")
                 for i, op in enumerate(OPS)}
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        before = stub.cpu_builds()
        with hsa.Executable.load(gpu, files["-"]) as sub, \
                hsa.Executable.load(gpu, files["*"]) as mul, gpu.create_queue() as q:
            # the offers are released: each executable's code object holds its build
            assert stub.cpu_builds() == before + 2
            for exe, op in ((sub, "-"), (mul, "*"), (sub, "-")):
                a, b, out = _run_hsa(gpu, pool, q, exe)
                assert (out == OPS[op](a, b)).all(), op
        assert stub.cpu_builds() == before


def test_a_bare_gpu_code_object_has_no_cpu_build(stub_has_hsa, compiler):
    """The build reaches an ELF only through the file it was bundled in: the same ELF
    loaded alone, with no offer held, has no way to run on the stub (a name with no
    built-in emulation: the tests enable the stub's built-in 'vadd')."""
    from rocpy import cpukern, hsa
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        data = cpukern.build_combined(_src("-", "vsub"), [gpu.target], name="sub.hip")
        elf = cpukern.gpu_code_object(
            rocpy.codeobject.load(data).select(gpu.target).data, gpu.target)
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        with hsa.Executable.load(gpu, data) as exe, hsa.Executable.load(gpu, elf) as bare:
            with gpu.create_queue() as q:
                a, b, out = _run_hsa(gpu, pool, q, exe, "vsub")
                assert (out == a - b).all()
            with gpu.create_queue() as q:
                p = pool.allocate(4)
                try:
                    p.allow_access([gpu])
                    q.dispatch(bare.kernel("vsub"), 1, 1, (p, p, p, np.int32(0)))
                    deadline = time.monotonic() + 60
                    while q.error is None and time.monotonic() < deadline:
                        time.sleep(0.01)
                finally:
                    p.close()
                assert q.error is not None and q.error.name == "HSA_STATUS_ERROR_INVALID_CODE_OBJECT"
