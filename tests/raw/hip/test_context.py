"""Contexts (hipamd hip_context.cpp): the primary context of each device and
the deprecated hipCtx* stack."""
from __future__ import annotations

import pytest

from .helpers import HostLog, check, device_count, ffi, hipamd, lib, ok


# platform-independent
def test_primary_context_retain_release_state():
    ctx = ffi.new("hipCtx_t *")
    ok(lib.hipDevicePrimaryCtxRetain(ctx, 0))
    assert ctx[0] != ffi.NULL
    flags, active = ffi.new("unsigned int *"), ffi.new("int *")
    ok(lib.hipDevicePrimaryCtxGetState(0, flags, active))
    ok(lib.hipDevicePrimaryCtxRelease(0))
    check(lib.hipDevicePrimaryCtxRetain(ffi.NULL, 0), "hipErrorInvalidValue")
    check(lib.hipDevicePrimaryCtxRetain(ctx, device_count()), "hipErrorInvalidDevice")
    check(lib.hipDevicePrimaryCtxGetState(device_count(), flags, active), "hipErrorInvalidDevice")
    check(lib.hipDevicePrimaryCtxRelease(-1), "hipErrorInvalidDevice")


# hipamd-specific: the primary context is active once a queue was used, its
# flags are 0 and cannot be set, and a reset is a no-op success
@hipamd
def test_primary_context_as_hipamd():
    log = HostLog()
    log.enqueue(ffi.NULL, "x")
    ok(lib.hipDeviceSynchronize())
    flags, active = ffi.new("unsigned int *"), ffi.new("int *")
    ok(lib.hipDevicePrimaryCtxGetState(0, flags, active))
    assert (flags[0], active[0]) == (0, 1)
    check(lib.hipDevicePrimaryCtxSetFlags(0, 0), "hipErrorContextAlreadyInUse")
    check(lib.hipDevicePrimaryCtxSetFlags(device_count(), 0), "hipErrorInvalidDevice")
    ok(lib.hipDevicePrimaryCtxReset(0))


# hipamd-specific: the hipCtx* stack
@hipamd
def test_context_stack():
    ctx, popped, cur = ffi.new("hipCtx_t *"), ffi.new("hipCtx_t *"), ffi.new("hipCtx_t *")
    ok(lib.hipCtxCreate(ctx, 0, 0))
    primary = ffi.new("hipCtx_t *")
    ok(lib.hipDevicePrimaryCtxRetain(primary, 0))
    assert ctx[0] == primary[0]                      # the primary context, always
    ok(lib.hipCtxGetCurrent(cur))
    assert cur[0] == ctx[0]
    ok(lib.hipCtxPushCurrent(ctx[0]))
    ok(lib.hipCtxPopCurrent(popped))
    assert popped[0] == ctx[0]
    ok(lib.hipCtxPopCurrent(ffi.NULL))               # the one hipCtxCreate pushed
    check(lib.hipCtxPopCurrent(popped), "hipErrorInvalidContext")
    check(lib.hipCtxPushCurrent(ffi.NULL), "hipErrorInvalidContext")
    ok(lib.hipCtxSetCurrent(ctx[0]))
    ok(lib.hipCtxSetCurrent(ffi.NULL))               # pops
    check(lib.hipCtxPopCurrent(popped), "hipErrorInvalidContext")
    dev = ffi.new("hipDevice_t *")
    ok(lib.hipCtxGetDevice(dev))
    assert dev[0] == 0
    check(lib.hipCtxGetDevice(ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipCtxCreate(ctx, 0, device_count()), "hipErrorInvalidValue")
    ok(lib.hipCtxDestroy(ctx[0]))
    check(lib.hipCtxDestroy(ffi.NULL), "hipErrorInvalidValue")


# hipamd-specific: hipamd leaves these unimplemented
@hipamd
def test_unimplemented_context_calls():
    v = ffi.new(ffi.typeof(lib.hipCtxGetApiVersion).args[1])   # int * (HIP 7.0: unsigned int *)
    check(lib.hipCtxSynchronize(), "hipErrorNotSupported")
    check(lib.hipCtxGetApiVersion(ffi.NULL, v), "hipErrorNotSupported")
    check(lib.hipCtxGetFlags(ffi.cast("unsigned int *", v)), "hipErrorNotSupported")
    cfg = ffi.new("hipSharedMemConfig *")
    ok(lib.hipCtxGetSharedMemConfig(cfg))
    assert cfg[0] == lib.hipSharedMemBankSizeFourByte


# hipamd-specific (needs two devices): push/set change the current device,
# create and pop do not
@hipamd
@pytest.mark.multidevice
def test_context_selects_the_device():
    ctx1 = ffi.new("hipCtx_t *")
    ok(lib.hipDevicePrimaryCtxRetain(ctx1, 1))
    dev = ffi.new("int *")
    ok(lib.hipCtxPushCurrent(ctx1[0]))
    ok(lib.hipGetDevice(dev))
    assert dev[0] == 1
    ok(lib.hipCtxPopCurrent(ffi.NULL))
    ok(lib.hipGetDevice(dev))
    assert dev[0] == 1
    ok(lib.hipSetDevice(0))
    created = ffi.new("hipCtx_t *")
    ok(lib.hipCtxCreate(created, 0, 1))
    ok(lib.hipGetDevice(dev))
    assert dev[0] == 0
    ok(lib.hipCtxSetCurrent(created[0]))
    ok(lib.hipGetDevice(dev))
    assert dev[0] == 1
    ok(lib.hipCtxSetCurrent(ffi.NULL))
    ok(lib.hipCtxDestroy(created[0]))
