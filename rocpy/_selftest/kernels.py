"""The selftest's kernels: their HIP source, built with the installed hipcc, and
their emulations for the stub runtime (which runs no GPU code).

The code objects are built once per target into ``$ROCPY_SELFTEST_CACHE``
(default: a ``rocpy-selftest`` folder in the temporary directory).
"""
from __future__ import annotations

import os
import subprocess
import tempfile
import time
from typing import Any

SOURCE = r"""
#include <hip/hip_runtime.h>

// what the work-item sees of its launch: 9 ints per work-item
extern "C" __global__ void st_probe(int *out, int n) {
    int i = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int g = i * blockDim.x * blockDim.y * blockDim.z + t;
    if (g >= n) return;
    int *o = out + 9 * g;
    o[0] = blockDim.x; o[1] = blockDim.y; o[2] = blockDim.z;
    o[3] = gridDim.x; o[4] = gridDim.y; o[5] = gridDim.z;
    o[6] = threadIdx.x; o[7] = threadIdx.y; o[8] = threadIdx.z;
}

// p[i] = value for i < n
extern "C" __global__ void st_fill(unsigned *p, unsigned value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}

// c[i] = a[i] + 1 for i < n (reads what an earlier dispatch wrote)
extern "C" __global__ void st_next(const unsigned *a, unsigned *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1;
}

// dynamic LDS: out[i] = i through shared memory
extern "C" __global__ void st_lds(int *out) {
    extern __shared__ int tmp[];
    tmp[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = tmp[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void __launch_bounds__(64) st_bounded(int *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = blockDim.x;
}

__device__ __attribute__((noinline)) int st_fib(int n) { return n < 2 ? n : st_fib(n - 1) + st_fib(n - 2); }

extern "C" __global__ void st_recursive(int *out, int n) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = st_fib(n);
}

// spins for about `ns` nanoseconds of the GPU's constant 100 MHz clock
extern "C" __global__ void st_spin(long long ns) {
    long long end = wall_clock64() + ns / 10;
    while (wall_clock64() < end) __builtin_amdgcn_s_sleep(1);
}
"""

NAMES = ("st_probe", "st_fill", "st_next", "st_lds", "st_bounded", "st_recursive", "st_spin")


from .._toolchain import find_hipcc  # noqa: E402  (re-exported: the one lookup)


def build(target: str, code_object_version: int = 4) -> str:
    """The selftest kernels as an offload bundle for `target` (a gfx name); its path.

    Code object v4 for the HSA path (its v5 kernels declare hidden buffers
    rocpy.hsa refuses).  Raises FileNotFoundError without hipcc.
    """
    hipcc = find_hipcc()
    if hipcc is None:
        raise FileNotFoundError("hipcc not found: the GPU checks need it to build their kernels "
                                "(install hipcc, or set HIPCC / ROCM_PATH)")
    arch = target.split(":")[0]
    cache = os.environ.get("ROCPY_SELFTEST_CACHE") or os.path.join(tempfile.gettempdir(),
                                                                   "rocpy-selftest")
    os.makedirs(cache, exist_ok=True)
    out = os.path.join(cache, f"selftest-{arch}-v{code_object_version}.hsaco")
    if not os.path.exists(out):
        src = os.path.join(cache, "selftest.hip")
        with open(src, "w") as f:
            f.write(SOURCE)
        tmp = f"{out}.{os.getpid()}"
        subprocess.run([hipcc, "--genco", f"--offload-arch={arch}",
                        f"-mcode-object-version={code_object_version}", src, "-o", tmp],
                       check=True, capture_output=True, env=dict(os.environ, HIP_PLATFORM="amd"))
        os.replace(tmp, out)
    return out


# ---- the stub's emulations ------------------------------------------------------------------

def _fib(n: int) -> int:
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


def _probe(d: Any) -> None:
    import numpy as np
    bx, by, bz = d.block
    blocks = [-(-g // b) for g, b in zip(d.grid, d.block)]
    per_block = bx * by * bz
    n = min(d.arg(8, "i"), blocks[0] * blocks[1] * blocks[2] * per_block)
    out = d.array(d.arg(0, "Q"), np.int32, 9 * n)
    for b in range(blocks[0] * blocks[1] * blocks[2]):
        for t in range(per_block):
            g = b * per_block + t
            if g >= n:
                continue
            tx, ty, tz = t % bx, (t // bx) % by, t // (bx * by)
            out[9 * g:9 * g + 9] = (bx, by, bz, *blocks, tx, ty, tz)


def _emulations() -> dict[str, Any]:
    import numpy as np

    def n_items(d: Any) -> int:
        result: int = d.grid[0] * d.grid[1] * d.grid[2]
        return result

    def fill(d: Any) -> None:
        n = min(d.arg(12, "i"), n_items(d))
        d.array(d.arg(0, "Q"), np.uint32, n)[:] = d.arg(8, "I")

    def next_(d: Any) -> None:
        n = min(d.arg(16, "i"), n_items(d))
        d.array(d.arg(8, "Q"), np.uint32, n)[:] = d.array(d.arg(0, "Q"), np.uint32, n) + 1

    def lds(d: Any) -> None:
        out = d.array(d.arg(0, "Q"), np.int32, n_items(d))
        b = d.block[0]
        out[:] = np.tile(np.arange(b - 1, -1, -1, dtype=np.int32), n_items(d) // b)

    def bounded(d: Any) -> None:
        d.array(d.arg(0, "Q"), np.int32, n_items(d))[:] = d.block[0]

    def recursive(d: Any) -> None:
        d.array(d.arg(0, "Q"), np.int32, n_items(d))[:] = _fib(d.arg(8, "i"))

    def spin(d: Any) -> None:
        time.sleep(d.arg(0, "q") / 1e9)

    return {"st_probe": _probe, "st_fill": fill, "st_next": next_, "st_lds": lds,
            "st_bounded": bounded, "st_recursive": recursive, "st_spin": spin}


def register_emulations() -> None:
    """On the stub backend, emulate the selftest kernels (idempotent)."""
    import rocpy
    if not rocpy.backend().is_stub:
        return
    from rocpy import stub
    for name, fn in _emulations().items():
        stub.register_kernel(name, fn)
