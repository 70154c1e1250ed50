"""HSA dispatch packs C++ kernels' arguments by value from their mangled names
(the same argconv plan as HIP): Python numbers convert, wrong types refuse."""
from __future__ import annotations

import numpy as np
import pytest

from rocpy import hsa
from rocpy.codeobject import ArgumentRangeError, ArgumentTypeError

KSCALE = "_Z6kscalePfif"   # kscale(float* x, int n, float a), tests/kernels/mangled.hip


def test_dispatch_converts_by_value(gpu, hip_kernel, host_pool, stub_only):
    import rocpy.stub
    path = hip_kernel("mangled", archs=(gpu.name,))
    seen = []
    rocpy.stub.register_kernel(KSCALE, lambda d: seen.append((d.arg(8, "i"), d.arg(12, "f"))))
    try:
        with hsa.Executable.load(gpu, path) as exe, gpu.create_queue() as q:
            k = exe.kernel(KSCALE)
            assert [p.type_name for p in k.layout.params] == ["float*", "int", "float"]
            buf = host_pool.allocate(64)
            buf.allow_access([gpu])
            q.dispatch(k, 16, 16, (buf, 3, 2))           # an int for the float: 2.0
            q.dispatch(k, 16, 16, (buf, np.int32(-4), np.float32(0.5)))
            q.sync()
            assert seen == [(3, 2.0), (-4, 0.5)]
            with pytest.raises(ArgumentTypeError, match=r"args\[1\] \(int .*got float"):
                q.dispatch(k, 16, 16, (buf, 2.5, 3))
            with pytest.raises(ArgumentRangeError, match=r"args\[1\]"):
                q.dispatch(k, 16, 16, (buf, 1 << 31, 3))
            with pytest.raises(ArgumentTypeError, match=r"args\[1\].*numpy.int64"):
                k.prepare(16, 16, (buf, np.int64(1), 1.0))
            buf.close()
    finally:
        rocpy.stub.unregister_kernel(KSCALE)
    rocpy.debug.collect()
    assert set(rocpy.debug.live_objects()) <= {"Runtime"}   # the fixture's, closed after
