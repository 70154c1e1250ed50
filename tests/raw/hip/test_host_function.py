"""Calls taking a registered __global__ host stub (hip_host_function.c,
hip_launch_host.c): hipLaunchCooperativeKernel, hipGetFuncBySymbol,
hipOccupancyAvailableDynamicSMemPerBlock, hipLaunchKernelExC.

The test registers vadd's offload bundle as hipcc's constructor does
(__hipRegisterFatBinary + __hipRegisterFunction, hip_fatbin.cdef), with a
host address of its own as the kernel's host stub."""
from __future__ import annotations

import struct

import pytest

from .helpers import BACKEND, check, ffi, hipamd, lib, ok, requires, stream, stub_only
from .test_module import arg, params
from .test_module_launch_ex import N, Buffers, grid_limit

pytestmark = [pytest.mark.skipif(BACKEND != "stub", reason="registers a bundle by hand"), hipamd,
              stub_only]

HIP_FAT_MAGIC = 0x48495046       # "HIPF"


@pytest.fixture(scope="module")
def registered(hip_kernel):
    """(host stub, the module's hipFunction_t for comparison) of a registered vadd."""
    image = ffi.new("char[]", open(hip_kernel("vadd"), "rb").read())
    wrapper = ffi.new("char[24]")
    ffi.memmove(wrapper, struct.pack("<IIQQ", HIP_FAT_MAGIC, 1,
                                     int(ffi.cast("uintptr_t", image)), 0), 24)
    modules = lib.__hipRegisterFatBinary(wrapper)
    assert modules != ffi.NULL
    host = ffi.new("char[1]")                 # the "host stub": any address of ours
    lib.__hipRegisterFunction(modules, host, ffi.cast("char *", host), b"vadd", 0xFFFFFFFF,
                              ffi.NULL, ffi.NULL, ffi.NULL, ffi.NULL, ffi.NULL)
    # the first use loads the bundle for the device, its variables (hipcc's
    # __hip_cuid_*) included: here, not inside a test that counts allocations
    p, keep = params(arg("void *", ffi.NULL), arg("void *", ffi.NULL), arg("void *", ffi.NULL),
                     arg("int", 0))
    one = {"x": 1, "y": 1, "z": 1}
    ok(lib.hipLaunchKernel(host, one, one, p, 0, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    yield host
    lib.__hipUnregisterFatBinary(modules)
    del image, wrapper


@pytest.fixture
def bufs():
    b = Buffers()
    yield b
    b.close()


UNREGISTERED = ffi.new("char[1]")


def func_of(host):
    f = ffi.new("hipFunction_t *")
    ok(lib.hipGetFuncBySymbol(f, host))
    return f[0]


# ---- hipLaunchCooperativeKernel (every release) -----------------------------------

def test_cooperative_launch_of_a_registered_kernel(registered, bufs):
    ok(lib.hipLaunchCooperativeKernel(registered, {"x": N // 256, "y": 1, "z": 1},
                                      {"x": 256, "y": 1, "z": 1}, bufs.p, 0, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()


@requires("hipModuleOccupancyMaxPotentialBlockSize")
def test_cooperative_launch_of_a_registered_kernel_checks_the_grid(registered, bufs, hip_kernel):
    m, f = ffi.new("hipModule_t *"), ffi.new("hipFunction_t *")
    ok(lib.hipModuleLoad(m, hip_kernel("vadd").encode()))
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    limit = grid_limit(f[0], 64)
    ok(lib.hipModuleUnload(m[0]))
    block = {"x": 64, "y": 1, "z": 1}
    check(lib.hipLaunchCooperativeKernel(registered, {"x": limit + 1, "y": 1, "z": 1}, block, bufs.p, 0,
                                         ffi.NULL), "hipErrorCooperativeLaunchTooLarge")
    ok(lib.hipLaunchCooperativeKernel(registered, {"x": limit, "y": 1, "z": 1}, block, bufs.p, 0, ffi.NULL))
    ok(lib.hipDeviceSynchronize())


def test_cooperative_launch_status_order(registered, bufs):
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    one = {"x": 1, "y": 1, "z": 1}
    check(lib.hipLaunchCooperativeKernel(registered, one, one, bufs.p, 0, dead), "hipErrorInvalidValue")
    check(lib.hipLaunchCooperativeKernel(UNREGISTERED, one, one, bufs.p, 0, ffi.NULL), "hipErrorInvalidSymbol")


# ---- hipGetFuncBySymbol ---------------------------------------------------------------

@requires("hipGetFuncBySymbol")
def test_func_by_symbol_is_the_registered_kernel(registered, bufs):
    f = func_of(registered)
    ok(lib.hipModuleLaunchKernel(f, N // 256, 1, 1, 256, 1, 1, 0, ffi.NULL, bufs.p, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()
    assert func_of(registered) == f                       # one function per device
    check(lib.hipGetFuncBySymbol(ffi.new("hipFunction_t *"), UNREGISTERED), "hipErrorInvalidDeviceFunction")
    check(lib.hipGetFuncBySymbol(ffi.new("hipFunction_t *"), ffi.NULL), "hipErrorInvalidDeviceFunction")
    check(lib.hipGetFuncBySymbol(ffi.NULL, registered), "hipErrorInvalidDeviceFunction")


# ---- hipOccupancyAvailableDynamicSMemPerBlock --------------------------------------

def lds_per_cu() -> int:
    v = ffi.new("int *")
    ok(lib.hipDeviceGetAttribute(v, lib.hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, 0))
    return v[0]


@requires("hipOccupancyAvailableDynamicSMemPerBlock")
@pytest.mark.parametrize("blocks,block", [(1, 256), (4, 256), (16, 256), (3, 1024), (1, 2048)])
def test_available_dynamic_lds(registered, blocks, block):
    """vadd has no static LDS: each of `blocks` blocks gets the CU's LDS divided
    among them, but never less than a share of the most blocks that fit by
    threads (2048 per CU), aligned down to 16 bytes."""
    out = ffi.new("size_t *")
    ok(lib.hipOccupancyAvailableDynamicSMemPerBlock(out, registered, blocks, block))
    lds, fit = lds_per_cu(), 2048 // block
    assert out[0] == max(lds // blocks, lds // fit) // 16 * 16


@requires("hipOccupancyAvailableDynamicSMemPerBlock")
def test_available_dynamic_lds_bad_arguments(registered):
    out = ffi.new("size_t *")
    call = lib.hipOccupancyAvailableDynamicSMemPerBlock
    check(call(ffi.NULL, registered, 1, 256), "hipErrorInvalidValue")
    check(call(out, registered, 0, 256), "hipErrorInvalidValue")
    check(call(out, registered, 1, 0), "hipErrorInvalidValue")
    check(call(out, registered, -1, 256), "hipErrorInvalidValue")
    check(call(out, UNREGISTERED, 1, 256), "hipErrorInvalidDeviceFunction")
    check(call(out, ffi.NULL, 1, 256), "hipErrorInvalidDeviceFunction")
    check(call(out, registered, 1, 4096), "hipErrorInvalidValue")       # above the CU's threads


# ---- hipLaunchKernelExC ------------------------------------------------------------------

def config(grid, block, shared=0, s=ffi.NULL, attrs=()):
    cfg = ffi.new("hipLaunchConfig_t *")
    cfg.gridDim = {"x": grid, "y": 1, "z": 1}
    cfg.blockDim = {"x": block, "y": 1, "z": 1}
    cfg.dynamicSmemBytes = shared
    cfg.stream = s
    arr = ffi.new("hipLaunchAttribute[]", max(len(attrs), 1))
    for i, (ident, value) in enumerate(attrs):
        arr[i].id = ident
        arr[i].val.cooperative = value
    cfg.attrs = arr if attrs else ffi.NULL
    cfg.numAttrs = len(attrs)
    return cfg, arr


@requires("hipLaunchKernelExC")
def test_launch_ex_c_runs(registered, bufs):
    cfg, keep = config(N // 256, 256)
    ok(lib.hipLaunchKernelExC(cfg, registered, bufs.p))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()
    ok(lib.hipMemset(bufs.c, 0, N * 4))
    cfg, keep = config(N // 256, 256, attrs=[(lib.hipLaunchAttributeCooperative, 1)])
    ok(lib.hipLaunchKernelExC(cfg, registered, bufs.p))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()


@requires("hipLaunchKernelExC")
def test_launch_ex_c_attributes_and_bad_arguments(registered, bufs):
    f = func_of(registered)
    limit = grid_limit(f, 64)
    coop = lib.hipLaunchAttributeCooperative
    cfg, keep = config(limit + 1, 64, attrs=[(coop, 1)])
    check(lib.hipLaunchKernelExC(cfg, registered, bufs.p), "hipErrorCooperativeLaunchTooLarge")
    cfg, keep = config(limit + 1, 64, attrs=[(coop, 0)])        # 0: a plain launch
    ok(lib.hipLaunchKernelExC(cfg, registered, bufs.p))
    cfg, keep = config(1, 64, attrs=[(lib.hipLaunchAttributePriority, 0)])
    check(lib.hipLaunchKernelExC(cfg, registered, bufs.p), "hipErrorInvalidValue")
    cfg, keep = config(1, 64)
    check(lib.hipLaunchKernelExC(cfg, ffi.NULL, bufs.p), "hipErrorInvalidDeviceFunction")
    check(lib.hipLaunchKernelExC(ffi.NULL, registered, bufs.p), "hipErrorInvalidConfiguration")
    cfg.numAttrs = 2                                             # attrs NULL
    check(lib.hipLaunchKernelExC(cfg, registered, bufs.p), "hipErrorInvalidValue")
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    cfg, keep = config(1, 64, s=dead)
    check(lib.hipLaunchKernelExC(cfg, registered, bufs.p), "hipErrorInvalidValue")
    ok(lib.hipDeviceSynchronize())
