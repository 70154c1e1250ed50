"""The corpus of tests/cpukern/kernels: each kernel's result equals numpy's.

On the stub the kernels run their CPU build (rocpy.cpukern, through
Program.compile); on a GPU backend the same sources run on the GPU."""
from __future__ import annotations

import pytest

from corpus import CASES, check, compile_module


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_kernel_equals_numpy(case, dev, compiler):
    mod, _ = compile_module(dev, case.file)
    try:
        got, want, _ = case.run(dev, mod, 1)
        check(case, got, want)
    finally:
        mod.close()


def test_printf_lines_reach_stdout(dev, compiler, capfd):
    mod, _ = compile_module(dev, "printf")
    try:
        mod["hello"].launch(3, 64, (7,))
        dev.sync()
    finally:
        mod.close()
    lines = sorted(line for line in capfd.readouterr().out.splitlines() if "rocpy-hello" in line)
    assert lines == [f"rocpy-hello tag=7 block={b} of 3" for b in range(3)]


def test_warp_size_is_the_devices(dev, compiler):
    import numpy as np
    from rocpy import hip
    from rocpy.hip._api import api
    if not api().has("hiprtcCreateProgram") and rocpy_backend() == "nvidia":
        pytest.skip("inline sources need hipRTC on nvidia (the corpus falls back to nvcc files)")
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
