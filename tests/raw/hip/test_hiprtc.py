"""hiprtc on the stub (hipamd src/hiprtc/hiprtc.cpp at rocm-5.2.3; stub: hip_rtc.c,
hip_rtc_compile.c).  Programs are created, destroyed and asked for logs as in hiprtc;
hiprtcCompileProgram runs rocpy's compiler driver (hipcc + the CPU build), so the code
loads with hipModuleLoadData and its kernels run; name expressions instantiate template
kernels and lower to their mangled names (hip-tests' catch/unit/rtc saxpy.cc flow)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from rocm_versions import expect, version_sensitive

from rocpy import hip

from .helpers import ffi, lib, ok, stub_only

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


def _compilers():
    from rocpy import _toolchain
    if _toolchain.find_hipcc() is None or _toolchain.find_cxx() is None:
        pytest.skip("the stub's hiprtc compiles with hipcc and a host C++ compiler")


def test_loading_the_stub_names_this_interpreter_for_the_compiler_driver():
    # hiprtcCompileProgram runs `$ROCPY_PYTHON -m rocpy cpukern build`; PATH's python3
    # may lack rocpy's dependencies (rocpy in a venv on a fresh system)
    assert os.environ.get("ROCPY_PYTHON")
    if os.environ["ROCPY_PYTHON"] != sys.executable:   # only where the user named another
        assert os.path.exists(os.environ["ROCPY_PYTHON"])


def _log(prog) -> str:
    size = ffi.new("size_t *")
    assert lib.hiprtcGetProgramLogSize(prog, size) == lib.HIPRTC_SUCCESS
    log = ffi.new("char[]", max(size[0], 1))
    assert lib.hiprtcGetProgramLog(prog, log) == lib.HIPRTC_SUCCESS
    return ffi.string(log).decode()


def _code(prog) -> bytes:
    size = ffi.new("size_t *")
    assert lib.hiprtcGetCodeSize(prog, size) == lib.HIPRTC_SUCCESS
    buf = ffi.new("char[]", max(size[0], 1))
    assert lib.hiprtcGetCode(prog, buf) == lib.HIPRTC_SUCCESS
    return bytes(ffi.buffer(buf, size[0]))


TEMPLATED = b"""#include "n.h"
template <typename T> __global__ void scale(T *p) { p[threadIdx.x] *= T(N); }
extern "C" __global__ void fill(int *p) { p[threadIdx.x] = N; }
"""


def _launch(module, name: bytes, ptr, count: int) -> None:
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, module, name))
    slot = ffi.new("void **", ptr)            # kept alive: the array holds only its address
    args = ffi.new("void *[1]", [slot])
    ok(lib.hipModuleLaunchKernel(f[0], 1, 1, 1, count, 1, 1, 0, ffi.NULL, args, ffi.NULL))
    ok(lib.hipDeviceSynchronize())


# saxpy.cc's flow: create, add name expressions, compile, log, code, lowered names, load
def test_compile_gives_code_that_loads_and_runs_with_name_expressions():
    from rocpy import cpukern
    _compilers()
    st, p = create(TEMPLATED, headers=[(b"#define N 4\n", b"n.h")])
    assert st == lib.HIPRTC_SUCCESS
    lowered = ffi.new("char **")
    assert lib.hiprtcGetLoweredName(p[0], b"scale<float>", lowered) == \
        lib.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID          # before compiling
    for e in (b"scale<float>", b"&scale<int>"):
        assert lib.hiprtcAddNameExpression(p[0], e) == lib.HIPRTC_SUCCESS
    assert lib.hiprtcCompileProgram(p[0], 0, ffi.NULL) == lib.HIPRTC_SUCCESS, _log(p[0])
    code = _code(p[0])
    assert cpukern.carries_cpu_build(code)
    names = {}
    for e in (b"scale<float>", b"&scale<int>"):
        assert lib.hiprtcGetLoweredName(p[0], e, lowered) == lib.HIPRTC_SUCCESS
        names[e] = ffi.string(lowered[0])
    assert names == {b"scale<float>": b"_Z5scaleIfEvPT_", b"&scale<int>": b"_Z5scaleIiEvPT_"}
    assert lib.hiprtcGetLoweredName(p[0], b"scale<double>", lowered) == \
        lib.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID          # never added
    module = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoadData(module, code))
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS   # the module keeps its copy
    dev = ffi.new("void **")
    ok(lib.hipMalloc(dev, 64 * 4))
    try:
        host = np.arange(64, dtype=np.float32)
        ok(lib.hipMemcpyHtoD(dev[0], ffi.from_buffer(host), host.nbytes))
        _launch(module[0], names[b"scale<float>"], dev[0], 64)
        out = np.empty(64, np.float32)
        ok(lib.hipMemcpyDtoH(ffi.from_buffer(out), dev[0], out.nbytes))
        assert (out == host * 4).all()
        _launch(module[0], b"fill", dev[0], 64)
        ints = np.empty(64, np.int32)
        ok(lib.hipMemcpyDtoH(ffi.from_buffer(ints), dev[0], ints.nbytes))
        assert (ints == 4).all()
    finally:
        ok(lib.hipFree(dev[0]))
        ok(lib.hipModuleUnload(module[0]))


def test_compile_of_what_the_cpu_cannot_provide_fails_with_a_log_and_no_code():
    _compilers()
    st, p = create(b'extern "C" __global__ void k(int *p) {\n    asm volatile("s_nop 0");\n}\n')
    assert st == lib.HIPRTC_SUCCESS
    assert lib.hiprtcAddNameExpression(p[0], b"k") == lib.HIPRTC_SUCCESS
    assert lib.hiprtcCompileProgram(p[0], 0, ffi.NULL) == lib.HIPRTC_ERROR_COMPILATION
    log = _log(p[0])
    assert "saxpy.cu:2" in log and "inline assembly" in log, log
    assert "rocpy-hiprtc-" not in log                  # the temporary folder is not named
    assert _code(p[0]) == b""
    lowered = ffi.new("char **")
    assert lib.hiprtcGetLoweredName(p[0], b"k", lowered) == \
        lib.HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS


def test_an_include_name_outside_the_program_fails_the_compile():
    _compilers()
    st, p = create(b'#include "../x.h"\n', headers=[(b"#define X 1\n", b"../x.h")])
    assert st == lib.HIPRTC_SUCCESS
    assert lib.hiprtcCompileProgram(p[0], 0, ffi.NULL) == lib.HIPRTC_ERROR_COMPILATION
    assert "cannot write the header '../x.h'" in _log(p[0])
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS


def test_a_missing_driver_fails_the_compile_naming_it(monkeypatch):
    st, p = create()
    monkeypatch.setenv("ROCPY_PYTHON", "/nonexistent/python3")
    opts = ffi.new("char *[]", [ffi.new("char[]", b"--offload-arch=gfx90a")])
    assert lib.hiprtcCompileProgram(p[0], 1, opts) == lib.HIPRTC_ERROR_COMPILATION
    assert "cannot run /nonexistent/python3 (rocpy's compiler driver)" in _log(p[0])
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS


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


def test_program_uses_the_stubs_hiprtc():
    # one implementation: rocpy.hip.Program compiles through the C API on the stub too
    from rocpy.hip.program import Program
    prog = Program("extern \"C\" __global__ void k() {}", name="k.hip")
    assert prog._use_hiprtc() is True


# -fgpu-rdc: hipamd 5.2 passes it to comgr and compiles the program to code; from
# 5.3 (hipamd 78fe2cca, hiprtcCompileProgram's fgpu_rdc) it gives bitcode and no
# code (stub rule STUB_RULE_HIPRTC_RDC_GIVES_BITCODE; the bitcode: test_rtc_rdc.py)
@version_sensitive
def test_fgpu_rdc_gives_code_only_before_5_3():
    _compilers()
    st, p = create(b'extern "C" __global__ void k(int *p) { *p = 1; }')
    assert st == lib.HIPRTC_SUCCESS
    opts = ffi.new("char *[]", [ffi.new("char[]", b"-fgpu-rdc")])
    assert lib.hiprtcCompileProgram(p[0], 1, opts) == lib.HIPRTC_SUCCESS, _log(p[0])
    has_code = len(_code(p[0])) > 0
    assert has_code == expect({(5, 2): True, (5, 3): False})
    assert lib.hiprtcDestroyProgram(p) == lib.HIPRTC_SUCCESS
