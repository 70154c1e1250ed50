"""HSA dispatches of a combined file's kernels run its CPU build on the stub."""
from __future__ import annotations

import numpy as np
import pytest

from corpus import source


@pytest.fixture
def stub_has_hsa(stub_only):
    from rocpy import _backend
    if not _backend.current().has_hsa:
        pytest.skip("this build's stub has no HSA half")


def test_hsa_dispatch_runs_the_cpu_build(stub_has_hsa, compiler):
    from rocpy import cpukern, hsa
    n, blocks = 256 * 8 + 5, 9
    x = np.arange(n, dtype=np.float32) % 17
    with hsa.Runtime() as rt:
        gpu, cpu = rt.gpu_agents[0], rt.cpu_agents[0]
        data = cpukern.build_combined(source("reduce_shared"), [gpu.target], name="reduce.hip")
        pool = cpu.pools(segment="global", fine_grained=True, kernarg=False)[0]
        with hsa.Executable.load(gpu, data) as exe, gpu.create_queue() as q:
            k = exe.kernel("reduce_shared")
            src, out = pool.allocate(x.nbytes), pool.allocate(blocks * 4)
            try:
                src.allow_access([gpu])
                out.allow_access([gpu])
                src.numpy(np.float32)[:] = x
                out.numpy(np.float32)[:] = -1
                done = hsa.Signal(1)
                q.dispatch(k, blocks * 256, 256, (src, out, np.int32(n)), completion_signal=done)
                assert done.wait("eq", 0, timeout=60, raise_on_timeout=True) == 0
                got = out.numpy(np.float32).copy()
                done.close()
            finally:
                src.close()
                out.close()
    pad = np.zeros(blocks * 256, np.float32)
    pad[:n] = x
    assert (got == pad.reshape(blocks, 256).sum(axis=1)).all()
