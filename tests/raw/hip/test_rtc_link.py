"""hiprtc linking (headers of 5.7 on; clr hipamd/src/hiprtc/hiprtc.cpp
hiprtcLink*, hiprtcInternal.cpp RTCLinkProgram, rocm-6.2.0).  Stub:
hip_rtc_link.c, which checks everything hipamd checks; the link itself (of
-fgpu-rdc programs) is tested in test_rtc_rdc.py."""
from __future__ import annotations

import pytest

from .helpers import ffi, hipamd, lib, stub_only

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hiprtcLinkCreate"),
                                         reason="the headers declare no hiprtcLinkCreate")]


def rtc(status: int) -> str:
    return ffi.string(ffi.cast("hiprtcResult", status))


def create(options=(), values=()):
    state = ffi.new("hiprtcLinkState *")
    opts = ffi.new("hiprtcJIT_option[]", list(options)) if options else ffi.NULL
    vals = ffi.new("void *[]", list(values)) if values else ffi.NULL
    return lib.hiprtcLinkCreate(len(options), opts, vals, state), state[0]


def test_create_and_destroy():
    status, state = create()
    assert rtc(status) == "HIPRTC_SUCCESS"
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"
    # a destroyed (or never made) state is no linker (isLinkerValid)
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcLinkDestroy(ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"


def test_create_bad_input():
    state = ffi.new("hiprtcLinkState *")
    assert rtc(lib.hiprtcLinkCreate(0, ffi.NULL, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    # options counted but not given
    assert rtc(lib.hiprtcLinkCreate(1, ffi.NULL, ffi.NULL, state)) == "HIPRTC_ERROR_INVALID_INPUT"
    # a pointer option with a null value (AddLinkerOptions)
    status, _ = create([lib.HIPRTC_JIT_ERROR_LOG_BUFFER], [ffi.NULL])
    assert rtc(status) == "HIPRTC_ERROR_INVALID_OPTION"
    status, _ = create([lib.HIPRTC_JIT_INFO_LOG_BUFFER], [ffi.NULL])
    assert rtc(status) == "HIPRTC_ERROR_INVALID_OPTION"
    # a numeric option is not checked
    status, state2 = create([lib.HIPRTC_JIT_MAX_REGISTERS], [ffi.cast("void *", 0)])
    assert rtc(status) == "HIPRTC_SUCCESS"
    assert rtc(lib.hiprtcLinkDestroy(state2)) == "HIPRTC_SUCCESS"


def test_add_data_checks(tmp_path):
    _, state = create()
    data = ffi.new("char[]", b"BC\xc0\xde" + b"\0" * 12)
    bc = lib.HIPRTC_JIT_INPUT_LLVM_BITCODE
    add = lib.hiprtcLinkAddData
    assert rtc(add(state, bc, data, 16, b"a.bc", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_SUCCESS"
    assert rtc(add(state, bc, ffi.NULL, 16, b"a", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(add(state, bc, data, 0, b"a", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    for cuda in ("HIPRTC_JIT_INPUT_CUBIN", "HIPRTC_JIT_INPUT_PTX", "HIPRTC_JIT_INPUT_FATBINARY",
                 "HIPRTC_JIT_INPUT_OBJECT", "HIPRTC_JIT_INPUT_LIBRARY", "HIPRTC_JIT_INPUT_NVVM"):
        t = getattr(lib, cuda)
        assert rtc(add(state, t, data, 16, b"a", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    # a type with no comgr data kind (GetCOMGRDataKind): the program is not created
    assert rtc(add(state, ffi.cast("hiprtcJITInputType", 99), data, 16, b"a", 0, ffi.NULL,
                   ffi.NULL)) == "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE"
    assert rtc(add(ffi.NULL, bc, data, 16, b"a", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    f = tmp_path / "k.bc"
    f.write_bytes(b"BC\xc0\xde")
    addf = lib.hiprtcLinkAddFile
    assert rtc(addf(state, bc, str(f).encode(), 0, ffi.NULL, ffi.NULL)) == "HIPRTC_SUCCESS"
    assert rtc(addf(state, bc, str(tmp_path / "none.bc").encode(), 0, ffi.NULL, ffi.NULL)) == \
        "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE"
    assert rtc(addf(state, lib.HIPRTC_JIT_INPUT_PTX, str(f).encode(), 0, ffi.NULL, ffi.NULL)) == \
        "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(addf(ffi.NULL, bc, str(f).encode(), 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"
    assert rtc(add(state, bc, data, 16, b"a", 0, ffi.NULL, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"


def test_complete_bad_input():
    _, state = create()
    out, size = ffi.new("void **"), ffi.new("size_t *")
    assert rtc(lib.hiprtcLinkComplete(state, ffi.NULL, size)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcLinkComplete(state, out, ffi.NULL)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcLinkComplete(ffi.NULL, out, size)) == "HIPRTC_ERROR_INVALID_INPUT"
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"


# the stub links units of its CPU build (test_rtc_rdc.py); LLVM bitcode it cannot
# read fails the link as a failed comgr link does, and the error log says why
@stub_only
def test_the_stub_cannot_link_llvm_bitcode_and_says_so_in_the_error_log():
    log = ffi.new("char[512]")
    _, state = create([lib.HIPRTC_JIT_ERROR_LOG_BUFFER, lib.HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES],
                      [log, ffi.cast("void *", 512)])
    data = ffi.new("char[]", b"BC\xc0\xde")
    assert rtc(lib.hiprtcLinkAddData(state, lib.HIPRTC_JIT_INPUT_LLVM_BITCODE, data, 4, b"a", 0,
                                     ffi.NULL, ffi.NULL)) == "HIPRTC_SUCCESS"
    out, size = ffi.new("void **"), ffi.new("size_t *")
    assert rtc(lib.hiprtcLinkComplete(state, out, size)) == "HIPRTC_ERROR_LINKING"
    text = ffi.string(log)
    assert b"input 0 (a)" in text and b"cannot link LLVM bitcode" in text
    assert rtc(lib.hiprtcLinkDestroy(state)) == "HIPRTC_SUCCESS"
