"""Helpers for the link tests: programs compiled with -fgpu-rdc on the stub's hiprtc
(their "bitcode" is a unit of the CPU build: rocpy/cpukern/_rdc.py) and a kernel
launch that reads its result back."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import ffi, lib, ok

#: a kernel that calls a __device__ function and reads a __device__ variable that
#: only the other program defines: what linking is for
CALLER = b"""extern __device__ int twice(int x);
extern __device__ int offset;
extern "C" __global__ void apply(int *p) { p[threadIdx.x] = twice(p[threadIdx.x]) + offset; }
"""
CALLEE = b"""__device__ int offset = 7;
__device__ int twice(int x) { return 2 * x; }
"""


def rtc(status: int) -> str:
    """A hiprtcResult's name."""
    return ffi.string(ffi.cast("hiprtcResult", status))


def needs_cxx() -> None:
    from rocpy import _toolchain
    if _toolchain.find_cxx() is None:
        pytest.skip("the stub's -fgpu-rdc compile needs a host C++ compiler")


def program(src: bytes, name: bytes = b"unit.hip"):
    p = ffi.new("hiprtcProgram *")
    assert rtc(lib.hiprtcCreateProgram(p, src, name, 0, ffi.NULL, ffi.NULL)) == "HIPRTC_SUCCESS"
    return p


def compile_(p, *options: bytes) -> str:
    opts = [ffi.new("char[]", o) for o in options]
    arr = ffi.new("char *[]", opts) if opts else ffi.NULL
    return rtc(lib.hiprtcCompileProgram(p[0], len(opts), arr))


def log(p) -> str:
    size = ffi.new("size_t *")
    assert rtc(lib.hiprtcGetProgramLogSize(p[0], size)) == "HIPRTC_SUCCESS"
    buf = ffi.new("char[]", max(size[0], 1))
    assert rtc(lib.hiprtcGetProgramLog(p[0], buf)) == "HIPRTC_SUCCESS"
    return ffi.string(buf).decode()


def bitcode(src: bytes, name: bytes = b"unit.hip") -> bytes:
    """``src`` compiled with -fgpu-rdc: hiprtcGetBitcode's bytes."""
    p = program(src, name)
    try:
        assert compile_(p, b"-fgpu-rdc") == "HIPRTC_SUCCESS", log(p)
        size = ffi.new("size_t *")
        assert rtc(lib.hiprtcGetBitcodeSize(p[0], size)) == "HIPRTC_SUCCESS"
        buf = ffi.new("char[]", size[0])
        assert rtc(lib.hiprtcGetBitcode(p[0], buf)) == "HIPRTC_SUCCESS"
        return bytes(ffi.buffer(buf, size[0]))
    finally:
        assert rtc(lib.hiprtcDestroyProgram(p)) == "HIPRTC_SUCCESS"


def run_apply(code, values) -> list[int]:
    """Load ``code`` (a linked binary), run ``apply`` over ``values``, return the result;
    on the stub the module holds the linked CPU build while loaded, and only then."""
    import rocpy
    from rocpy import stub
    on_stub = rocpy.backend().name == "stub"
    before = stub.cpu_builds() if on_stub else 0
    module = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoadData(module, code))
    assert not on_stub or stub.cpu_builds() == before + 1
    dev = ffi.new("void **")
    host = np.asarray(values, dtype=np.int32)
    ok(lib.hipMalloc(dev, host.nbytes))
    try:
        ok(lib.hipMemcpyHtoD(dev[0], ffi.from_buffer(host), host.nbytes))
        f = ffi.new("hipFunction_t *")
        ok(lib.hipModuleGetFunction(f, module[0], b"apply"))
        slot = ffi.new("void **", dev[0])
        args = ffi.new("void *[1]", [slot])
        ok(lib.hipModuleLaunchKernel(f[0], 1, 1, 1, len(host), 1, 1, 0, ffi.NULL, args, ffi.NULL))
        ok(lib.hipDeviceSynchronize())
        out = np.empty_like(host)
        ok(lib.hipMemcpyDtoH(ffi.from_buffer(out), dev[0], out.nbytes))
        return out.tolist()
    finally:
        ok(lib.hipFree(dev[0]))
        ok(lib.hipModuleUnload(module[0]))
        assert not on_stub or stub.cpu_builds() == before
