"""hsa virtual memory: AddressRange, PhysicalMemory, Mapping, access (ROCm 6.0+ headers)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from rocpy import hsa
from rocpy.errors import ClosedError, HsaError, NotSupportedError

HAVE = hasattr(hsa.lib, "hsa_amd_vmem_address_reserve")
needs_vmem = pytest.mark.skipif(not HAVE, reason="the headers (before ROCm 6.0) lack hsa_amd_vmem_*")


@pytest.fixture
def coarse(gpu):
    return gpu.pools(segment="global", fine_grained=False)[0]


@pytest.mark.skipif(HAVE, reason="the headers declare hsa_amd_vmem_*")
def test_vmem_needs_newer_headers(rt, coarse):
    with pytest.raises(NotSupportedError, match="hsa_amd_vmem_address_reserve"):
        hsa.AddressRange(1 << 20)
    with pytest.raises(NotSupportedError, match="hsa_amd_vmem_handle_create"):
        hsa.PhysicalMemory(coarse, 1 << 20)
    with pytest.raises(NotSupportedError, match="hsa_amd_vmem_import_shareable_handle"):
        hsa.PhysicalMemory.import_fd(0)


@needs_vmem
def test_reserve_map_access_unmap(rt, gpu, cpu, coarse):
    assert rt.info("HSA_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED", "bool")
    n = 1 << 16
    if hasattr(hsa.lib, "hsa_amd_vmem_address_reserve_align"):
        va = hsa.AddressRange(2 * n, alignment=1 << 16)
        assert va.address % (1 << 16) == 0
    else:   # 6.0/6.1 headers (Debian 13's HSA 6.1): reserve without _align
        with pytest.raises(NotSupportedError, match="hsa_amd_vmem_address_reserve_align"):
            hsa.AddressRange(2 * n, alignment=1 << 16)
        va = hsa.AddressRange(2 * n)
    mem = hsa.PhysicalMemory(coarse, n)
    m = va.map(mem, offset=n)
    assert m.address == va.address + n
    assert m.access(gpu) == "none"                     # ROCr maps with no access
    m.set_access({gpu: "rw", cpu: "rw"})
    assert m.access(gpu) == "rw"
    view = np.frombuffer((np.ctypeslib.as_ctypes_type(np.uint8) * n).from_address(m.address),
                         np.uint8)
    view[:] = 3                                         # the CPU may now write it
    done = hsa.Signal(1)
    dev = coarse.allocate(n)
    hsa.copy_async(dev, m.address, n, src_agent=gpu, completion=done)   # the GPU reads it
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    m.set_access([gpu], "ro")
    assert m.access(gpu) == "ro"
    info = hsa.pointer_info(m.address, runtime=rt)
    assert info.type in ("unknown", "vmem")
    del view
    for obj in (done, dev, m, mem, va):
        obj.close()


@needs_vmem
def test_gpu_without_access_is_refused_by_the_copy_engine(rt, gpu, coarse, stub_only):
    n = 1 << 16
    va = hsa.AddressRange(n)
    mem = hsa.PhysicalMemory(coarse, n)
    m = va.map(mem)
    dev = coarse.allocate(n)
    done = hsa.Signal(1)
    with pytest.raises(HsaError) as e:
        hsa.copy_async(dev, m.address, n, src_agent=gpu, completion=done)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    m.set_access([gpu])
    hsa.copy_async(dev, m.address, n, src_agent=gpu, completion=done)
    done.wait("eq", 0, timeout=10, raise_on_timeout=True)
    for obj in (done, dev, m, mem, va):
        obj.close()


@needs_vmem
def test_lifetimes_follow_rocr(rt, coarse):
    """A range is freed, and memory released, only after its mapping went."""
    from rocpy import debug
    n = 1 << 16
    va = hsa.AddressRange(n)
    mem = hsa.PhysicalMemory(coarse, n)
    m = va.map(mem)
    va.close()
    mem.close()                                         # both wait for the mapping
    assert debug.live_objects().get("Mapping") == 1
    assert m.address
    m.close()
    with pytest.raises(ClosedError):
        m.access(rt.gpu_agents[0])


@needs_vmem
def test_vmem_errors(rt, gpu, cpu, coarse, host_pool):
    n = 1 << 16
    with pytest.raises(ValueError, match="size must be positive"):
        hsa.AddressRange(0)
    with pytest.raises(ValueError, match="alignment must be a power of two"):
        hsa.AddressRange(n, alignment=3 << 12)
    with pytest.raises(HsaError) as e:                  # ROCr: device memory only
        hsa.PhysicalMemory(host_pool, n)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT" and e.value.call == "hsa_amd_vmem_handle_create"
    with pytest.raises(HsaError) as e:                  # whole pages of the pool
        hsa.PhysicalMemory(coarse, 100)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    with pytest.raises(TypeError, match="pool must be an hsa.Pool"):
        hsa.PhysicalMemory(gpu, n)
    va = hsa.AddressRange(n)
    mem = hsa.PhysicalMemory(coarse, n)
    with pytest.raises(ValueError, match="past the range"):
        va.map(mem, offset=4096)
    m = va.map(mem)
    with pytest.raises(HsaError) as e:                  # mapped already
        va.map(mem)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT" and e.value.call == "hsa_amd_vmem_map"
    with pytest.raises(HsaError) as e:                  # ROCr get_access: GPUs only
        m.access(cpu)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_AGENT"
    with pytest.raises(ValueError, match="permission must be one of"):
        m.set_access({gpu: "rwx"})
    with pytest.raises(ValueError, match="at least one agent"):
        m.set_access([])
    with pytest.raises(TypeError, match="each agent must be an hsa.Agent"):
        m.set_access({1: "rw"})
    big = hsa.AddressRange(2 * n)
    with pytest.raises(HsaError) as e:                  # bigger than the memory: export fails
        big.map(mem, size=2 * n)
    assert e.value.name == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
    for obj in (m, mem, va, big):
        obj.close()


@needs_vmem
def test_raw_statuses(rt, gpu, coarse, stub_only):
    """ROCr's statuses for what rocpy's objects never do."""
    from rocpy.hsa import ffi, lib
    n = 1 << 16
    va = ffi.new("void **")
    assert lib.hsa_amd_vmem_address_reserve(va, 0, 0, 0) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert lib.hsa_amd_vmem_address_reserve(va, n, 0, 0) == 0
    h = ffi.new("hsa_amd_vmem_alloc_handle_t *")
    assert lib.hsa_amd_vmem_handle_create(coarse._require_open(), n, lib.MEMORY_TYPE_NONE, 0, h) == 0
    assert lib.hsa_amd_vmem_map(va[0], n, 0, h[0], 0) == 0
    assert lib.hsa_amd_vmem_address_free(va[0], n) == lib.HSA_STATUS_ERROR_RESOURCE_FREE   # mapped
    assert lib.hsa_amd_vmem_unmap(va[0], n // 2) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    bad = ffi.cast("void *", int(ffi.cast("uintptr_t", va[0])) + 4096)
    assert lib.hsa_amd_vmem_unmap(bad, n) == lib.HSA_STATUS_ERROR_INVALID_ALLOCATION
    desc = ffi.new("hsa_amd_memory_access_desc_t[1]")
    desc[0].agent_handle = gpu._require_open()
    desc[0].permissions = lib.HSA_ACCESS_PERMISSION_RW
    assert lib.hsa_amd_vmem_set_access(bad, 4096, desc, 1) == lib.HSA_STATUS_ERROR_INVALID_ALLOCATION
    assert lib.hsa_amd_vmem_set_access(va[0], n, desc, 0) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    desc[0].agent_handle.handle = 12345
    assert lib.hsa_amd_vmem_set_access(va[0], n, desc, 1) == lib.HSA_STATUS_ERROR_INVALID_AGENT
    h2 = ffi.new("hsa_amd_vmem_alloc_handle_t *")
    assert lib.hsa_amd_vmem_retain_alloc_handle(h2, va[0]) == 0 and h2.handle == h.handle
    pool, kind = ffi.new("hsa_amd_memory_pool_t *"), ffi.new("hsa_amd_memory_type_t *")
    assert lib.hsa_amd_vmem_get_alloc_properties_from_handle(h[0], pool, kind) == 0
    assert pool.handle == coarse._hv and kind[0] == lib.MEMORY_TYPE_NONE
    assert lib.hsa_amd_vmem_handle_release(h[0]) == 0        # two references: both go
    assert lib.hsa_amd_vmem_handle_release(h[0]) == 0
    assert lib.hsa_amd_vmem_unmap(va[0], n) == 0             # the memory goes with the mapping
    assert lib.hsa_amd_vmem_handle_release(h[0]) == lib.HSA_STATUS_ERROR_INVALID_ALLOCATION
    assert lib.hsa_amd_vmem_address_free(va[0], n // 2) == lib.HSA_STATUS_ERROR_INVALID_ARGUMENT
    assert lib.hsa_amd_vmem_address_free(va[0], n) == 0
    assert lib.hsa_amd_vmem_address_free(va[0], n) == lib.HSA_STATUS_ERROR_INVALID_ALLOCATION


@needs_vmem
def test_export_import(rt, gpu, coarse):
    n = 1 << 16
    mem = hsa.PhysicalMemory(coarse, n)
    fd = mem.export()
    try:
        other = hsa.PhysicalMemory.import_fd(fd, runtime=rt)
        assert other.pool == coarse and other.size == n
    finally:
        os.close(fd)
    va1, va2 = hsa.AddressRange(n), hsa.AddressRange(n)
    m1, m2 = va1.map(mem), va2.map(other)
    cpu = rt.cpu_agents[0]
    m1.set_access({cpu: "rw"})
    m2.set_access({cpu: "rw"})
    a = np.frombuffer((np.ctypeslib.as_ctypes_type(np.uint8) * n).from_address(m1.address), np.uint8)
    b = np.frombuffer((np.ctypeslib.as_ctypes_type(np.uint8) * n).from_address(m2.address), np.uint8)
    a[:16] = 42
    assert (b[:16] == 42).all()                          # one memory, two mappings
    del a, b
    for obj in (m1, m2, mem, other, va1, va2):
        obj.close()
    with pytest.raises(ValueError, match="fd"):
        hsa.PhysicalMemory.import_fd(-1)
