"""$ROCPY_STUB_GUARD_PAGES=1: allocations end at an unmapped page, so a kernel writing one
element past its buffer is the GPU memory fault the stub models, at that address (by
default the write lands in the allocation's page-sized slack, as it does on a GPU)."""
from __future__ import annotations

import pytest

from cpukern_child import run_child

CHILD = """
import numpy as np
from rocpy import hip
dev = hip.Device(0)
src = ('extern "C" __global__ void past(float *p, int n) {'
       ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i <= n) p[i] = 1.0f; }')
mod = hip.Program(src, name="past.hip").compile(dev)
n = 256
buf = dev.context.alloc(n * 4)
print("ptr", buf.ptr, flush=True)
assert buf.ptr % 256 == 0
mod["past"].launch(2, 256, (buf, np.int32(n)))
dev.sync()
buf.close()
print("survived", flush=True)
"""


@pytest.mark.parametrize("guard", ["1", ""])
def test_one_element_past_the_end(compiler, stub_only, guard):
    proc = run_child(CHILD, ROCPY_STUB_GUARD_PAGES=guard)
    if not guard:
        assert proc.returncode == 0 and "survived" in proc.stdout, proc.stderr[-2000:]
        return
    assert proc.returncode < 0 and "survived" not in proc.stdout, proc.stderr[-2000:]
    ptr = int(proc.stdout.split()[1])
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("rocpy stub: hipModuleLaunchKernel: Memory access fault by GPU "
                           f"node-1 on address {hex(ptr + 256 * 4)} "), line
