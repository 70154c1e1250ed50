"""Two translation units that only work linked: `apply` (in CALLER) calls `twice` and
reads `offset`, both defined in CALLEE; used by the hiprtc linker's and the CPU
build's link tests alike."""
from __future__ import annotations

from typing import Any

import numpy as np

CALLER = """extern __device__ int twice(int x);
extern __device__ int offset;
extern "C" __global__ void apply(int *p) { p[threadIdx.x] = twice(p[threadIdx.x]) + offset; }
"""
CALLEE = "__device__ int offset = 7;\n__device__ int twice(int x) { return 2 * x; }\n"


def check_apply(dev: Any, mod: Any, n: int) -> None:
    """Run the linked module's `apply` over n ints on `dev` (closing `mod`) and check
    that every one came back as 2 x + 7."""
    host = np.arange(n, dtype=np.int32)
    buf = dev.context.alloc(host.nbytes)
    try:
        buf.copy_from(host)
        mod["apply"].launch(1, n, (buf,))
        got = np.empty_like(host)
        buf.copy_to(got)
    finally:
        buf.close()
        mod.close()
    assert (got == 2 * host + 7).all()
