"""hipGetDriverEntryPoint and its _spt form (hip_proc_address.c; clr
hip_device_runtime.cpp hipGetDriverEntryPoint_common): a HIP function's
address by name from the runtime's own table.  Declared by the 7.2 headers
(tools/other_headers.sh); earlier builds skip."""
from __future__ import annotations

import pytest

from .helpers import BACKEND, check, ffi, hipamd, lib, ok, requires

pytestmark = [pytest.mark.skipif(BACKEND == "nvidia", reason="hipamd's table"), hipamd,
              requires("hipGetDriverEntryPoint", "hipGetDriverEntryPoint_spt")]

FLAGS = ("hipEnableDefault", "hipEnableLegacyStream", "hipEnablePerThreadDefaultStream")


def entry(name, flags=0, fn="hipGetDriverEntryPoint"):
    p, st = ffi.new("void **"), ffi.new("hipDriverEntryPointQueryResult *", 7)
    status = getattr(lib, fn)(name, p, flags, st)
    return status, p[0], st[0]


@pytest.mark.parametrize("fn", ["hipGetDriverEntryPoint", "hipGetDriverEntryPoint_spt"])
@pytest.mark.parametrize("flag", FLAGS)
def test_the_address_is_the_runtimes_function(fn, flag):
    status, p, st = entry(b"hipGetDeviceCount", getattr(lib, flag), fn)
    ok(status)
    assert st == lib.hipDriverEntryPointSuccess
    count = ffi.new("int *")
    ok(ffi.cast("hipError_t (*)(int *)", p)(count))
    direct = ffi.new("int *")
    ok(lib.hipGetDeviceCount(direct))
    assert count[0] == direct[0] > 0


def test_per_thread_flag_picks_the_spt_form():
    """hipEnablePerThreadDefaultStream (the _spt form's default) answers
    NAME_spt where the runtime has one, NAME where not; the others NAME."""
    addr = lambda name: int(ffi.cast("uintptr_t", entry(name)[1]))
    plain, spt = addr(b"hipMemcpyAsync"), addr(b"hipMemcpyAsync_spt")
    assert plain and spt and plain != spt
    per_thread = lib.hipEnablePerThreadDefaultStream
    assert int(ffi.cast("uintptr_t", entry(b"hipMemcpyAsync", per_thread)[1])) == spt
    assert int(ffi.cast("uintptr_t", entry(b"hipMemcpyAsync", 0, "hipGetDriverEntryPoint_spt")[1])) == spt
    legacy = lib.hipEnableLegacyStream
    assert int(ffi.cast("uintptr_t", entry(b"hipMemcpyAsync", legacy, "hipGetDriverEntryPoint_spt")[1])) == plain
    # no _spt form: the name itself
    assert int(ffi.cast("uintptr_t", entry(b"hipMalloc", per_thread)[1])) == addr(b"hipMalloc")


@requires("hipGetProcAddress")
def test_the_same_table_as_get_proc_address():
    for name in (b"hipMalloc", b"hipStreamCreate", b"hipGetDriverEntryPoint"):
        p, st = ffi.new("void **"), ffi.new("hipDriverProcAddressQueryResult *")
        ok(lib.hipGetProcAddress(name, p, 700, 0, st))
        assert int(ffi.cast("uintptr_t", entry(name)[1])) == int(ffi.cast("uintptr_t", p[0]))


@pytest.mark.parametrize("fn", ["hipGetDriverEntryPoint", "hipGetDriverEntryPoint_spt"])
def test_bad_input(fn):
    call = getattr(lib, fn)
    p, st = ffi.new("void **"), ffi.new("hipDriverEntryPointQueryResult *", 7)
    check(call(b"", p, 0, st), "hipErrorInvalidValue")
    check(call(ffi.NULL, p, 0, st), "hipErrorInvalidValue")
    check(call(b"hipGetDeviceCount", ffi.NULL, 0, st), "hipErrorInvalidValue")
    check(call(b"hipGetDeviceCount", p, 0xFFFFFFFFFFFFFFFF, st), "hipErrorInvalidValue")
    check(call(b"hipGetDeviceCount", p, 3, st), "hipErrorInvalidValue")
    assert st[0] == 7                                   # argument errors leave the status alone
    p[0] = ffi.cast("void *", 1)
    check(call(b"hipNoSuchFunction", p, 0, st), "hipErrorInvalidValue")
    assert p[0] == ffi.NULL and st[0] == lib.hipDriverEntryPointSymbolNotFound
    check(call(b"hipNoSuchFunction", p, 0, ffi.NULL), "hipErrorInvalidValue")   # status optional
    ok(call(b"hipMalloc", p, 0, ffi.NULL))
