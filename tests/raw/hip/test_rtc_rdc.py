"""hiprtc's relocatable device code on the stub: -fgpu-rdc programs give bitcode
(hiprtcGetBitcode/Size, headers of 5.7 on) and hiprtcLinkComplete links it into one
code object whose kernels run (clr hipamd/src/hiprtc/hiprtc.cpp, hiprtcInternal.cpp
RTCCompileProgram::GetBitcode, RTCLinkProgram::LinkComplete).  The stub's bitcode is a
unit of the CPU build (rocpy/cpukern/_rdc.py); LLVM bitcode from a compiler fails the
link with hipamd's HIPRTC_ERROR_LINKING and a log line (stub: hip_rtc_linker.c)."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from rocpy import cpukern

from .helpers import ffi, hipamd, lib, stub_only
from .rdc import CALLEE, CALLER, bitcode, compile_, log, needs_cxx, program, rtc, run_apply

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hiprtcGetBitcode"),
                                         reason="the headers declare no hiprtcGetBitcode")]


def create_link(log_size: int = 0):
    state = ffi.new("hiprtcLinkState *")
    buf = ffi.new("char[]", max(log_size, 1))
    if log_size:
        opts = ffi.new("hiprtcJIT_option[]", [lib.HIPRTC_JIT_ERROR_LOG_BUFFER,
                                             lib.HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES])
        vals = ffi.new("void *[]", [buf, ffi.cast("void *", log_size)])
        assert rtc(lib.hiprtcLinkCreate(2, opts, vals, state)) == "HIPRTC_SUCCESS"
    else:
        assert rtc(lib.hiprtcLinkCreate(0, ffi.NULL, ffi.NULL, state)) == "HIPRTC_SUCCESS"
    return state[0], buf


def add(state, data: bytes, name: bytes = b"in", kind=None) -> str:
    kind = lib.HIPRTC_JIT_INPUT_LLVM_BITCODE if kind is None else kind
    image = ffi.new("char[]", data)
    return rtc(lib.hiprtcLinkAddData(state, kind, image, len(data), name, 0, ffi.NULL, ffi.NULL))


def complete(state):
    out, size = ffi.new("void **"), ffi.new("size_t *")
    status = rtc(lib.hiprtcLinkComplete(state, out, size))
    return status, (bytes(ffi.buffer(out[0], size[0])) if status == "HIPRTC_SUCCESS" else None)


# hiprtc.cpp hiprtcGetBitcode(Size): the output pointer is checked first, then
# GetBitcode is false (INVALID_PROGRAM) for a program without -fgpu-rdc bitcode
def test_bitcode_argument_checks():
    size, buf = ffi.new("size_t *"), ffi.new("char[16]")
    assert rtc(lib.hiprtcGetBitcodeSize(ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcGetBitcode(ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    p = program(b'extern "C" __global__ void k(int *p) { *p = 1; }')
    # not compiled: no bitcode
    assert rtc(lib.hiprtcGetBitcodeSize(p[0], size)) == "HIPRTC_ERROR_INVALID_PROGRAM"
    assert rtc(lib.hiprtcGetBitcode(p[0], buf)) == "HIPRTC_ERROR_INVALID_PROGRAM"
    assert rtc(lib.hiprtcDestroyProgram(p)) == "HIPRTC_SUCCESS"
    # a destroyed program is no program
    assert rtc(lib.hiprtcGetBitcodeSize(p[0], size)) == "HIPRTC_ERROR_INVALID_PROGRAM"


@stub_only
def test_a_program_compiled_without_rdc_has_code_and_no_bitcode():
    needs_cxx()
    from rocpy import _toolchain
    if _toolchain.find_hipcc() is None:
        pytest.skip("the stub's whole-program compile runs hipcc")
    p = program(b'extern "C" __global__ void k(int *p) { *p = 1; }')
    assert compile_(p) == "HIPRTC_SUCCESS", log(p)
    size = ffi.new("size_t *")
    assert rtc(lib.hiprtcGetCodeSize(p[0], size)) == "HIPRTC_SUCCESS" and size[0] > 0
    assert rtc(lib.hiprtcGetBitcodeSize(p[0], size)) == "HIPRTC_ERROR_INVALID_PROGRAM"
    assert rtc(lib.hiprtcGetBitcode(p[0], ffi.new("char[16]"))) == "HIPRTC_ERROR_INVALID_PROGRAM"
    assert rtc(lib.hiprtcDestroyProgram(p)) == "HIPRTC_SUCCESS"


# RTCCompileProgram::compile with fgpu_rdc: bitcode, and no executable
@stub_only
def test_rdc_program_has_bitcode_and_no_code():
    needs_cxx()
    p = program(CALLEE, b"callee.hip")
    assert compile_(p, b"-fgpu-rdc") == "HIPRTC_SUCCESS", log(p)
    size = ffi.new("size_t *")
    assert rtc(lib.hiprtcGetCodeSize(p[0], size)) == "HIPRTC_SUCCESS"
    assert size[0] == 0
    assert rtc(lib.hiprtcGetBitcodeSize(p[0], size)) == "HIPRTC_SUCCESS" and size[0] > 0
    buf = ffi.new("char[]", size[0])
    assert rtc(lib.hiprtcGetBitcode(p[0], buf)) == "HIPRTC_SUCCESS"
    info, obj = cpukern.read_unit(bytes(ffi.buffer(buf, size[0])))
    assert info["name"] == "callee.hip" and info["kernels"] == [] and obj[:4] == b"\x7fELF"
    # a compile error under -fgpu-rdc is a compile error (the unit is compiled)
    bad = program(b"__device__ int f() { return undeclared; }")
    assert compile_(bad, b"-fgpu-rdc") == "HIPRTC_ERROR_COMPILATION"
    assert "undeclared" in log(bad)
    assert rtc(lib.hiprtcGetBitcodeSize(bad[0], size)) == "HIPRTC_ERROR_INVALID_PROGRAM"
    for q in (p, bad):
        assert rtc(lib.hiprtcDestroyProgram(q)) == "HIPRTC_SUCCESS"


# what linking is for: a kernel in one program calls a __device__ function and
# reads a __device__ variable the other defines (hip-tests linker.cc:83 flow:
# bitcode, hiprtcLinkAddData, hiprtcLinkComplete, hipModuleLoadData, launch)
@stub_only
def test_link_runs_a_kernel_calling_a_device_function_of_another_program(tmp_path):
    needs_cxx()
    caller, callee = bitcode(CALLER, b"caller.hip"), bitcode(CALLEE, b"callee.hip")
    state, _ = create_link()
    assert add(state, caller, b"caller") == "HIPRTC_SUCCESS"
    f = tmp_path / "callee.bc"
    f.write_bytes(callee)
    assert rtc(lib.hiprtcLinkAddFile(state, lib.HIPRTC_JIT_INPUT_LLVM_BITCODE, str(f).encode(), 0,
                                     ffi.NULL, ffi.NULL)) == "HIPRTC_SUCCESS"
    f.unlink()                                  # hiprtc read it: the link holds its copy
    status, code = complete(state)
    assert status == "HIPRTC_SUCCESS"
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"
    assert run_apply(code, range(8)) == [2 * i + 7 for i in range(8)]


@stub_only
def test_link_without_the_definition_fails_with_the_linkers_log():
    needs_cxx()
    state, buf = create_link(4096)
    assert add(state, bitcode(CALLER, b"caller.hip")) == "HIPRTC_SUCCESS"
    status, _ = complete(state)
    assert status == "HIPRTC_ERROR_LINKING"
    text = ffi.string(buf).decode()
    assert "undefined reference" in text and "twice" in text
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"


@stub_only
def test_link_of_nothing_fails():
    state, buf = create_link(256)
    assert complete(state)[0] == "HIPRTC_ERROR_LINKING"
    assert b"no inputs" in ffi.string(buf)
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"


def _hipcc_bitcode(tmp_path) -> bytes:
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        pytest.skip("no hipcc to make LLVM bitcode with")
    src = tmp_path / "k.hip"
    src.write_text('extern "C" __global__ void k(int *p) { *p = 1; }\n')
    out = tmp_path / "k.bc"
    r = subprocess.run([hipcc, "-fgpu-rdc", "--cuda-device-only", "-c", "--offload-arch=gfx90a",
                        str(src), "-o", str(out)], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, HIP_PLATFORM="amd"))
    if r.returncode != 0:
        pytest.skip(f"hipcc could not make bitcode: {r.stderr[-300:]}")
    return out.read_bytes()


# LLVM bitcode (hipcc -fgpu-rdc) is accepted as an input, as hiprtc accepts it,
# but the stub has no comgr to link it: HIPRTC_ERROR_LINKING and the log says so
@stub_only
def test_llvm_bitcode_from_hipcc_fails_the_link_with_a_log_line(tmp_path):
    data = _hipcc_bitcode(tmp_path)
    for kind in (lib.HIPRTC_JIT_INPUT_LLVM_BITCODE, lib.HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE):
        state, buf = create_link(1024)
        assert add(state, data, b"k.bc", kind) == "HIPRTC_SUCCESS"
        assert complete(state)[0] == "HIPRTC_ERROR_LINKING"
        text = ffi.string(buf).decode()
        assert "input 0 (k.bc)" in text and "cannot link LLVM bitcode" in text
        assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"


@stub_only
def test_a_unit_beside_llvm_bitcode_still_fails_naming_the_bitcode():
    needs_cxx()
    state, buf = create_link(1024)
    assert add(state, bitcode(CALLEE), b"callee") == "HIPRTC_SUCCESS"
    assert add(state, b"BC\xc0\xde" + b"\0" * 28, b"raw.bc") == "HIPRTC_SUCCESS"
    assert complete(state)[0] == "HIPRTC_ERROR_LINKING"
    assert "input 1 (raw.bc)" in ffi.string(buf).decode()
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"
