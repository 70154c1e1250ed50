"""hiprtc without a compiler (hipamd src/hiprtc/hiprtc.cpp at rocm-5.2.3;
stub: hip_rtc.c).  Programs are created, destroyed and asked for logs as in
hiprtc; compilation fails with HIPRTC_ERROR_COMPILATION and a log naming the
reason (listed in rocpy.hip.stub_unsupported).  hip-tests' catch/unit/rtc
cases compile (saxpy.cc, customOptions.cc): on the stub they stop at
hiprtcCompileProgram with that status."""
from __future__ import annotations

from rocpy import hip

from .helpers import ffi, lib, stub_only

pytestmark = stub_only

SAXPY = b'extern "C" __global__ void saxpy(float a, float *x, float *y, float *out, size_t n) {}'


def create(src=SAXPY, headers=()):
    p = ffi.new("hiprtcProgram *")
    hs = [ffi.new("char[]", h) for h, _ in headers]
    ns = [ffi.new("char[]", n) for _, n in headers]
    st = lib.hiprtcCreateProgram(p, src, b"saxpy.cu", len(headers),
                                 ffi.new("char *[]", hs) if headers else ffi.NULL,
                                 ffi.new("char *[]", ns) if headers else ffi.NULL)
    return st, p


def test_error_strings_are_the_enum_names():
    for i in range(12):
        assert ffi.string(lib.hiprtcGetErrorString(i)).decode() == \
            ffi.string(ffi.cast("hiprtcResult", i))
    assert lib.hiprtcGetErrorString(99) == ffi.NULL       # hiprtc: nullptr for others


def test_version():
    major, minor = ffi.new("int *"), ffi.new("int *")
    assert lib.hiprtcVersion(major, minor) == lib.HIPRTC_SUCCESS
    assert (major[0], minor[0]) == (9, 0)                 # hiprtc 5.2's "TODO" figures
    assert lib.hiprtcVersion(ffi.NULL, minor) == lib.HIPRTC_ERROR_INVALID_INPUT


# saxpy.cc's flow: create, compile, log; the stub stops at the compile
def test_compile_fails_with_a_log_and_no_code():
    st, p = create(headers=[(b"#define N 4\n", b"n.h")])
    assert st == lib.HIPRTC_SUCCESS
    assert lib.hiprtcAddNameExpression(p[0], b"saxpy") == lib.HIPRTC_SUCCESS
    opts = ffi.new("char *[]", [ffi.new("char[]", b"--gpu-architecture=gfx90a")])
    assert lib.hiprtcCompileProgram(p[0], 1, opts) == lib.HIPRTC_ERROR_COMPILATION
    size = ffi.new("size_t *")
    assert lib.hiprtcGetProgramLogSize(p[0], size) == lib.HIPRTC_SUCCESS
    log = ffi.new("char[]", size[0])
    assert lib.hiprtcGetProgramLog(p[0], log) == lib.HIPRTC_SUCCESS
    assert b"no compiler" in ffi.string(log)
    assert lib.hiprtcGetCodeSize(p[0], size) == lib.HIPRTC_SUCCESS and size[0] == 0
    lowered = ffi.new("char **")
    assert lib.hiprtcGetLoweredName(p[0], b"saxpy", lowered) == \
        lib.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS
    assert "hiprtcCompileProgram" in hip.stub_unsupported


def test_program_calls_negative():
    p = ffi.new("hiprtcProgram *")
    # hiprtcCreateProgram: null program, negative header count, headers missing
    assert lib.hiprtcCreateProgram(ffi.NULL, SAXPY, b"x", 0, ffi.NULL, ffi.NULL) == \
        lib.HIPRTC_ERROR_INVALID_PROGRAM
    assert lib.hiprtcCreateProgram(p, SAXPY, b"x", -1, ffi.NULL, ffi.NULL) == \
        lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcCreateProgram(p, SAXPY, b"x", 1, ffi.NULL, ffi.NULL) == \
        lib.HIPRTC_ERROR_INVALID_INPUT
    # a null source: 5.2 builds a std::string from it and crashes; the stub refuses
    assert lib.hiprtcCreateProgram(p, ffi.NULL, b"x", 0, ffi.NULL, ffi.NULL) == \
        lib.HIPRTC_ERROR_INVALID_INPUT
    st, q = create()
    prog = q[0]
    size = ffi.new("size_t *")
    assert lib.hiprtcAddNameExpression(prog, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcGetLoweredName(prog, ffi.NULL, ffi.new("char **")) == \
        lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcGetProgramLogSize(prog, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcGetProgramLog(prog, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcGetCodeSize(prog, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcGetCode(prog, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcDestroyProgram(ffi.NULL) == lib.HIPRTC_ERROR_INVALID_INPUT
    assert lib.hiprtcDestroyProgram(q) == lib.HIPRTC_SUCCESS
    # a destroyed program (hiprtc casts it; the stub's registry refuses it)
    gone = ffi.new("hiprtcProgram *", prog)
    assert lib.hiprtcDestroyProgram(gone) == lib.HIPRTC_ERROR_INVALID_PROGRAM
    assert lib.hiprtcGetProgramLogSize(prog, size) == lib.HIPRTC_ERROR_INVALID_PROGRAM
    assert lib.hiprtcCompileProgram(prog, 0, ffi.NULL) == lib.HIPRTC_ERROR_INVALID_PROGRAM


def test_program_falls_back_to_hipcc_on_the_stub():
    # rocpy.hip.Program never uses the stub's hiprtc (program.py _use_hiprtc)
    from rocpy.hip.program import Program
    prog = Program("extern \"C\" __global__ void k() {}", name="k.hip")
    assert prog._use_hiprtc() is False
