"""Agents: iteration, hsa_agent_get_info and the AMD attributes, ISAs, caches."""
from __future__ import annotations

import re

import pytest

from hsa_raw import agent, agent_info, agents, check, ffi, lib, run_python
from rocm_versions import at_least

NULL = ffi.NULL


def name_of(a, attribute=lib.HSA_AGENT_INFO_NAME) -> str:
    return ffi.string(agent_info(a, attribute, "char[64]")).decode()


def u32(a, attribute) -> int:
    return agent_info(a, attribute, "uint32_t*")[0]


def test_one_cpu_then_the_gpus(rt):
    found = agents()
    types = [agent_info(a, lib.HSA_AGENT_INFO_DEVICE, "hsa_device_type_t*")[0] for a in found]
    assert types == [lib.HSA_DEVICE_TYPE_CPU, lib.HSA_DEVICE_TYPE_GPU]


def test_iteration_stops_at_info_break_and_returns_it(rt):
    seen = []

    @ffi.callback("hsa_status_t(hsa_agent_t, void*)")
    def first_only(a, data):
        seen.append(a.handle)
        return lib.HSA_STATUS_INFO_BREAK
    check(lib.hsa_iterate_agents(first_only, NULL), lib.HSA_STATUS_INFO_BREAK)
    assert len(seen) == 1

    @ffi.callback("hsa_status_t(hsa_agent_t, void*)")
    def fails(a, data):
        return lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES
    check(lib.hsa_iterate_agents(fails, NULL), lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    check(lib.hsa_iterate_agents(NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_gpu_agent_info(gpu):
    assert name_of(gpu) == "gfx90a"
    assert name_of(gpu, lib.HSA_AGENT_INFO_VENDOR_NAME) == "AMD"
    assert agent_info(gpu, lib.HSA_AGENT_INFO_FEATURE, "hsa_agent_feature_t*")[0] == lib.HSA_AGENT_FEATURE_KERNEL_DISPATCH
    assert agent_info(gpu, lib.HSA_AGENT_INFO_PROFILE, "hsa_profile_t*")[0] == lib.HSA_PROFILE_BASE
    assert agent_info(gpu, lib.HSA_AGENT_INFO_MACHINE_MODEL, "hsa_machine_model_t*")[0] == lib.HSA_MACHINE_MODEL_LARGE
    assert u32(gpu, lib.HSA_AGENT_INFO_WAVEFRONT_SIZE) == 64
    assert list(agent_info(gpu, lib.HSA_AGENT_INFO_WORKGROUP_MAX_DIM, "uint16_t[3]")) == [1024] * 3
    assert u32(gpu, lib.HSA_AGENT_INFO_WORKGROUP_MAX_SIZE) == 1024
    grid = agent_info(gpu, lib.HSA_AGENT_INFO_GRID_MAX_DIM, "hsa_dim3_t*")
    assert (grid.x, grid.y, grid.z) == (2**32 - 1,) * 3
    assert u32(gpu, lib.HSA_AGENT_INFO_GRID_MAX_SIZE) == 2**32 - 1
    assert u32(gpu, lib.HSA_AGENT_INFO_FBARRIER_MAX_SIZE) == 32
    assert u32(gpu, lib.HSA_AGENT_INFO_QUEUES_MAX) == 128
    assert u32(gpu, lib.HSA_AGENT_INFO_QUEUE_MIN_SIZE) == 64
    assert u32(gpu, lib.HSA_AGENT_INFO_QUEUE_MAX_SIZE) == 131072
    assert agent_info(gpu, lib.HSA_AGENT_INFO_QUEUE_TYPE, "hsa_queue_type32_t*")[0] == lib.HSA_QUEUE_TYPE_MULTI
    assert u32(gpu, lib.HSA_AGENT_INFO_NODE) == 1
    assert list(agent_info(gpu, lib.HSA_AGENT_INFO_CACHE_SIZE, "uint32_t[4]")) == [16384, 8 << 20, 0, 0]
    assert agent_info(gpu, lib.HSA_AGENT_INFO_VERSION_MAJOR, "uint16_t*")[0] == 1
    assert agent_info(gpu, lib.HSA_AGENT_INFO_VERSION_MINOR, "uint16_t*")[0] == 1
    assert agent_info(gpu, lib.HSA_AGENT_INFO_FAST_F16_OPERATION, "bool*")[0]


def test_gpu_amd_info(gpu):
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_CHIP_ID) == 0x740F
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT) == 104
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU) == 4
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU) == 32
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY) == 1700
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_CACHELINE_SIZE) == 128
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_DRIVER_NODE_ID) == 1
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_MEMORY_WIDTH) == 4096
    assert u32(gpu, lib.HSA_AMD_AGENT_INFO_BDFID) == 0x03 << 8
    assert name_of(gpu, lib.HSA_AMD_AGENT_INFO_PRODUCT_NAME) == "AMD Instinct MI210"
    assert re.fullmatch(r"GPU-[0-9a-f]{16}", name_of(gpu, lib.HSA_AMD_AGENT_INFO_UUID))
    assert not agent_info(gpu, lib.HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES, "bool*")[0]


# attributes newer than the 5.2 headers, by release: test_versions.py


@pytest.mark.skipif(not at_least(5, 3, hsa=True), reason="HSA_AMD_AGENT_INFO_MEMORY_AVAIL arrived in ROCr 5.3")
def test_memory_avail_follows_allocations(gpu):
    from hsa_raw import allocate, find_pool
    total = agent_info(gpu, 0xA015, "uint64_t*")[0]                    # MEMORY_AVAIL
    assert total == 64 << 30
    p = allocate(find_pool(gpu), 1 << 20)
    assert agent_info(gpu, 0xA015, "uint64_t*")[0] == total - (1 << 20)
    check(lib.hsa_amd_memory_pool_free(p))


def test_cpu_agent_info(cpu):
    assert name_of(cpu)
    assert name_of(cpu, lib.HSA_AGENT_INFO_VENDOR_NAME) == "CPU"
    assert agent_info(cpu, lib.HSA_AGENT_INFO_FEATURE, "hsa_agent_feature_t*")[0] == 0   # no packet processor
    assert agent_info(cpu, lib.HSA_AGENT_INFO_PROFILE, "hsa_profile_t*")[0] == lib.HSA_PROFILE_FULL
    assert u32(cpu, lib.HSA_AGENT_INFO_NODE) == 0
    assert u32(cpu, lib.HSA_AGENT_INFO_QUEUE_MAX_SIZE) == 0
    assert u32(cpu, lib.HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT) >= 1
    assert agent_info(cpu, lib.HSA_AGENT_INFO_ISA, "hsa_isa_t*")[0].handle == 0
    assert name_of(cpu, lib.HSA_AMD_AGENT_INFO_UUID) == "CPU-XX"
    check(lib.hsa_agent_get_info(cpu, lib.HSA_AMD_AGENT_INFO_MEMORY_WIDTH, ffi.new("uint32_t*")),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


@pytest.mark.parametrize("handle", [0, 1, 0xDEAD0000])
def test_invalid_agent(rt, handle):
    check(lib.hsa_agent_get_info(agent(handle), lib.HSA_AGENT_INFO_NAME, ffi.new("char[64]")),
          lib.HSA_STATUS_ERROR_INVALID_AGENT)


def test_agent_between_table_entries_is_invalid(gpu):
    check(lib.hsa_agent_get_info(agent(gpu.handle + 8), lib.HSA_AGENT_INFO_NAME, ffi.new("char[64]")),
          lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(lib.hsa_agent_get_info(agent(gpu.handle + 0x1000), lib.HSA_AGENT_INFO_NAME, ffi.new("char[64]")),
          lib.HSA_STATUS_ERROR_INVALID_AGENT)


def test_agent_info_bad_input(gpu):
    # ROCr checks the pointer before the agent
    check(lib.hsa_agent_get_info(agent(0), lib.HSA_AGENT_INFO_NAME, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_agent_get_info(gpu, 0x7777, ffi.new("uint64_t*")), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def isas_of(a) -> list:
    out = []

    @ffi.callback("hsa_status_t(hsa_isa_t, void*)")
    def cb(isa, data):
        out.append(isa.handle)
        return lib.HSA_STATUS_SUCCESS
    check(lib.hsa_agent_iterate_isas(a, cb, NULL))
    return [ffi.new("hsa_isa_t*", {"handle": h})[0] for h in out]


def isa_name(isa) -> str:
    n = ffi.new("uint32_t*")
    check(lib.hsa_isa_get_info_alt(isa, lib.HSA_ISA_INFO_NAME_LENGTH, n))
    buf = ffi.new("char[]", n[0])
    check(lib.hsa_isa_get_info_alt(isa, lib.HSA_ISA_INFO_NAME, buf))
    assert buf[n[0] - 1] == b"\0"                   # the length counts the NUL
    return ffi.string(buf).decode()


def test_isa(gpu, cpu):
    (isa,) = isas_of(gpu)
    assert isa_name(isa) == "amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"
    assert agent_info(gpu, lib.HSA_AGENT_INFO_ISA, "hsa_isa_t*")[0].handle == isa.handle
    assert isas_of(cpu) == []
    same = ffi.new("hsa_isa_t*")
    check(lib.hsa_isa_from_name(b"amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", same))
    assert same[0].handle == isa.handle
    generic = ffi.new("hsa_isa_t*")
    check(lib.hsa_isa_from_name(b"amdgcn-amd-amdhsa--gfx90a", generic))
    ok = ffi.new("bool*")
    check(lib.hsa_isa_compatible(generic[0], isa, ok))
    assert ok[0]
    other = ffi.new("hsa_isa_t*")
    check(lib.hsa_isa_from_name(b"amdgcn-amd-amdhsa--gfx908", other))
    check(lib.hsa_isa_compatible(other[0], isa, ok))
    assert not ok[0]
    dims = ffi.new("uint16_t[3]")
    check(lib.hsa_isa_get_info_alt(isa, lib.HSA_ISA_INFO_WORKGROUP_MAX_DIM, dims))
    assert list(dims) == [1024] * 3


def test_isa_bad_input(gpu):
    isa = ffi.new("hsa_isa_t*")
    for name in (b"gfx90a", b"amdgcn-amd-amdhsa--gfx9999", b"amdgcn-amd-amdhsa--gfx90a:xnack-:sramecc+",
                 b"amdgcn-amd-amdhsa--gfx1030:xnack+"):
        check(lib.hsa_isa_from_name(name, isa), lib.HSA_STATUS_ERROR_INVALID_ISA_NAME)
    check(lib.hsa_isa_from_name(NULL, isa), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    bogus = ffi.new("hsa_isa_t*", {"handle": 12345})[0]
    check(lib.hsa_isa_get_info_alt(bogus, lib.HSA_ISA_INFO_NAME_LENGTH, ffi.new("uint32_t*")),
          lib.HSA_STATUS_ERROR_INVALID_ISA)
    (real,) = isas_of(gpu)
    check(lib.hsa_isa_get_info(real, lib.HSA_ISA_INFO_NAME_LENGTH, 1, ffi.new("uint32_t*")),
          lib.HSA_STATUS_ERROR_INVALID_INDEX)
    check(lib.hsa_isa_get_info_alt(real, 0x7777, ffi.new("uint64_t*")), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_agent_iterate_isas(gpu, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_caches(gpu):
    found = []

    @ffi.callback("hsa_status_t(hsa_cache_t, void*)")
    def cb(cache, data):
        found.append(cache.handle)
        return lib.HSA_STATUS_SUCCESS
    check(lib.hsa_agent_iterate_caches(gpu, cb, NULL))
    described = []
    for h in found:
        c = ffi.new("hsa_cache_t*", {"handle": h})[0]
        name, level, size = ffi.new("const char**"), ffi.new("uint8_t*"), ffi.new("uint32_t*")
        check(lib.hsa_cache_get_info(c, lib.HSA_CACHE_INFO_NAME, name))
        check(lib.hsa_cache_get_info(c, lib.HSA_CACHE_INFO_LEVEL, level))
        check(lib.hsa_cache_get_info(c, lib.HSA_CACHE_INFO_SIZE, size))
        described.append((ffi.string(name[0]).decode(), level[0], size[0]))
    assert described == [("gfx90a L1", 1, 16384), ("gfx90a L2", 2, 8 << 20)]
    bogus = ffi.new("hsa_cache_t*", {"handle": 99})[0]
    check(lib.hsa_cache_get_info(bogus, lib.HSA_CACHE_INFO_LEVEL, ffi.new("uint8_t*")),
          lib.HSA_STATUS_ERROR_INVALID_CACHE)


def test_two_devices_of_another_arch():
    proc = run_python("""
        gpus = gpu_agents()
        print(len(agents()), len(gpus))
        for g in gpus:
            name = agent_info(g, lib.HSA_AGENT_INFO_NAME, "char[64]")
            print(ffi.string(name).decode(), agent_info(g, lib.HSA_AGENT_INFO_NODE, "uint32_t*")[0],
                  agent_info(g, lib.HSA_AGENT_INFO_WAVEFRONT_SIZE, "uint32_t*")[0])
    """, env={"ROCPY_STUB_DEVICES": "2", "ROCPY_STUB_ARCH": "gfx90a,gfx1030"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:3] == ["3 2", "gfx90a 1 64", "gfx1030 2 32"]
