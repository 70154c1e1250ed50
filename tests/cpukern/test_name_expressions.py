"""Template kernels through Program's name expressions: instantiated in both halves of
the stub's build (hipRTC's C API, hip_rtc.c), run by their lowered names."""
from __future__ import annotations

import numpy as np
import pytest

import rocpy

SRC = """
template <typename T, int BLOCK> __global__ void block_sum(const T *x, T *out) {
    __shared__ T part[BLOCK];
    part[threadIdx.x] = x[blockIdx.x * BLOCK + threadIdx.x];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
"""
EXPRS = ("block_sum<float, 64>", "block_sum<int, 128>")


def test_program_name_expressions_run_each_instantiation(dev, compiler, stub_only):
    from rocpy import hip
    prog = hip.Program(SRC, name="sum.hip")
    mod = prog.compile(dev, name_expressions=EXPRS)
    try:
        assert prog.lowered_names == {"block_sum<float, 64>": "_Z9block_sumIfLi64EEvPKT_PS0_",
                                      "block_sum<int, 128>": "_Z9block_sumIiLi128EEvPKT_PS0_"}
        for expr, dtype, block in ((EXPRS[0], np.float32, 64), (EXPRS[1], np.int32, 128)):
            blocks = 5
            x = (np.arange(blocks * block) % 7).astype(dtype)
            src, out = dev.context.alloc(x.nbytes), dev.context.alloc(blocks * 4)
            try:
                src.copy_from(x)
                mod[prog.lowered_names[expr]].launch(blocks, block, (src, out))
                got = np.empty(blocks, dtype)
                out.copy_to(got)
            finally:
                src.close()
                out.close()
            assert (got == x.reshape(blocks, block).sum(axis=1)).all(), expr
    finally:
        mod.close()


def test_an_expression_naming_no_kernel_fails_to_compile(dev, compiler, stub_only):
    from rocpy import hip
    with pytest.raises(rocpy.HiprtcError) as info:
        hip.Program(SRC, name="sum.hip").compile(dev, name_expressions=["no_such_kernel<int>"])
    assert info.value.name == "HIPRTC_ERROR_COMPILATION"
    assert "no_such_kernel" in info.value.log
