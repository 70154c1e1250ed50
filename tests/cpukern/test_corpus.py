"""The corpus of tests/cpukern/kernels: each kernel's result equals numpy's.

On the stub the kernels run their CPU build (rocpy.cpukern, through
Program.compile); on a GPU backend the same sources run on the GPU."""
from __future__ import annotations

import pytest

from corpus import CASES, check, source


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kernel_equals_numpy(case, dev, compiler):
    from rocpy import hip
    mod = hip.Program(source(case.file), name=case.file + ".hip").compile(dev)
    try:
        got, want, _ = case.run(dev, mod, 1)
        check(case, got, want)
    finally:
        mod.close()


def test_printf_lines_reach_stdout(dev, compiler, capfd):
    from rocpy import hip
    mod = hip.Program(source("printf"), name="printf.hip").compile(dev)
    try:
        mod["hello"].launch(3, 64, (7,))
        dev.synchronize()
    finally:
        mod.close()
    lines = sorted(line for line in capfd.readouterr().out.splitlines() if "rocpy-hello" in line)
    assert lines == [f"rocpy-hello tag=7 block={b} of 3" for b in range(3)]


def test_warp_size_is_the_devices(dev, compiler):
    import numpy as np
    from rocpy import hip
    mod = hip.Program('extern "C" __global__ void ws(int *o) { o[threadIdx.x] = warpSize; '
                      'o[64 + threadIdx.x] = __lane_id(); }' if rocpy_backend() == "stub" else
                      'extern "C" __global__ void ws(int *o) { o[threadIdx.x] = warpSize; '
                      'o[64 + threadIdx.x] = threadIdx.x % warpSize; }', name="ws.hip").compile(dev)
    buf = dev.context.alloc(128 * 4)
    try:
        mod["ws"].launch(1, 64, (buf,))
        out = np.empty(128, np.int32)
        buf.copy_to(out)
    finally:
        buf.close()
        mod.close()
    assert (out[:64] == dev.warp_size).all()
    assert (out[64:] == np.arange(64) % dev.warp_size).all()


def rocpy_backend() -> str:
    import rocpy
    return rocpy.backend().name
