"""The driver API's linker, hipLink* (headers of 6.4 on; clr hipamd/src/hip_module.cpp
hipLinkCreate/AddData/AddFile/Complete/Destroy in ROCm/rocm-systems projects/clr).
hipamd takes SPIR-V only (hipJitInputSpirv): the CUDA kinds and the LLVM bitcode kinds
are hipErrorInvalidValue.  The stub links units of its CPU build given as SPIR-V (what
its hiprtc makes of -fgpu-rdc programs); real SPIR-V fails hipLinkComplete with
hipErrorInvalidConfiguration (stub: hip_module_link.c, hip_rtc_linker.c)."""
from __future__ import annotations

import pytest

from .helpers import check, ffi, hipamd, lib, stub_only
from .rdc import CALLEE, CALLER, bitcode, needs_cxx, run_apply

pytestmark = [hipamd, pytest.mark.skipif(not hasattr(lib, "hipLinkCreate"),
                                         reason="the headers declare no hipLinkCreate")]

REFUSED = ("hipJitInputCubin", "hipJitInputPtx", "hipJitInputFatBinary", "hipJitInputObject",
           "hipJitInputLibrary", "hipJitInputNvvm", "hipJitInputLLVMBitcode",
           "hipJitInputLLVMBundledBitcode", "hipJitInputLLVMArchivesOfBundledBitcode")
SPIRV_MAGIC = b"\x03\x02\x23\x07" + b"\0" * 16


def create():
    state = ffi.new("hipLinkState_t *")
    check(lib.hipLinkCreate(0, ffi.NULL, ffi.NULL, state))
    return state[0]


def add(state, data: bytes, kind=None, name: bytes = b"in"):
    kind = lib.hipJitInputSpirv if kind is None else kind
    image = ffi.new("char[]", data)
    return lib.hipLinkAddData(state, kind, image, len(data), name, 0, ffi.NULL, ffi.NULL)


def complete(state):
    out, size = ffi.new("void **"), ffi.new("size_t *")
    st = lib.hipLinkComplete(state, out, size)
    return st, (bytes(ffi.buffer(out[0], size[0])) if st == 0 else None)


def test_create_checks():
    state = ffi.new("hipLinkState_t *")
    check(lib.hipLinkCreate(0, ffi.NULL, ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    opts = ffi.new("hipJitOption[]", [lib.hipJitOptionIRtoISAOptExt])
    vals = ffi.new("void *[1]")
    check(lib.hipLinkCreate(1, ffi.NULL, vals, state), "hipErrorInvalidValue")
    check(lib.hipLinkCreate(1, opts, ffi.NULL, state), "hipErrorInvalidValue")
    # every CUDA option (hipJitOptionMaxRegisters .. hipJitOptionNumOptions)
    for o in range(lib.hipJitOptionNumOptions + 1):
        one = ffi.new("hipJitOption[]", [o])
        check(lib.hipLinkCreate(1, one, vals, state), "hipErrorInvalidValue")
    # the HIP options are taken
    isa = ffi.new("char *[]", [ffi.new("char[]", b"-mllvm")])
    two = ffi.new("hipJitOption[]", [lib.hipJitOptionIRtoISAOptExt,
                                     lib.hipJitOptionIRtoISAOptCountExt])
    check(lib.hipLinkCreate(2, two, ffi.new("void *[]", [isa, ffi.cast("void *", 1)]), state))
    check(lib.hipLinkDestroy(state[0]))


def test_destroy_checks():
    state = create()
    check(lib.hipLinkDestroy(state))
    check(lib.hipLinkDestroy(state), "hipErrorInvalidValue")      # destroyed: not a linker
    check(lib.hipLinkDestroy(ffi.NULL), "hipErrorInvalidValue")


def test_add_data_checks():
    state = create()
    image = ffi.new("char[4]")
    check(lib.hipLinkAddData(state, lib.hipJitInputSpirv, ffi.NULL, 4, b"a", 0, ffi.NULL, ffi.NULL),
          "hipErrorInvalidImage")
    check(lib.hipLinkAddData(state, lib.hipJitInputSpirv, image, 0, b"a", 0, ffi.NULL, ffi.NULL),
          "hipErrorInvalidImage")
    for kind in REFUSED:
        check(add(state, SPIRV_MAGIC, getattr(lib, kind)), "hipErrorInvalidValue")
    check(add(ffi.NULL, SPIRV_MAGIC), "hipErrorInvalidHandle")
    check(add(ffi.cast("hipLinkState_t", 0x1234), SPIRV_MAGIC), "hipErrorInvalidHandle")
    # a kind with no comgr data kind (LinkProgram::GetCOMGRDataKind)
    check(add(state, SPIRV_MAGIC, ffi.cast("hipJitInputType", 99)), "hipErrorInvalidConfiguration")
    check(add(state, SPIRV_MAGIC))
    check(lib.hipLinkDestroy(state))


def test_add_file_checks(tmp_path):
    state = create()
    f = tmp_path / "k.spv"
    f.write_bytes(SPIRV_MAGIC)
    path = str(f).encode()
    addf = lib.hipLinkAddFile
    check(addf(ffi.NULL, lib.hipJitInputSpirv, path, 0, ffi.NULL, ffi.NULL), "hipErrorInvalidHandle")
    for kind in REFUSED:
        check(addf(state, getattr(lib, kind), path, 0, ffi.NULL, ffi.NULL), "hipErrorInvalidValue")
    check(addf(ffi.cast("hipLinkState_t", 0x1234), lib.hipJitInputSpirv, path, 0, ffi.NULL,
               ffi.NULL), "hipErrorInvalidValue")              # not a linker: isLinkerValid
    check(addf(state, lib.hipJitInputSpirv, str(tmp_path / "none.spv").encode(), 0, ffi.NULL,
               ffi.NULL), "hipErrorInvalidConfiguration")
    check(addf(state, lib.hipJitInputSpirv, path, 0, ffi.NULL, ffi.NULL))
    check(lib.hipLinkDestroy(state))


def test_complete_checks():
    state = create()
    out, size = ffi.new("void **"), ffi.new("size_t *")
    check(lib.hipLinkComplete(state, ffi.NULL, size), "hipErrorInvalidValue")
    check(lib.hipLinkComplete(state, out, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipLinkComplete(ffi.NULL, out, size), "hipErrorInvalidValue")
    check(lib.hipLinkDestroy(state))


# real SPIR-V: the stub has no comgr to turn it into a code object
@stub_only
def test_spirv_fails_the_link_and_says_so(capfd):
    state = create()
    check(add(state, SPIRV_MAGIC, name=b"k.spv"))
    check(complete(state)[0], "hipErrorInvalidConfiguration")
    err = capfd.readouterr().err
    assert "input 0 (k.spv)" in err and "cannot link" in err
    check(lib.hipLinkDestroy(state))


# a kernel in one unit calls a __device__ function and reads a variable the other
# defines; hip-tests module/hipLinkCreate.cc Unit_hip_linker_spirv_input's flow
@stub_only
def test_link_of_units_runs_a_kernel_across_them(tmp_path):
    needs_cxx()
    state = create()
    check(add(state, bitcode(CALLER, b"caller.hip"), name=b"caller"))
    f = tmp_path / "callee.unit"
    f.write_bytes(bitcode(CALLEE, b"callee.hip"))
    check(lib.hipLinkAddFile(state, lib.hipJitInputSpirv, str(f).encode(), 0, ffi.NULL, ffi.NULL))
    st, code = complete(state)
    check(st)
    check(lib.hipLinkDestroy(state))
    assert run_apply(code, [1, 2, 3]) == [9, 11, 13]


@stub_only
def test_link_of_nothing_fails(capfd):
    state = create()
    check(complete(state)[0], "hipErrorInvalidConfiguration")
    assert "no inputs" in capfd.readouterr().err
    check(lib.hipLinkDestroy(state))
