"""ROCr info attributes by the release that added them (the case labels of
Runtime::GetSystemInfo, GpuAgent::GetInfo, MemoryRegion::GetPoolInfo at the
ROCR-Runtime tags 5.2.3 ... 6.2.0 and rocm-systems release/rocm-rel-7.0): an
attribute the release does not know is HSA_STATUS_ERROR_INVALID_ARGUMENT.
Values are given where the headers of 5.2 lack the names."""
from __future__ import annotations

import pytest
from rocm_versions import at_least, expect, version_sensitive

from hsa_raw import check, ffi, find_pool, lib

pytestmark = version_sensitive

INVALID = lib.HSA_STATUS_ERROR_INVALID_ARGUMENT

AGENT = [  # (name, value, first release, C type)
    ("MEMORY_AVAIL", 0xA015, (5, 3), "uint64_t*"),
    ("TIMESTAMP_FREQUENCY", 0xA016, (5, 3), "uint64_t*"),
    ("ASIC_FAMILY_ID", 0xA107, (5, 4), "uint32_t*"),
    ("UCODE_VERSION", 0xA108, (5, 5), "uint32_t*"),
    ("SDMA_UCODE_VERSION", 0xA109, (5, 5), "uint32_t*"),
    ("IOMMU_SUPPORT", 0xA110, (5, 5), "uint32_t*"),
    ("NUM_SDMA_ENG", 0xA10A, (5, 6), "uint32_t*"),
    ("NUM_SDMA_XGMI_ENG", 0xA10B, (5, 6), "uint32_t*"),
    ("NUM_XCC", 0xA111, (5, 7), "uint32_t*"),
    ("DRIVER_UID", 0xA112, (5, 7), "uint32_t*"),
    ("NEAREST_CPU", 0xA113, (6, 0), "hsa_agent_t*"),
    ("MEMORY_PROPERTIES", 0xA114, (6, 1), "uint8_t[8]"),
]

SYSTEM = [
    ("MWAITX_ENABLED", 0x203, (5, 6), "bool*"),
    ("DMABUF_SUPPORTED", 0x204, (5, 6), "bool*"),
    ("VIRTUAL_MEM_API_SUPPORTED", 0x205, (6, 0), "bool*"),
    ("XNACK_ENABLED", 0x206, (6, 0), "bool*"),
    ("EXT_VERSION_MAJOR", 0x207, (6, 1), "uint16_t*"),
    ("EXT_VERSION_MINOR", 0x208, (6, 1), "uint16_t*"),
]

POOL = [
    ("LOCATION", 17, (5, 5), "uint32_t*"),
    ("RUNTIME_ALLOC_REC_GRANULE", 18, (6, 0), "size_t*"),
]


@pytest.mark.parametrize("name,value,since,ctype", AGENT, ids=[a[0] for a in AGENT])
def test_agent_attribute_by_release(gpu, name, value, since, ctype):
    out = ffi.new(ctype)
    check(lib.hsa_agent_get_info(gpu, value, out), expect({(5, 2): INVALID, since: 0}, hsa=True))


@pytest.mark.parametrize("name,value,since,ctype", SYSTEM, ids=[a[0] for a in SYSTEM])
def test_system_attribute_by_release(rt, name, value, since, ctype):
    out = ffi.new(ctype)
    check(lib.hsa_system_get_info(value, out), expect({(5, 2): INVALID, since: 0}, hsa=True))


@pytest.mark.parametrize("name,value,since,ctype", POOL, ids=[a[0] for a in POOL])
def test_pool_attribute_by_release(gpu, name, value, since, ctype):
    out = ffi.new(ctype)
    check(lib.hsa_amd_memory_pool_get_info(find_pool(gpu), value, out),
          expect({(5, 2): INVALID, since: 0}, hsa=True))


def test_attributes_of_every_release_are_answered(gpu):
    for value in (lib.HSA_AMD_AGENT_INFO_CHIP_ID, lib.HSA_AMD_AGENT_INFO_PRODUCT_NAME):
        check(lib.hsa_agent_get_info(gpu, value, ffi.new("char[64]")))
    check(lib.hsa_agent_get_info(gpu, 0xA1FF, ffi.new("char[64]")), INVALID)


@pytest.mark.skipif(not at_least(6, 1, hsa=True), reason="HSA_AMD_SYSTEM_INFO_EXT_VERSION_* arrived in ROCr 6.1")
def test_interface_version_is_the_release_ones(rt):
    major, minor = ffi.new("uint16_t*"), ffi.new("uint16_t*")
    check(lib.hsa_system_get_info(0x207, major))
    check(lib.hsa_system_get_info(0x208, minor))
    # HSA_AMD_INTERFACE_VERSION_MINOR of hsa_ext_amd.h: 6.1 -> 4, 6.2 -> 6, 7.0 -> 11
    assert (major[0], minor[0]) == (1, expect({(6, 1): 4, (6, 2): 6, (6, 4): 7, (7, 0): 11, (7, 2): 15}, hsa=True))


@pytest.mark.skipif(not at_least(6, 0, hsa=True), reason="HSA_AMD_AGENT_INFO_NEAREST_CPU arrived in ROCr 6.0")
def test_newer_agent_attributes_values(gpu, cpu):
    out = ffi.new("hsa_agent_t*")
    check(lib.hsa_agent_get_info(gpu, 0xA113, out))
    assert out[0].handle == cpu.handle
    freq = ffi.new("uint64_t*")
    check(lib.hsa_agent_get_info(gpu, 0xA016, freq))
    assert freq[0] == 10**8                      # the stub's GPU counter, not the system clock
    xcc = ffi.new("uint32_t*")
    check(lib.hsa_agent_get_info(gpu, 0xA111, xcc))
    assert xcc[0] == 1


@pytest.mark.skipif(not at_least(5, 5, hsa=True), reason="HSA_AMD_MEMORY_POOL_INFO_LOCATION arrived in ROCr 5.5")
def test_pool_location_values(gpu):
    from hsa_raw import pools
    coarse, _fine, lds = pools(gpu)
    out = ffi.new("int*")
    check(lib.hsa_amd_memory_pool_get_info(coarse, 17, out))
    assert out[0] == 1                                   # HSA_AMD_MEMORY_POOL_LOCATION_GPU
    check(lib.hsa_amd_memory_pool_get_info(lds, 17, out), INVALID)
