"""Symbols (hipamd hip_memory.cpp ihipMemcpySymbol_validate, hip_platform.cpp
hipGetSymbolAddress/Size, StatCO::getStatGlobalVar; stub: hip_symbol.c).

A symbol is the address of a host variable that fat-binary registration tied
to its device copy.  The stub has no fat-binary registration yet; these tests
register a module global's device memory under a host key through
``rocpy_stub_register_symbol``, as ``__hipRegisterVar`` would.  Expectations
from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/memory/hipMemcpyFromSymbol.cc``,
``hipGetSymbolSizeAddress.cc``), each cited by file and line."""
from __future__ import annotations

import numpy as np
import pytest

from .helpers import BACKEND, check, ffi, lib, ok, stream, stub_only

pytestmark = stub_only

H2D, D2H = lib.hipMemcpyHostToDevice, lib.hipMemcpyDeviceToHost


@pytest.fixture(scope="module")
def dev_symbol(hip_kernel):
    """`counter` (an int) of scale.hip, registered under a host key."""
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("scale").encode()))
    d, size = ffi.new("hipDeviceptr_t *"), ffi.new("size_t *")
    ok(lib.hipModuleGetGlobal(d, size, m[0], b"counter"))
    assert size[0] == 4
    key = ffi.new("int *")                       # the host variable's address
    assert lib.rocpy_stub_register_symbol(key, d[0], size[0]) == 0
    yield key, d[0]
    lib.rocpy_stub_unregister_symbol(key)
    ok(lib.hipModuleUnload(m[0]))


# hipMemcpyFromSymbol.cc basic use: to the symbol and back, sync and async,
# at an offset; the device copy is what hipModuleGetGlobal names
def test_copies_to_and_from_a_symbol(dev_symbol):
    key, dptr = dev_symbol
    v = np.array([41], dtype=np.int32)
    ok(lib.hipMemcpyToSymbol(key, ffi.from_buffer(v), 4, 0, H2D))
    out = np.zeros(1, dtype=np.int32)
    ok(lib.hipMemcpy(ffi.from_buffer(out), dptr, 4, D2H))
    assert out[0] == 41
    s = stream()
    v[0] = 0x01020304
    ok(lib.hipMemcpyToSymbolAsync(key, ffi.from_buffer(v), 4, 0, H2D, s))
    b = np.zeros(2, dtype=np.uint8)
    ok(lib.hipMemcpyFromSymbolAsync(ffi.from_buffer(b), key, 2, 2, D2H, s))
    ok(lib.hipStreamSynchronize(s))
    assert list(b) == [0x02, 0x01]
    ok(lib.hipMemcpyFromSymbol(ffi.from_buffer(out), key, 4, 0, D2H))
    assert out[0] == 0x01020304
    ok(lib.hipStreamDestroy(s))


# hipGetSymbolSizeAddress.cc basic sections: the device address and size
def test_symbol_address_and_size(dev_symbol):
    key, dptr = dev_symbol
    p, size = ffi.new("void **"), ffi.new("size_t *")
    ok(lib.hipGetSymbolAddress(p, key))
    assert p[0] == dptr
    ok(lib.hipGetSymbolSize(size, key))
    assert size[0] == 4
    # hipGetSymbolSizeAddress.cc:101/:115 (null out), :107/:121 (null symbol)
    check(lib.hipGetSymbolAddress(ffi.NULL, key), "hipErrorInvalidValue")
    check(lib.hipGetSymbolAddress(p, ffi.NULL), "hipErrorInvalidSymbol")
    check(lib.hipGetSymbolSize(ffi.NULL, key), "hipErrorInvalidValue")
    check(lib.hipGetSymbolSize(size, ffi.NULL), "hipErrorInvalidSymbol")


# hipMemcpyFromSymbol.cc:27 (Unit_hipMemcpyFromToSymbol_Negative)
def test_symbol_copies_negative(dev_symbol):
    key, _ = dev_symbol
    r = ffi.new("int *")
    big = ffi.new("int[100]")
    s = ffi.NULL
    # :30-:40 (Invalid Src Ptr)
    check(lib.hipMemcpyFromSymbol(ffi.NULL, key, 4, 0, D2H), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbol(ffi.NULL, r, 4, 0, H2D), "hipErrorInvalidSymbol")
    check(lib.hipMemcpyToSymbolAsync(ffi.NULL, r, 4, 0, H2D, s), "hipErrorInvalidSymbol")
    check(lib.hipMemcpyFromSymbolAsync(ffi.NULL, key, 4, 0, D2H, s), "hipErrorInvalidValue")
    # :45-:55 (Invalid Dst Ptr)
    check(lib.hipMemcpyFromSymbol(r, ffi.NULL, 4, 0, D2H), "hipErrorInvalidSymbol")
    check(lib.hipMemcpyToSymbol(key, ffi.NULL, 4, 0, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbolAsync(key, ffi.NULL, 4, 0, H2D, s), "hipErrorInvalidValue")
    check(lib.hipMemcpyFromSymbolAsync(r, ffi.NULL, 4, 0, D2H, s), "hipErrorInvalidSymbol")
    # :60-:69 (Invalid Size)
    check(lib.hipMemcpyFromSymbol(big, key, 400, 0, D2H), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbol(key, big, 400, 0, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbolAsync(key, big, 400, 0, H2D, s), "hipErrorInvalidValue")
    check(lib.hipMemcpyFromSymbolAsync(big, key, 400, 0, D2H, s), "hipErrorInvalidValue")
    # :76-:85 (Invalid Offset)
    check(lib.hipMemcpyFromSymbol(r, key, 4, 300, D2H), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbol(key, r, 4, 300, H2D), "hipErrorInvalidValue")
    check(lib.hipMemcpyToSymbolAsync(key, r, 4, 300, H2D, s), "hipErrorInvalidValue")
    check(lib.hipMemcpyFromSymbolAsync(r, key, 4, 300, D2H, s), "hipErrorInvalidValue")
    # an unregistered host address (StatCO::getStatGlobalVar)
    other = ffi.new("int *")
    check(lib.hipMemcpyToSymbol(other, r, 4, 0, H2D), "hipErrorInvalidSymbol")
    # the synchronous forms are refused while a stream captures
    cap = stream()
    ok(lib.hipStreamBeginCapture(cap, lib.hipStreamCaptureModeGlobal))
    check(lib.hipMemcpyToSymbol(key, r, 4, 0, H2D), "hipErrorStreamCaptureImplicit")
    g = ffi.new("hipGraph_t *")
    lib.hipStreamEndCapture(cap, g)
    if g[0] != ffi.NULL:
        ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(cap))


# hipMemcpyFromSymbol.cc:92-:101 (Invalid Direction) expect
# hipErrorInvalidMemcpyDirection; the stub's copies, as hipamd 5.2's
# ihipMemcpy, take the kind as a hint between a device and a host pointer
@pytest.mark.skipif(BACKEND != "stub", reason="stub")
def test_symbol_copy_kind_is_a_hint(dev_symbol):
    key, _ = dev_symbol
    r = ffi.new("int *")
    ok(lib.hipMemcpyFromSymbol(r, key, 4, 0, H2D))
    ok(lib.hipMemcpyToSymbol(key, r, 4, 0, D2H))
