"""The exception (and status) of every bad input, the same on every backend.

rocpy checks sizes, bounds and launch configurations before calling the
runtime; those raise the `HipError` subclass the runtime would, with the
status named in ``.name``.  Platform independent unless marked.
"""
from __future__ import annotations

import numpy as np
import pytest

import rocpy
from rocpy import hip
from rocpy.codeobject import ArgumentCountError, ArgumentValueError, KernelArgumentError


def check(info, cls, name):
    assert isinstance(info.value, cls), type(info.value)
    assert isinstance(info.value, rocpy.HipError)
    assert info.value.name == name, info.value
    return info.value


def test_device_index_out_of_range():
    n = hip.device_count()
    with pytest.raises(rocpy.InvalidValueError) as info:
        hip.Device(n)
    err = check(info, rocpy.InvalidValueError, "hipErrorInvalidDevice")
    assert f"{n} device(s)" in str(err)
    with pytest.raises(rocpy.InvalidValueError):
        hip.Device(-1)
    with pytest.raises(TypeError):
        hip.Device("0")


def test_unknown_attribute(dev):
    with pytest.raises(rocpy.InvalidValueError) as info:
        dev.attribute("max_threads_per_blok")
    assert "MaxThreadsPerBlock" in str(info.value)


def test_negative_and_non_int_sizes(dev):
    with pytest.raises(rocpy.InvalidValueError) as info:
        dev.context.alloc(-1)
    check(info, rocpy.InvalidValueError, "hipErrorInvalidValue")
    with pytest.raises(TypeError):
        dev.context.alloc(1.5)


def test_huge_allocation_is_out_of_memory(dev):
    with pytest.raises(rocpy.OutOfMemoryError) as info:
        dev.context.alloc(dev.total_memory * 4)
    assert info.value.name == "hipErrorOutOfMemory"


def test_host_context_has_no_device_memory():
    with pytest.raises(rocpy.InvalidValueError):
        hip.Context.host().alloc(16)


def test_copy_size_mismatch(dev):
    buf = dev.context.alloc(64)
    with pytest.raises(rocpy.InvalidValueError) as info:
        buf.copy_from(np.zeros(15, np.float32))
    check(info, rocpy.InvalidValueError, "hipErrorInvalidValue")
    with pytest.raises(rocpy.InvalidValueError):
        buf.copy_to(np.zeros(17, np.float32))
    with pytest.raises(rocpy.InvalidValueError):
        buf.copy_from(dev.context.alloc(65))


def test_copy_into_read_only_or_non_contiguous(dev):
    buf = dev.context.alloc(64)
    ro = np.zeros(16, np.float32)
    ro.flags.writeable = False
    with pytest.raises(rocpy.InvalidValueError):
        buf.copy_to(ro)
    with pytest.raises(rocpy.InvalidValueError):
        buf.copy_to(np.zeros(32, np.float32)[::2])
    with pytest.raises(rocpy.InvalidValueError):
        buf.copy_to(b"x" * 64)
    with pytest.raises(TypeError):
        buf.copy_from(object())


def test_slices_out_of_bounds(dev):
    buf = dev.context.alloc(64)
    for bad in (slice(0, 65), slice(65, None), slice(10, 5), slice(-70, None), slice(0, 8, 2)):
        with pytest.raises(rocpy.InvalidValueError):
            buf[bad]
    with pytest.raises(TypeError):
        buf[3]
    assert buf[60:].nbytes == 4 and buf[-4:].ptr == buf.ptr + 60


def test_bad_fill_values(dev):
    buf = dev.context.alloc(6)
    with pytest.raises(rocpy.InvalidValueError):
        buf.fill(256)
    with pytest.raises(rocpy.InvalidValueError):
        buf.fill(np.uint32(1))           # 6 bytes are not whole words
    with pytest.raises(TypeError):
        buf.fill(1.5)


def test_launch_configuration_is_checked_first(dev, load):
    fill = load("fill")
    buf = dev.context.alloc(1024)
    args = (buf, np.uint32(0), np.int32(256))
    bad = [((1,), (dev.max_threads_per_block + 1,)), ((1,), (1, 1, dev.max_block_dims[2] + 1)),
           ((0,), (1,)), ((1,), (0,)), ((1, 1, 1, 1), (1,)),
           ((dev.max_grid_dims[0] + 1,), (1,))]
    for grid, block in bad:
        with pytest.raises(rocpy.InvalidValueError) as info:
            fill.launch(grid, block, args)
        check(info, rocpy.InvalidValueError, "hipErrorInvalidConfiguration")
    with pytest.raises(rocpy.InvalidValueError) as info:
        fill.launch(1, 1, args, shared_mem=dev.shared_memory_per_block + 1)
    check(info, rocpy.InvalidValueError, "hipErrorInvalidValue")


def test_launch_arguments_are_checked(dev, load):
    fill = load("fill")
    buf = dev.context.alloc(1024)
    with pytest.raises(ArgumentCountError):
        fill.launch(1, 1, (buf, np.uint32(0)))
    # a type error where metadata says "pointer" (AMD); a size error where a cubin
    # only says "8 bytes" (nvidia)
    with pytest.raises(KernelArgumentError):
        fill.launch(1, 1, (np.zeros(4), np.uint32(0), np.int32(1)))
    with pytest.raises(ArgumentValueError):
        fill.launch(1, 1, (buf, np.uint32(0), 2**40))


def test_kernel_not_found(dev, kernel_file):
    mod = hip.Module.load(kernel_file("fill"), dev)
    with pytest.raises(hip.KernelNotFoundError) as info:
        mod["nope"]
    assert isinstance(info.value, KeyError.__mro__[1])   # a LookupError
    assert info.value.name == "hipErrorNotFound" and "fill" in str(info.value)


def test_closed_objects_refuse_use(dev, load):
    buf = dev.context.alloc(64)
    buf.close()
    buf.close()                          # idempotent
    with pytest.raises(rocpy.ClosedError):
        buf.ptr
    with pytest.raises(rocpy.ClosedError):
        buf.copy_from(np.zeros(16, np.float32))
    s = dev.create_stream()
    s.close()
    with pytest.raises(rocpy.ClosedError):
        s.sync()
    with pytest.raises(rocpy.ClosedError):
        load("empty").launch(1, 1, (), stream=s)
    ev = hip.Event(dev)
    ev.close()
    with pytest.raises(rocpy.ClosedError):
        ev.query()


def test_stream_priority_names(dev):
    least, greatest = dev.stream_priority_range
    with dev.create_stream(priority="high") as s:
        assert s.priority == greatest
    with dev.create_stream(priority="low") as s:
        assert s.priority == least
    with pytest.raises(rocpy.InvalidValueError):
        dev.create_stream(priority="urgent")


def test_wrong_stream_type(dev, load):
    with pytest.raises(TypeError):
        load("empty").launch(1, 1, (), stream=42)
    with pytest.raises(TypeError):
        dev.context.alloc(16).copy_from(np.zeros(4, np.float32), stream="s")


def test_capture_without_runtime_support(dev):
    if hasattr(hip.lib, "hipStreamBeginCapture"):
        pytest.skip("this backend's HIP has stream capture (test_capture.py)")
    with dev.create_stream() as s:
        with pytest.raises(rocpy.NotSupportedError):
            with s.capture():
                pass
        assert s.is_capturing is False
    with pytest.raises(rocpy.NotSupportedError):
        hip.Graph(dev)
