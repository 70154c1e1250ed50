"""Error paths of rocpy.hip that no other test reached (measured with coverage): each
asserts the exception type, the HIP status it carries where there is one, and the message."""
from __future__ import annotations

import numpy as np
import pytest

from rocpy.errors import InvalidValueError


class Foreign:
    """An object with only a __cuda_array_interface__ (what CuPy/Numba arrays show rocpy)."""

    def __init__(self, ptr, shape, **extra):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, **extra}


def test_copy_into_a_strided_buffer_object_is_refused(dev):
    # numpy arrays have their own check ("not C-contiguous"); this is the buffer protocol's
    buf = dev.context.alloc(32)
    buf.copy_from(np.full(32, 3, np.uint8))
    backing = bytearray(64)
    with pytest.raises(InvalidValueError, match="the destination is not contiguous") as e:
        buf.copy_to(memoryview(backing)[::2])         # 32 bytes, every other one
    assert e.value.name == "hipErrorInvalidValue"
    assert not any(backing)                           # nothing was written
    buf.copy_from(memoryview(bytes(range(64)))[::2])  # a strided source is copied first
    out = np.empty(32, np.uint8)
    buf.copy_to(out)
    assert (out == np.arange(0, 64, 2)).all()
    buf.close()


def test_foreign_array_with_a_bad_pointer_or_shape(dev):
    buf = dev.context.alloc(64)
    with pytest.raises(TypeError, match=r"Foreign.__cuda_array_interface__ data pointer -1 is not "
                                        "a non-negative int"):
        buf.copy_from(Foreign(-1, (64,)))
    with pytest.raises(TypeError, match=r"data pointer 'x' is not a non-negative int"):
        buf.copy_from(Foreign("x", (64,)))
    with pytest.raises(InvalidValueError, match=r"Foreign has a negative dimension \(-64,\)") as e:
        buf.copy_from(Foreign(buf.ptr, (-64,)))
    assert e.value.name == "hipErrorInvalidValue"
    buf.close()


def test_stream_protocol_with_a_negative_handle(dev):
    class Bad:
        def __hip_stream__(self):
            return (0, -1)

    buf = dev.context.alloc(64)
    with pytest.raises(ValueError, match=r"^Bad.__hip_stream__\(\) gave a negative handle -1$"):
        buf.close(stream=Bad())
    assert not buf.closed                             # refused before anything was released
    buf.close()


def test_an_emulation_reading_args_of_an_untyped_kernel(dev, load):
    # rocpy/stub/control.py Dispatch.args: an extern "C" kernel's name gives no types
    import rocpy
    if not rocpy.backend().is_stub:
        pytest.skip("emulations exist on the stub only")
    from rocpy import stub
    kernel = load("fill")
    stub.register_kernel("fill", lambda d: d.args)
    buf = dev.context.alloc(256)
    try:
        with dev.create_stream() as s:
            kernel.launch(1, 64, (buf, np.uint32(1), np.int32(64)), s)
            with pytest.raises(rocpy.HipError) as info:
                s.sync()
        assert info.value.name == "hipErrorLaunchFailure"
        (error,) = info.value.__cause__.errors
        assert isinstance(error, ValueError)
        assert str(error).startswith("kernel 'fill': no signature was registered with its "
                                     "emulation (register_kernel(name, fn, signature=")
    finally:
        stub.unregister_kernel("fill")
        stub.take_failures()
        buf.close()


@pytest.mark.backend("amd", "stub")
def test_a_limit_the_runtime_does_not_support(dev):
    # hipamd's hipDeviceGetLimit answers hipLimitMallocHeapSize (and, where the release
    # has it, hipLimitStackSize); hipLimitPrintfFifoSize is hipErrorUnsupportedLimit
    import rocpy
    with pytest.raises(rocpy.HipError, match=r"^hipDeviceGetLimit failed: "
                                             r"hipErrorUnsupportedLimit") as e:
        dev.limit("printf_fifo_size")
    assert e.value.name == "hipErrorUnsupportedLimit" and e.value.call == "hipDeviceGetLimit"
    assert dev.limit("malloc_heap_size") > 0
