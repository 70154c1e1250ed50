"""Vector add through the HSA runtime, from Python.

    python examples/hsa_vadd.py [vadd.hsaco]

Without an argument the kernel (tests/kernels/vadd.hip) is compiled for the
first GPU with `rocpy.cpukern.build_combined` (hipcc's code object for the
GPU's target, and a CPU build of the same source, which the stub runs).  Runs
on a real AMD GPU and on rocpy's stub runtime alike (``ROCPY_BACKEND=stub``).

The steps are those of a C program against ROCr: agents and memory pools,
host memory the GPU may read, device memory, copies on the copy engine, an
AQL queue with a barrier-AND packet waiting for the copies, the kernel
dispatch, its completion signal, and the copy back.
"""
from __future__ import annotations

import os
import sys
import tempfile

import numpy as np

from rocpy import cpukern, hsa

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, os.pardir, "tests", "kernels", "vadd.hip")


def compile_vadd(arch: str, out_dir: str) -> str:
    """Build vadd.hip for `arch`: an offload bundle with the GPU code object and a CPU build."""
    out = os.path.join(out_dir, f"vadd-{arch}.co")
    with open(SOURCE) as f, open(out, "wb") as o:
        o.write(cpukern.build_combined(f.read(), [arch], name="vadd.hip"))
    return out


def vadd(path: str | None = None, n: int = 1 << 20) -> float:
    """Add two vectors of `n` floats on the first GPU; returns the kernel time in seconds."""
    nbytes = n * 4
    with hsa.Runtime() as rt, tempfile.TemporaryDirectory() as tmp:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        print(f"{gpu.product_name} ({gpu.target}), {gpu.compute_units} CUs; "
              f"HSA {'.'.join(map(str, rt.version))}")

        exe = hsa.Executable.load(gpu, path or compile_vadd(gpu.name, tmp))
        kernel = exe.kernel("vadd")

        # host memory (system, fine-grained) the GPU may read and write
        host = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        a_h, b_h, c_h = (host.allocate(nbytes) for _ in range(3))
        for buf in (a_h, b_h, c_h):
            buf.allow_access([gpu])
        a_h.numpy(np.float32)[:] = np.arange(n, dtype=np.float32)
        b_h.numpy(np.float32)[:] = 2.0

        # device memory (coarse-grained: the CPU may not touch it)
        device = gpu.pools(segment="global", fine_grained=False)[0]
        a, b, c = (device.allocate(nbytes) for _ in range(3))

        copied = hsa.Signal(2)                     # two copies, each decrements it
        hsa.copy_async(a, a_h, nbytes, completion=copied)
        hsa.copy_async(b, b_h, nbytes, completion=copied)

        with gpu.create_queue(profiling=True) as q:
            done = hsa.Signal(1)
            q.barrier_and([copied])                # the kernel starts after the copies
            q.dispatch(kernel, grid=n, workgroup=256, args=(a, b, c, np.int32(n)),
                       completion_signal=done)
            done.wait("eq", 0, timeout=60, raise_on_timeout=True)
            seconds = q.dispatch_time(done).seconds

        back = hsa.Signal(1)
        hsa.copy_async(c_h, c, nbytes, completion=back)
        back.wait("eq", 0, timeout=60, raise_on_timeout=True)

        result = c_h.numpy(np.float32)
        expected = np.arange(n, dtype=np.float32) + 2.0
        if not np.array_equal(result, expected):
            bad = int(np.flatnonzero(result != expected)[0])
            raise SystemExit(f"wrong result at {bad}: {result[bad]} != {expected[bad]}")
        print(f"vadd of {n} floats: ok ({seconds * 1e6:.1f} us in the kernel)")
        return seconds


if __name__ == "__main__":
    vadd(sys.argv[1] if len(sys.argv) > 1 else None)
