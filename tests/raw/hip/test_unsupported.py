"""What the stub cannot model, in one place (rocpy/_native/stub/hip_unsupported.c,
read as ``rocpy.hip.stub_unsupported``): each such function returns
hipErrorNotSupported -- hipamd's status for a feature the device lacks
(hip_texture.cpp: "Texture not supported on the device") -- and records it as
the thread's last error, which the header's weak defaults never do."""
from __future__ import annotations

import pytest

from rocpy import hip

from .helpers import check, ffi, lib, name, stub_only

pytestmark = stub_only


def entries():
    out = []
    if not hasattr(lib, "rocpy_stub_unsupported_count"):    # not the stub: the tests skip
        return out
    reason, whole = ffi.new("char **"), ffi.new("int *")
    for i in range(lib.rocpy_stub_unsupported_count()):
        n = ffi.string(lib.rocpy_stub_unsupported_entry(i, reason, whole)).decode()
        out.append((n, ffi.string(reason[0]).decode(), bool(whole[0])))
    return out


def zero_args(fn):
    """Arguments of the right types, all zero or NULL."""
    args = []
    for t in ffi.typeof(fn).args:
        if t.kind == "pointer":
            args.append(ffi.NULL)
        elif t.kind == "struct":
            args.append(ffi.new(t.cname + " *")[0])
        else:
            args.append(0)
    return args


@pytest.mark.parametrize("fname", [e[0] for e in entries() if e[2]])
def test_each_unsupported_function_says_so(fname):
    fn = getattr(lib, fname)
    lib.hipGetLastError()
    check(fn(*zero_args(fn)), "hipErrorNotSupported")
    assert name(lib.hipGetLastError()) == "hipErrorNotSupported"   # HIP_RETURN, not a weak default


def test_table_is_complete_and_explained():
    table = hip.stub_unsupported
    assert len(table) == lib.rocpy_stub_unsupported_count() == len(entries())
    groups = {"hipCreateTextureObject", "hipTexRefSetArray", "hipMallocMipmappedArray",
              "hipGraphicsGLRegisterBuffer", "hipImportExternalMemory", "hipMemCreate",
              "hipMemPoolExportPointer", "hipRegisterApiCallback", "hiprtcCompileProgram",
              "hipIpcOpenMemHandle"}
    assert {g for g in groups if hasattr(lib, g)} <= set(table)    # GL, callbacks: not in every release
    assert all(len(r) > 40 for r in table.values())
    assert lib.rocpy_stub_unsupported_entry(len(table), ffi.NULL, ffi.NULL) == ffi.NULL


# hip-tests catch/unit/texture/*: every test that creates a texture object
# first checks hipDeviceAttributeImageSupport; the stub answers it (arrays
# are implemented) and refuses the texture itself
def test_texture_object_is_refused_after_image_support_is_answered():
    v = ffi.new("int *")
    check(lib.hipDeviceGetAttribute(v, lib.hipDeviceAttributeImageSupport, 0))
    tex = ffi.new("hipTextureObject_t *")
    res = ffi.new("hipResourceDesc *")
    desc = ffi.new("hipTextureDesc *")
    check(lib.hipCreateTextureObject(tex, res, desc, ffi.NULL), "hipErrorNotSupported")
