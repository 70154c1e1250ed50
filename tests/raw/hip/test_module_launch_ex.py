"""Cooperative and extensible launches of module functions, function counts
and fat-binary loads (hip_launch_coop.c, hip_module.c; clr hip_module.cpp).

Each test skips where the headers the stub was built against do not declare
its function (5.2 declares none of them: tools/other_headers.sh runs them
against 5.7 / 6.2 / 7.2 trees).  hipamd's hipErrorInvalidResourceHandle is
hipErrorInvalidHandle's alias (400), the name check() gives it."""
from __future__ import annotations

import numpy as np
import pytest
from rocm_versions import expect, version_sensitive

from .helpers import BACKEND, check, ffi, hipamd, lib, malloc, ok, requires, stream
from .test_module import arg, function, load, params

pytestmark = [pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects"), hipamd]

N = 1024


@pytest.fixture(scope="module")
def vadd(hip_kernel):
    m = load(hip_kernel("vadd"))
    yield m, function(m, "vadd")
    ok(lib.hipModuleUnload(m))


class Buffers:
    """a, b and c of vadd (a = i, b = 2), freed by close()."""

    def __init__(self, n: int = N):
        self.n = n
        self.a, self.b, self.c = malloc(n * 4), malloc(n * 4), malloc(n * 4)
        host = np.arange(n, dtype=np.float32)
        ok(lib.hipMemcpy(self.a, ffi.from_buffer(host), n * 4, lib.hipMemcpyHostToDevice))
        ok(lib.hipMemsetD32(self.b, 0x40000000, n))      # 2.0f
        ok(lib.hipMemset(self.c, 0, n * 4))
        self.p, self._keep = params(arg("void *", self.a), arg("void *", self.b),
                                    arg("void *", self.c), arg("int", n))

    def result(self) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float32)
        ok(lib.hipMemcpy(ffi.from_buffer(out), self.c, self.n * 4, lib.hipMemcpyDeviceToHost))
        return out

    def added(self) -> bool:
        return bool((self.result() == np.arange(self.n, dtype=np.float32) + 2).all())

    def close(self):
        for d in (self.a, self.b, self.c):
            ok(lib.hipFree(d))


@pytest.fixture
def bufs():
    b = Buffers()
    yield b
    b.close()


def grid_limit(f, block: int, shared: int = 0) -> int:
    """The most blocks of `block` threads resident at once (what the cooperative
    check compares with): hipModuleOccupancyMaxPotentialBlockSize's grid."""
    grid, best = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipModuleOccupancyMaxPotentialBlockSize(grid, best, f, shared, block))
    assert best[0] == block
    return grid[0]


# ---- hipModuleLaunchCooperativeKernel ---------------------------------------

@requires("hipModuleLaunchCooperativeKernel")
def test_cooperative_launch_runs_the_kernel(vadd, bufs):
    _, f = vadd
    ok(lib.hipModuleLaunchCooperativeKernel(f, N // 256, 1, 1, 256, 1, 1, 0, ffi.NULL, bufs.p))
    assert bufs.added()


@requires("hipModuleLaunchCooperativeKernel")
def test_cooperative_grid_larger_than_resident_is_refused(vadd, bufs):
    """The stub rule: a grid of more blocks than the device holds at once is
    hipErrorCooperativeLaunchTooLarge (ihipLaunchKernel_validate); one block
    fewer launches.  Without the check both launch."""
    _, f = vadd
    limit = grid_limit(f, 64)
    ok(lib.hipModuleLaunchCooperativeKernel(f, limit, 1, 1, 64, 1, 1, 0, ffi.NULL, bufs.p))
    check(lib.hipModuleLaunchCooperativeKernel(f, limit + 1, 1, 1, 64, 1, 1, 0, ffi.NULL, bufs.p),
          "hipErrorCooperativeLaunchTooLarge")
    # in y and z the product counts
    check(lib.hipModuleLaunchCooperativeKernel(f, limit, 2, 1, 64, 1, 1, 0, ffi.NULL, bufs.p),
          "hipErrorCooperativeLaunchTooLarge")
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()


@requires("hipModuleLaunchCooperativeKernel")
def test_cooperative_dynamic_lds_limits_the_grid(vadd, bufs):
    """Dynamic LDS per block lowers the resident count: 32 KiB of 64 leaves two
    blocks per CU, so a grid the no-LDS limit allows is refused."""
    _, f = vadd
    free_limit, lds_limit = grid_limit(f, 64), grid_limit(f, 64, 32 * 1024)
    assert lds_limit < free_limit
    check(lib.hipModuleLaunchCooperativeKernel(f, lds_limit + 1, 1, 1, 64, 1, 1, 32 * 1024,
                                               ffi.NULL, bufs.p), "hipErrorCooperativeLaunchTooLarge")
    ok(lib.hipModuleLaunchCooperativeKernel(f, lds_limit, 1, 1, 64, 1, 1, 32 * 1024, ffi.NULL, bufs.p))
    ok(lib.hipDeviceSynchronize())


@requires("hipModuleLaunchCooperativeKernel")
@version_sensitive
def test_cooperative_bad_arguments(vadd, bufs):
    _, f = vadd
    s = stream()
    ok(lib.hipStreamDestroy(s))

    def launch(grid=(1, 1, 1), block=(64, 1, 1), shared=0, func=f, stream_=ffi.NULL, p=bufs.p):
        return lib.hipModuleLaunchCooperativeKernel(func, *grid, *block, shared, stream_, p)

    check(launch(stream_=s), expect({(5, 7): "hipErrorInvalidValue", (7, 0): "hipErrorContextIsDestroyed"}))
    check(launch(grid=(2**31, 1, 1), block=(4, 1, 1)), "hipErrorInvalidConfiguration")
    check(launch(func=ffi.NULL), "hipErrorInvalidHandle")
    check(launch(shared=64 * 1024 + 1), "hipErrorInvalidValue")      # more LDS than the CU has
    check(launch(p=ffi.NULL), "hipErrorInvalidValue")                 # vadd has arguments
    check(launch(block=(2048, 1, 1)), "hipErrorInvalidValue")
    check(launch(block=(0, 1, 1)), "hipErrorInvalidValue")
    check(launch(grid=(1, 0, 1)), "hipErrorInvalidValue")
    check(launch(func=ffi.cast("hipFunction_t", 0x1234)), "hipErrorInvalidDeviceFunction")
    ok(lib.hipDeviceSynchronize())


@requires("hipModuleLaunchCooperativeKernel")
def test_cooperative_launch_is_captured(vadd, bufs):
    _, f = vadd
    s, g, e = stream(), ffi.new("hipGraph_t *"), ffi.new("hipGraphExec_t *")
    ok(lib.hipStreamBeginCapture(s, lib.hipStreamCaptureModeGlobal))
    ok(lib.hipModuleLaunchCooperativeKernel(f, N // 256, 1, 1, 256, 1, 1, 0, s, bufs.p))
    ok(lib.hipStreamEndCapture(s, g))
    assert bufs.result().sum() == 0                                   # recorded, not run
    ok(lib.hipGraphInstantiate(e, g[0], ffi.NULL, ffi.NULL, 0))
    ok(lib.hipGraphLaunch(e[0], s))
    ok(lib.hipStreamSynchronize(s))
    assert bufs.added()
    ok(lib.hipGraphExecDestroy(e[0]))
    ok(lib.hipGraphDestroy(g[0]))
    ok(lib.hipStreamDestroy(s))


# ---- hipModuleLaunchCooperativeKernelMultiDevice ----------------------------

def launch_list(entries):
    """hipFunctionLaunchParams[] from (function, grid, block, shared, stream, params)."""
    arr = ffi.new("hipFunctionLaunchParams[]", len(entries))
    for i, (f, grid, block, shared, s, p) in enumerate(entries):
        arr[i].function = f
        arr[i].gridDimX, arr[i].gridDimY, arr[i].gridDimZ = grid
        arr[i].blockDimX, arr[i].blockDimY, arr[i].blockDimZ = block
        arr[i].sharedMemBytes = shared
        arr[i].hStream = s
        arr[i].kernelParams = p
    return arr


@requires("hipModuleLaunchCooperativeKernelMultiDevice")
def test_multi_device_one_device_runs_and_waits(vadd, bufs):
    """Without NoPostSync the call returns with the work done."""
    _, f = vadd
    s = stream()
    lst = launch_list([(f, (N // 256, 1, 1), (256, 1, 1), 0, s, bufs.p)])
    ok(lib.hipModuleLaunchCooperativeKernelMultiDevice(lst, 1, 0))
    assert bufs.added()                      # no synchronization of ours
    ok(lib.hipStreamDestroy(s))


@requires("hipModuleLaunchCooperativeKernelMultiDevice")
@version_sensitive
def test_multi_device_bad_arguments(vadd, bufs):
    _, f = vadd
    s, dead = stream(), stream()
    ok(lib.hipStreamDestroy(dead))
    good = (f, (1, 1, 1), (64, 1, 1), 0, s, bufs.p)
    call = lib.hipModuleLaunchCooperativeKernelMultiDevice
    check(call(ffi.NULL, 1, 0), "hipErrorInvalidValue")
    check(call(launch_list([good]), 0, 0), "hipErrorInvalidValue")
    check(call(launch_list([good] * 65), 65, 0), "hipErrorInvalidValue")          # more than devices
    check(call(launch_list([good[:4] + (dead, bufs.p)]), 1, 0), "hipErrorInvalidValue")
    check(call(launch_list([good]), 1, 4), "hipErrorInvalidValue")                # unknown flag
    check(call(launch_list([(f, (1, 1, 1), (0, 1, 1), 0, s, bufs.p)]), 1, 0),
          "hipErrorInvalidConfiguration")
    check(call(launch_list([good[:4] + (ffi.NULL, bufs.p)]), 1, 0), "hipErrorInvalidHandle")
    limit = grid_limit(f, 64)
    check(call(launch_list([(f, (limit + 1, 1, 1), (64, 1, 1), 0, s, bufs.p)]), 1, 0),
          "hipErrorCooperativeLaunchTooLarge")
    ok(lib.hipStreamDestroy(s))


@requires("hipModuleLaunchCooperativeKernelMultiDevice")
@pytest.mark.multidevice
@version_sensitive
def test_multi_device_two_devices(hip_kernel):
    path = hip_kernel("vadd")
    mods, funcs, streams, all_bufs = [], [], [], []
    for d in range(2):
        ok(lib.hipSetDevice(d))
        mods.append(load(path))
        funcs.append(function(mods[-1], "vadd"))
        streams.append(stream())
        all_bufs.append(Buffers())
    ok(lib.hipSetDevice(0))
    entries = [(funcs[d], (N // 256, 1, 1), (256, 1, 1), 0, streams[d], all_bufs[d].p) for d in range(2)]
    ok(lib.hipModuleLaunchCooperativeKernelMultiDevice(launch_list(entries), 2, 0))
    assert all(b.added() for b in all_bufs)
    # two launches on one device
    same = [entries[0], entries[0]]
    check(lib.hipModuleLaunchCooperativeKernelMultiDevice(launch_list(same), 2, 0), "hipErrorInvalidDevice")
    # shapes that differ between devices: refused from 7.0 (STUB_RULE_COOPERATIVE_MULTI_DEVICE_SAME_SHAPE)
    other = [entries[0], (funcs[1], (N // 128, 1, 1), (128, 1, 1), 0, streams[1], all_bufs[1].p)]
    check(lib.hipModuleLaunchCooperativeKernelMultiDevice(launch_list(other), 2, 0),
          expect({(5, 7): "hipSuccess", (7, 0): "hipErrorInvalidValue"}))
    for d in range(2):
        ok(lib.hipSetDevice(d))
        ok(lib.hipDeviceSynchronize())
        all_bufs[d].close()
        ok(lib.hipStreamDestroy(streams[d]))
        ok(lib.hipModuleUnload(mods[d]))
    ok(lib.hipSetDevice(0))


# ---- hipDrvLaunchKernelEx ----------------------------------------------------

def drv_config(grid, block, shared=0, s=ffi.NULL, attrs=()):
    cfg = ffi.new("HIP_LAUNCH_CONFIG *")
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = grid
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = block
    cfg.sharedMemBytes = shared
    cfg.hStream = s
    arr = ffi.new("hipLaunchAttribute[]", max(len(attrs), 1))
    for i, (ident, value) in enumerate(attrs):
        arr[i].id = ident
        arr[i].value.cooperative = value
    cfg.attrs = arr if attrs else ffi.NULL
    cfg.numAttrs = len(attrs)
    return cfg, arr


@requires("hipDrvLaunchKernelEx")
def test_drv_launch_ex_runs_with_and_without_attributes(vadd, bufs):
    _, f = vadd
    cfg, keep = drv_config((N // 256, 1, 1), (256, 1, 1))
    ok(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()
    ok(lib.hipMemset(bufs.c, 0, N * 4))
    cfg, keep = drv_config((N // 256, 1, 1), (256, 1, 1), attrs=[(lib.hipLaunchAttributeCooperative, 1)])
    ok(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()


@requires("hipDrvLaunchKernelEx")
def test_drv_launch_ex_cooperative_attribute_checks_the_grid(vadd, bufs):
    """cooperative = 1 is a cooperative launch (the grid check); 0 a plain one."""
    _, f = vadd
    limit = grid_limit(f, 64)
    coop = lib.hipLaunchAttributeCooperative
    cfg, keep = drv_config((limit + 1, 1, 1), (64, 1, 1), attrs=[(coop, 1)])
    check(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL), "hipErrorCooperativeLaunchTooLarge")
    cfg, keep = drv_config((limit + 1, 1, 1), (64, 1, 1), attrs=[(coop, 0)])
    ok(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL))
    # the cooperative attribute launches at once: a later unknown one is not read
    cfg, keep = drv_config((1, 1, 1), (64, 1, 1), attrs=[(coop, 1), (lib.hipLaunchAttributePriority, 1)])
    ok(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL))
    ok(lib.hipDeviceSynchronize())


@requires("hipDrvLaunchKernelEx")
def test_drv_launch_ex_bad_arguments(vadd, bufs):
    _, f = vadd
    dead = stream()
    ok(lib.hipStreamDestroy(dead))
    cfg, keep = drv_config((1, 1, 1), (64, 1, 1))
    check(lib.hipDrvLaunchKernelEx(cfg, ffi.NULL, bufs.p, ffi.NULL), "hipErrorInvalidHandle")
    check(lib.hipDrvLaunchKernelEx(ffi.NULL, f, bufs.p, ffi.NULL), "hipErrorInvalidValue")
    bad, keep2 = drv_config((1, 1, 1), (64, 1, 1), s=dead)
    check(lib.hipDrvLaunchKernelEx(bad, f, bufs.p, ffi.NULL), "hipErrorContextIsDestroyed")
    big, keep3 = drv_config((2**31, 1, 1), (4, 1, 1))
    check(lib.hipDrvLaunchKernelEx(big, f, bufs.p, ffi.NULL), "hipErrorInvalidConfiguration")
    for other in (lib.hipLaunchAttributeAccessPolicyWindow, lib.hipLaunchAttributePriority,
                  lib.hipLaunchAttributeSynchronizationPolicy):
        attr, keep4 = drv_config((1, 1, 1), (64, 1, 1), attrs=[(other, 0)])
        check(lib.hipDrvLaunchKernelEx(attr, f, bufs.p, ffi.NULL), "hipErrorInvalidValue")
    cfg.numAttrs = 1                                                  # attrs NULL
    check(lib.hipDrvLaunchKernelEx(cfg, f, bufs.p, ffi.NULL), "hipErrorInvalidValue")
    ok(lib.hipDeviceSynchronize())


# ---- hipModuleGetFunctionCount, hipModuleLoadFatBinary --------------------------

@requires("hipModuleGetFunctionCount")
def test_function_count(hip_kernel, vadd):
    m, _ = vadd
    n = ffi.new("unsigned int *")
    ok(lib.hipModuleGetFunctionCount(n, m))
    assert n[0] == 1
    three = load(hip_kernel("args"))
    ok(lib.hipModuleGetFunctionCount(n, three))
    assert n[0] == 3
    check(lib.hipModuleGetFunctionCount(ffi.NULL, three), "hipErrorInvalidValue")
    ok(lib.hipModuleUnload(three))
    check(lib.hipModuleGetFunctionCount(n, three), "hipErrorNotFound")      # unloaded
    check(lib.hipModuleGetFunctionCount(n, ffi.NULL), "hipErrorInvalidHandle")


@requires("hipModuleLoadFatBinary")
def test_load_fat_binary(hip_kernel, bufs):
    data = open(hip_kernel("vadd"), "rb").read()
    image = ffi.new("char[]", data)
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoadFatBinary(m, image))
    f = function(m[0], "vadd")
    ok(lib.hipModuleLaunchKernel(f, N // 256, 1, 1, 256, 1, 1, 0, ffi.NULL, bufs.p, ffi.NULL))
    ok(lib.hipDeviceSynchronize())
    assert bufs.added()
    ok(lib.hipModuleUnload(m[0]))
    check(lib.hipModuleLoadFatBinary(ffi.NULL, image), "hipErrorInvalidValue")
    check(lib.hipModuleLoadFatBinary(m, ffi.NULL), "hipErrorInvalidValue")
    check(lib.hipModuleLoadFatBinary(m, ffi.new("char[64]")), "hipErrorInvalidKernelFile")
