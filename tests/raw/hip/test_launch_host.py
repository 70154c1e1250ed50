"""Launches by host function pointer and the rest of the launch surface
(hipamd hip_module.cpp, hip_platform.cpp; stub: hip_launch_host.c).

A host function pointer is what fat-binary registration ties to a kernel
(hip_fatbin.c; hipcc programs in tests/dropin/test_fatbin.py launch
registered ones); the pointers here are ones nobody registered, and these are
hipamd's statuses for that.  hip-tests' launch tests
(catch/unit/kernel, cooperativeGrps) launch registered kernels; their
argument checks are cited where they apply."""
from __future__ import annotations

import pytest

from .helpers import check, ffi, hipamd, lib, ok, stream, stub_only

pytestmark = [hipamd, stub_only]


def dim3(x=1, y=1, z=1):
    d = ffi.new("dim3 *")
    d.x, d.y, d.z = x, y, z
    return d[0]


FN = ffi.cast("void *", 0x1234)


def test_launches_of_unregistered_functions():
    check(lib.hipLaunchKernel_spt(FN, dim3(), dim3(), ffi.NULL, 0, ffi.NULL),
          "hipErrorInvalidDeviceFunction")
    check(lib.hipExtLaunchKernel(FN, dim3(), dim3(), ffi.NULL, 0, ffi.NULL, ffi.NULL, ffi.NULL, 0),
          "hipErrorInvalidDeviceFunction")
    # hipLaunchCooperativeKernel_common: getStatFunc's own status
    check(lib.hipLaunchCooperativeKernel(FN, dim3(), dim3(), ffi.NULL, 0, ffi.NULL),
          "hipErrorInvalidSymbol")
    check(lib.hipLaunchCooperativeKernel_spt(FN, dim3(), dim3(), ffi.NULL, 0, ffi.NULL),
          "hipErrorInvalidSymbol")
    s = stream()
    ok(lib.hipStreamDestroy(s))
    # ... after the stream, which an invalid one fails first with InvalidValue
    check(lib.hipLaunchCooperativeKernel(FN, dim3(), dim3(), ffi.NULL, 0, s),
          "hipErrorInvalidValue")


# hipConfigureCall / hipSetupArgument / hipLaunchByPtr: the configuration
# stack (PlatformState's execStack_); the launch pops it
def test_configure_setup_launch_by_ptr():
    ok(lib.hipConfigureCall(dim3(2), dim3(64), 0, ffi.NULL))
    v = ffi.new("int *", 7)
    ok(lib.hipSetupArgument(v, 4, 0))
    ok(lib.hipSetupArgument(v, 4, 8))
    check(lib.hipLaunchByPtr(FN), "hipErrorInvalidDeviceFunction")
    # the stack is empty again: the stub refuses what hipamd would read from
    # an empty deque
    check(lib.hipLaunchByPtr(FN), "hipErrorInvalidConfiguration")
    check(lib.hipSetupArgument(v, 4, 0), "hipErrorInvalidConfiguration")


# ihipLaunchCooperativeKernelMultiDevice's checks, in its order
def test_multi_device_launch_checks():
    p = ffi.new("hipLaunchParams[1]")
    p[0].func = FN
    p[0].gridDim, p[0].blockDim = dim3(), dim3()
    check(lib.hipLaunchCooperativeKernelMultiDevice(ffi.NULL, 1, 0), "hipErrorInvalidValue")
    check(lib.hipLaunchCooperativeKernelMultiDevice(p, 99, 0), "hipErrorInvalidValue")
    check(lib.hipLaunchCooperativeKernelMultiDevice(p, 1, 0), "hipErrorInvalidHandle")   # ResourceHandle
    s = stream()
    p[0].stream = s
    p[0].blockDim = dim3(0)
    check(lib.hipExtLaunchMultiKernelMultiDevice(p, 1, 0), "hipErrorInvalidConfiguration")
    p[0].blockDim = dim3(64)
    check(lib.hipExtLaunchMultiKernelMultiDevice(p, 1, 0), "hipErrorInvalidSymbol")
    ok(lib.hipStreamDestroy(s))
    check(lib.hipExtLaunchMultiKernelMultiDevice(p, 1, 0), "hipErrorInvalidValue")


def test_function_config_and_names():
    # "No way to set function attribute yet": accepted and ignored
    ok(lib.hipFuncSetAttribute(FN, lib.hipFuncAttributeMaxDynamicSharedMemorySize, 0))
    ok(lib.hipFuncSetCacheConfig(FN, lib.hipFuncCachePreferNone))
    ok(lib.hipFuncSetSharedMemConfig(FN, lib.hipSharedMemBankSizeDefault))
    assert lib.hipKernelNameRefByPtr(FN, ffi.NULL) == ffi.NULL
    assert lib.hipKernelNameRefByPtr(ffi.NULL, ffi.NULL) == ffi.NULL
    assert lib.hipKernelNameRef(ffi.NULL) == ffi.NULL
    # the installed hip_prof_str.h's table: HIP_API_ID___hipPopCallConfiguration = 1
    assert ffi.string(lib.hipApiName(1)) == b"__hipPopCallConfiguration"
    assert ffi.string(lib.hipApiName(0xFFFFFF)) == b"unknown"
    # hipamd: assert(0 && "Unimplemented"), hipErrorNotSupported in release builds
    check(lib.hipProfilerStart(), "hipErrorNotSupported")
    check(lib.hipProfilerStop(), "hipErrorNotSupported")
    # hipMemMapArrayAsync: arguments, then hipErrorNotSupported
    check(lib.hipMemMapArrayAsync(ffi.NULL, 1, ffi.NULL), "hipErrorInvalidValue")
    info = ffi.new("hipArrayMapInfo *")
    check(lib.hipMemMapArrayAsync(info, 0, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipMemMapArrayAsync(info, 1, ffi.NULL), "hipErrorNotSupported")


def test_kernel_name_of_a_module_function(hip_kernel):
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("vadd").encode()))
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    assert ffi.string(lib.hipKernelNameRef(f[0])) == b"vadd"
    ok(lib.hipModuleUnload(m[0]))


# <<<>>>: hipcc's code pushes the configuration and its host stub pops it
# (PlatformState's execStack_, the one hipConfigureCall uses too)
def test_push_and_pop_call_configuration():
    s = stream()
    ok(lib.__hipPushCallConfiguration(dim3(3, 2), dim3(64, 2), 128, s))
    grid, block = ffi.new("dim3 *"), ffi.new("dim3 *")
    shared, popped = ffi.new("size_t *"), ffi.new("hipStream_t *")
    ok(lib.__hipPopCallConfiguration(grid, block, shared, popped))
    assert (grid.x, grid.y, grid.z, block.x, block.y, block.z) == (3, 2, 1, 64, 2, 1)
    assert shared[0] == 128 and popped[0] == s
    # an empty stack: hipamd pops an empty deque; the stub refuses
    check(lib.__hipPopCallConfiguration(grid, block, shared, popped), "hipErrorInvalidConfiguration")
    check(lib.hipGetLastError(), "hipErrorInvalidConfiguration")
    ok(lib.hipConfigureCall(dim3(1), dim3(1), 0, ffi.NULL))        # shared with hipConfigureCall
    ok(lib.__hipPopCallConfiguration(grid, block, shared, popped))
    assert popped[0] == ffi.NULL
    ok(lib.hipStreamDestroy(s))


@pytest.mark.skipif(not hasattr(lib, "__hipGetPCH"),
                    reason="__hipGetPCH: these headers do not declare it for C (6.2)")
def test_no_precompiled_header():
    pch, size = ffi.new("char **", ffi.cast("char *", 1)), ffi.new("unsigned int *", 5)
    lib.__hipGetPCH(ffi.cast("const char **", pch), size)
    assert pch[0] == ffi.NULL and size[0] == 0
