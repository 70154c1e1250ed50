"""rocpy.hip.Module and Kernel: loading, target selection, params, launch plumbing."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import rocpy
from rocpy import codeobject, hip


def test_load_path_and_bytes(dev, kernel_file):
    path = kernel_file("vadd")
    for source in (path, open(path, "rb").read()):
        mod = hip.Module.load(source, dev)
        assert mod.names == ("vadd",) and "vadd" in mod and mod.device is dev
        assert isinstance(mod.code_object, codeobject.CodeObject)
        assert set(mod.kernels) == {"vadd"}
        assert mod["vadd"] is mod["vadd"]
        mod.close()


def test_not_constructible():
    with pytest.raises(TypeError):
        hip.Module()
    with pytest.raises(TypeError):
        hip.Kernel()
    with pytest.raises(TypeError):
        hip.Module.load(123)


@pytest.mark.amd_code
def test_no_matching_target_lists_the_targets(dev, kernel_cache):
    from kernels.compile import compile_hip
    other = "gfx906" if dev.arch != "gfx906" else "gfx908"
    path = compile_hip("empty", kernel_cache, (other,))
    with pytest.raises(codeobject.NoMatchingTargetError) as info:
        hip.Module.load(path, dev)
    assert other in str(info.value) and dev.target_id in str(info.value)


@pytest.mark.amd_code
def test_not_a_code_object(dev):
    with pytest.raises(codeobject.CodeObjectError):
        hip.Module.load(b"definitely not ELF", dev)


def test_kernel_params_and_info(dev, load):
    k = load("vadd")
    assert k.name == "vadd" and k.device is dev and k.module.names == ("vadd",)
    assert [p.size for p in k.params] == [8, 8, 8, 4]
    assert [p.offset for p in k.params] == [0, 8, 16, 24]
    assert k.params[0].is_pointer and not k.params[3].is_pointer
    assert k.info.name == "vadd" and k.layout.size >= 28
    assert k.max_threads_per_block <= dev.max_threads_per_block
    assert k.attribute("max_threads_per_block") > 0
    with pytest.raises(rocpy.InvalidValueError):
        k.attribute("favourite_colour")
    assert "vadd(4 args)" in repr(k)


def test_kernel_keeps_module_alive(dev, kernel_file):
    k = hip.Module.load(kernel_file("empty"), dev)["empty"]
    k.launch(1, 1, ())                            # the module object is gone; its kernel works
    dev.sync()


def test_module_closed_while_kernel_lives(dev, kernel_file):
    mod = hip.Module.load(kernel_file("empty"), dev)
    k = mod["empty"]
    mod.close()                                   # deferred: a kernel lives
    with pytest.raises(rocpy.ClosedError):
        mod["empty"]
    k.launch(1, 1, ())
    dev.sync()


def test_launch_on_other_device_stream_is_refused(dev, load):
    k = load("empty")
    with dev.create_stream() as s:
        # the stream as one of Device 99 (its lane's ready index is what enqueuers compare)
        saved = s._dev_index, s._lane.ready
        s._dev_index = s._lane.ready = 99
        try:
            with pytest.raises(rocpy.InvalidValueError, match="the stream is on Device 99"):
                k.launch(1, 1, (), stream=s)
        finally:
            s._dev_index, s._lane.ready = saved


def test_geometry_cache_revalidates(dev, load):
    k = load("empty")
    k.launch(1, 64, ())
    with pytest.raises(rocpy.InvalidValueError):
        k.launch(1, 4096, ())
    k.launch((2, 2), (8, 8), ())
    with pytest.raises(TypeError):
        k.launch(1.5, 1, ())
    with pytest.raises(TypeError):
        k.launch(1, 1, (), shared_mem=1.0)
    dev.sync()


def test_concurrent_launches_pack_their_own_arguments(dev, load):
    fill = load("fill")
    bufs = [dev.context.alloc(256 * 4) for _ in range(8)]
    errors = []

    def work(i):
        try:
            with dev.create_stream() as s:
                for _ in range(50):
                    fill.launch(1, 256, (bufs[i], np.uint32(i), np.int32(256)), stream=s)
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i, b in enumerate(bufs):
        out = np.empty(256, np.uint32)
        b.copy_to(out)
        assert (out == i).all()


@pytest.mark.stub_only
def test_packed_bytes_reach_the_kernel(dev, load):
    import rocpy.stub
    k = load("spin_fill")                         # (unsigned *p, unsigned v, int n, long long c)
    seen = []

    def emulate(d):
        seen.append((d.arg(0, "Q"), d.arg(8, "I"), d.arg(12, "i"), d.arg(16, "q"), d.grid,
                     d.block))
    rocpy.stub.register_kernel("spin_fill", emulate)
    try:
        buf = dev.context.alloc(64)
        k.launch((3, 2), (4, 1, 2), (buf, 0xABCD, -7, -(2**40)))
        dev.sync()
    finally:
        rocpy.stub.unregister_kernel("spin_fill")
    assert seen == [(buf.ptr, 0xABCD, -7, -(2**40), (12, 2, 2), (4, 1, 2))]
