"""Occupancy from a kernel's metadata (hipamd hip_platform.cpp
ihipOccupancyMaxActiveBlocksPerMultiprocessor; stub: hip_occupancy.c).

Expectations from ROCm/hip-tests at rocm-5.7.1 (``catch/unit/occupancy/``),
each cited by file and line; the figures are recomputed here from the code
object's metadata (.vgpr_count, .sgpr_count, .group_segment_fixed_size,
.wavefront_size) with ROCclr's formula."""
from __future__ import annotations

import pytest

import rocpy.codeobject as codeobject

from rocm_versions import expect, version_sensitive

from .helpers import BACKEND, check, ffi, hipamd, lib, ok, stub_only

pytestmark = [hipamd, pytest.mark.skipif(BACKEND == "nvidia", reason="AMD code objects")]

HT = "hip-tests catch/unit/occupancy/"


@pytest.fixture(scope="module")
def vadd(hip_kernel):
    path = hip_kernel("vadd")
    m = ffi.new("hipModule_t *")
    ok(lib.hipModuleLoad(m, path.encode()))
    f = ffi.new("hipFunction_t *")
    ok(lib.hipModuleGetFunction(f, m[0], b"vadd"))
    props = ffi.new("hipDeviceProp_t *")
    ok(lib.hipGetDeviceProperties(props, 0))
    meta = codeobject.load(path).select(ffi.string(props.gcnArchName).decode())
    kernel = next(k for k in meta.metadata.kernels if k.name == "vadd")
    yield f[0], kernel, props
    ok(lib.hipModuleUnload(m[0]))


def expected(kernel, props, block, dyn=0):
    """ROCclr's occupancy for a gfx9 target (the stub's devices)."""
    major = 9
    gfx90a = ffi.string(props.gcnArchName).decode().startswith("gfx90a")
    max_vgprs, granule = (512, 8) if gfx90a else (256, 4)
    waves = 8 if major <= 9 else 16
    align = lambda v, a: (v + a - 1) // a * a            # noqa: E731
    vgpr_waves = max_vgprs // align(kernel.vgpr_count, granule) if kernel.sgpr_count else waves
    sgpr_waves = 800 // align(kernel.sgpr_count, 16) if kernel.sgpr_count else vgpr_waves
    alu_threads = 4 * min(waves, vgpr_waves, sgpr_waves) * kernel.wavefront_size
    lds = kernel.group_segment_fixed_size + dyn
    lds_wgs = props.maxSharedMemoryPerMultiProcessor // lds if lds else 1 << 31
    per_cu = min(alu_threads // align(block, kernel.wavefront_size), lds_wgs)
    best = min(alu_threads, align(block, kernel.wavefront_size))
    grid = props.multiProcessorCount * min(alu_threads // best, lds_wgs)
    return per_cu, best, grid


# occupancy_common.hh:23 (MaxPotentialBlockSize): grid and block positive,
# the block within the device's limit, grid * block < 2^32
def test_max_potential_block_size(vadd):
    f, kernel, props = vadd
    grid, block = ffi.new("int *"), ffi.new("int *")
    ok(lib.hipModuleOccupancyMaxPotentialBlockSize(grid, block, f, 0, 0))
    assert grid[0] > 0 and 0 < block[0] <= props.maxThreadsPerBlock          # :31-:33
    assert grid[0] * block[0] < 1 << 32                                       # :34
    per_cu, best, want_grid = expected(kernel, props, props.maxThreadsPerBlock)
    assert (grid[0], block[0]) == (want_grid, best)
    ok(lib.hipModuleOccupancyMaxPotentialBlockSizeWithFlags(grid, block, f, 0, 128, 0))
    assert block[0] == expected(kernel, props, 128)[1]


# occupancy_common.hh:50 (MaxActiveBlocksPerMultiprocessor): positive, and
# blocks * block size within the CU's threads
@pytest.mark.parametrize("block", [64, 65, 256, 1024])
def test_max_active_blocks(vadd, block):
    f, kernel, props = vadd
    n = ffi.new("int *")
    ok(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, 0))
    assert n[0] > 0                                                           # :58
    assert n[0] * block <= props.maxThreadsPerMultiProcessor                 # :59
    assert n[0] == expected(kernel, props, block)[0]
    ok(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, f, block, 0, 0))
    assert n[0] == expected(kernel, props, block)[0]


# dynamic LDS limits the blocks per CU (lds_occupancy_wgs)
def test_dynamic_shared_memory_limits_blocks(vadd):
    f, kernel, props = vadd
    n = ffi.new("int *")
    lds = props.maxSharedMemoryPerMultiProcessor // 3
    ok(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, f, 64, lds))
    assert n[0] == min(3, expected(kernel, props, 64)[0]) == expected(kernel, props, 64, lds)[0]


def test_occupancy_negative(vadd):
    f, _, props = vadd
    n, grid, block = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
    # occupancy_common.hh:67 (numBlocks null), :70 (block size 0)
    check(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(ffi.NULL, f, 64, 0),
          "hipErrorInvalidValue")
    check(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, f, 0, 0),
          "hipErrorInvalidValue")
    # occupancy_common.hh:43/:46 (null grid or block)
    check(lib.hipModuleOccupancyMaxPotentialBlockSize(ffi.NULL, block, f, 0, 0),
          "hipErrorInvalidValue")
    check(lib.hipModuleOccupancyMaxPotentialBlockSize(grid, ffi.NULL, f, 0, 0),
          "hipErrorInvalidValue")
    # ihipOccupancyMaxActiveBlocksPerMultiprocessor: a block beyond the
    # device's work-group limit fits no block (0 and hipSuccess)
    ok(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, f, props.maxThreadsPerBlock + 1, 0))
    assert n[0] == 0
    # a handle that is no kernel: hipamd dereferences it; the stub answers
    # the launch path's hipErrorInvalidHandle
    check(lib.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(n, ffi.NULL, 64, 0),
          "hipErrorInvalidHandle")


# the host-pointer forms look the kernel up in the registered functions;
# the stub registers none.  hipOccupancyMaxActiveBlocksPerMultiprocessor.cc:51
# and hipOccupancyMaxPotentialBlockSize.cc:46 (NULL function) expect
# hipErrorInvalidDeviceFunction (clr 5.6+, hip_platform.cpp:515); hipamd
# 5.2-5.5 return hipErrorInvalidValue
@stub_only
@version_sensitive
def test_host_function_forms_without_registration():
    n, grid, block = ffi.new("int *"), ffi.new("int *"), ffi.new("int *")
    unknown = expect({(5, 2): "hipErrorInvalidValue", (5, 6): "hipErrorInvalidDeviceFunction"})
    check(lib.hipOccupancyMaxActiveBlocksPerMultiprocessor(n, ffi.NULL, 64, 0), unknown)
    check(lib.hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, ffi.NULL, 64, 0, 0), unknown)
    check(lib.hipOccupancyMaxPotentialBlockSize(grid, block, ffi.NULL, 0, 0), unknown)
    check(lib.hipOccupancyMaxActiveBlocksPerMultiprocessor(ffi.NULL, ffi.NULL, 64, 0),
          "hipErrorInvalidValue")
