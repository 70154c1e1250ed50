"""hsa.Executable and hsa.Kernel: loading code objects and bundles, kernel information."""
from __future__ import annotations

import numpy as np
import pytest

from rocpy import codeobject, debug, hsa
from rocpy.codeobject import (
    ArgumentCountError,
    ArgumentTypeError,
    CodeObjectError,
    LaunchConfigError,
    NoMatchingTargetError,
)
from rocpy.errors import ClosedError


def test_load_a_bundle_by_path(gpu, vadd_path):
    with hsa.Executable.load(gpu, vadd_path) as exe:
        assert exe.agent == gpu
        assert exe.kernel_names == ["vadd"]
        assert "vadd" in exe and "nope" not in exe
        assert debug.live_objects() == {"Runtime": 1, "Executable": 1}
    assert exe.closed
    assert debug.live_objects() == {"Runtime": 1}


def test_load_bytes_and_a_bare_elf(gpu, vadd_path):
    with open(vadd_path, "rb") as f:
        data = f.read()
    with hsa.Executable.load(gpu, data) as exe:
        assert exe.kernel("vadd").object
    elf = codeobject.load(data).select(gpu.target).data
    with hsa.Executable.load(gpu, elf) as exe:
        assert exe["vadd"].name == "vadd"


def test_kernel_information_agrees_with_the_metadata(gpu, vadd_path):
    exe = hsa.Executable.load(gpu, vadd_path)
    k = exe.kernel("vadd")
    info = codeobject.load(vadd_path).select(gpu.target).kernels["vadd"]
    assert k.object != 0
    assert k.kernarg_segment_size == info.kernarg_segment_size
    assert k.kernarg_segment_alignment >= info.kernarg_segment_align
    assert k.group_segment_size == info.group_segment_fixed_size
    assert k.private_segment_size == info.private_segment_fixed_size
    assert k.dynamic_callstack in (True, False)
    assert k.wavefront_size == info.wavefront_size
    assert [p.offset for p in k.params] == [p.offset for p in info.args]
    assert [p.value_kind for p in k.params[:3]] == ["global_buffer"] * 3
    assert k.symbol == info.symbol
    assert exe.kernel(k.symbol).object == k.object           # the .kd symbol works too
    assert exe.kernel("vadd") is k                            # one object per kernel
    assert "vadd" in repr(k) and "vadd" in repr(exe)


def test_unknown_kernel(gpu, vadd_path):
    with hsa.Executable.load(gpu, vadd_path) as exe:
        with pytest.raises(KeyError, match="no kernel 'vsub' in this executable; it has vadd"):
            exe.kernel("vsub")


def test_kernel_packs_arguments(gpu, vadd_path, host_pool):
    k = hsa.Executable.load(gpu, vadd_path).kernel("vadd")
    buf = host_pool.allocate(64)
    data = k.pack((buf, 0x2000, None, np.int32(7)), grid=64, workgroup=64)
    assert len(data) >= k.kernarg_segment_size
    assert int.from_bytes(data[0:8], "little") == buf.ptr
    assert int.from_bytes(data[8:16], "little") == 0x2000
    assert int.from_bytes(data[16:24], "little") == 0
    assert int.from_bytes(data[24:28], "little") == 7
    with pytest.raises(ArgumentCountError, match="takes 4 arguments"):
        k.pack((1, 2, 3))
    with pytest.raises(ArgumentTypeError, match=r"args\[0\]"):
        k.pack((1.5, 0, 0, 1), grid=64, workgroup=64)


def test_kernel_packet(gpu, vadd_path):
    import struct
    k = hsa.Executable.load(gpu, vadd_path).kernel("vadd")
    from rocpy.hsa import lib
    p = k.packet((1000, 2), (256,), barrier=True, fences=("agent", "none"), dynamic_lds=128)
    assert len(p) == 64
    (header, setup, wx, wy, wz, _, gx, gy, gz, private, group, obj,
     kernarg, _, completion) = struct.unpack("<HHHHHHIIIIIQQQQ", p)
    assert header & 0xff == lib.HSA_PACKET_TYPE_KERNEL_DISPATCH
    assert header >> lib.HSA_PACKET_HEADER_BARRIER & 1
    assert header >> lib.HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE & 3 == lib.HSA_FENCE_SCOPE_AGENT
    assert header >> lib.HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE & 3 == lib.HSA_FENCE_SCOPE_NONE
    assert setup == 2
    assert (wx, wy, wz, gx, gy, gz) == (256, 1, 1, 1000, 2, 1)
    assert group == k.group_segment_size + 128 and private == k.private_segment_size
    assert obj == k.object and kernarg == 0 and completion == 0
    for bad in ((0,), (1, 2, 3, 4), "x", 2.5):
        with pytest.raises(LaunchConfigError):
            k.packet(bad, 64)
    with pytest.raises(LaunchConfigError, match="the agent allows"):
        k.packet(1024, (64, 64))
    with pytest.raises(ValueError, match="fence scopes"):
        k.packet(64, 64, fences="cluster")


def test_code_object_for_another_target(gpu, hip_kernel):
    other = "gfx908" if gpu.name != "gfx908" else "gfx90a"
    path = hip_kernel("vadd", archs=(other,))
    with pytest.raises(NoMatchingTargetError, match="no code object for device target"):
        hsa.Executable.load(gpu, path)


def test_not_a_code_object(gpu):
    with pytest.raises(CodeObjectError, match="not a code object"):
        hsa.Executable.load(gpu, b"\0" * 64)
    with pytest.raises(TypeError):
        hsa.Executable.load(gpu, 42)


def test_cpu_agents_load_nothing(cpu, vadd_path):
    with pytest.raises(ValueError, match="code objects load on GPU agents"):
        hsa.Executable.load(cpu, vadd_path)


def test_closing_the_executable_closes_its_kernels(gpu, vadd_path):
    exe = hsa.Executable.load(gpu, vadd_path)
    k = exe.kernel("vadd")
    exe.close()
    assert k.closed
    with pytest.raises(ClosedError, match="Executable is closed"):
        exe.kernel("vadd")
    with pytest.raises(ClosedError):
        hsa.Dispatch(k, 64, 64, (0, 0, 0, np.int32(1)))


def test_kernels_and_executable_are_collected_together(gpu, vadd_path):
    k = hsa.Executable.load(gpu, vadd_path).kernel("vadd")
    assert debug.live_objects().get("Executable") == 1   # the kernel refers to it
    del k
    debug.collect()
    assert "Executable" not in debug.live_objects()


def test_a_prepared_dispatch_keeps_the_executable(gpu, vadd_path):
    exe = hsa.Executable.load(gpu, vadd_path)
    d = exe.kernel("vadd").prepare(64, 64, (0, 0, 0, np.int32(1)))
    exe.close()                                      # deferred: the dispatch needs it
    assert debug.live_objects().get("Executable") == 1
    del d
    debug.collect()
    assert "Executable" not in debug.live_objects()
