"""DLPack round trips and the stream protocol.  Platform independent: the stub's
memory comes back as numpy (kDLCPU), GPU memory as a rocpy TypedBuffer
(kDLROCM on amd, kDLCUDA on nvidia)."""
from __future__ import annotations

import gc

import numpy as np

import rocpy
from rocpy import hip
from rocpy.hip import _dlpack


def test_dlpack_round_trip(dev, rng):
    data = rng.standard_normal(256).astype(np.float32)
    buf = dev.context.alloc(data.nbytes)
    buf.copy_from(data)
    got = hip.from_dlpack(buf.typed(np.float32, (16, 16)))
    if rocpy.backend().name == "stub":
        assert isinstance(got, np.ndarray) and got.ctypes.data == buf.ptr
        assert np.array_equal(got.ravel(), data)
    else:
        assert isinstance(got, hip.TypedBuffer) and got.ptr == buf.ptr
        assert got.shape == (16, 16) and got.dtype == np.float32
        out = np.empty(256, np.float32)
        got.buffer.copy_to(out)
        assert np.array_equal(out, data)
        got.buffer.close()
    del got
    gc.collect()
    assert _dlpack.live_exports() == 0
    buf.close()


def test_dlpack_device_matches_backend(dev):
    buf = dev.context.alloc(64)
    kind, index = buf.__dlpack_device__()
    expected = {"stub": 1, "amd": 10, "nvidia": 2}[rocpy.backend().name]
    assert kind == expected and index == (0 if kind == 1 else dev.index)
    assert hip.Context.host().alloc_host(64).__dlpack_device__() == (1, 0)
    buf.close()


def test_stream_protocol_round_trip(dev):
    with dev.create_stream() as s:
        version, handle = s.__hip_stream__()
        assert version == 0 and handle != 0
        again = hip.Stream.from_handle(handle, device=dev)
        assert again.kind == "foreign" and again.__hip_stream__() == (0, handle)
        again.sync()
        again.close()
