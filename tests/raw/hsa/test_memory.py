"""Regions and pools, allocation rules, access rights, pointer info, copies,
fills, locking and IPC."""
from __future__ import annotations

import numpy as np
import pytest

from hsa_raw import (SECOND, accessible_agents, allocate, allow, assert_aborts, check, ffi, find_pool, lib, pointer_info,
                     pool_info, pools, run_python, signal, wait_eq)

NULL = ffi.NULL
GiB = 1 << 30


def pool_summary(p):
    return (pool_info(p, lib.HSA_AMD_MEMORY_POOL_INFO_SEGMENT, "hsa_amd_segment_t*"),
            pool_info(p, lib.HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, "uint32_t*"),
            pool_info(p, lib.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, "bool*"))


def test_gpu_pools(gpu):
    coarse, fine, lds = pools(gpu)
    assert pool_summary(coarse) == (lib.HSA_AMD_SEGMENT_GLOBAL, lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, True)
    assert pool_summary(fine) == (lib.HSA_AMD_SEGMENT_GLOBAL, lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, True)
    assert pool_summary(lds) == (lib.HSA_AMD_SEGMENT_GROUP, 0, False)
    assert pool_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_SIZE, "size_t*") == 64 * GiB
    assert pool_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE, "size_t*") == 64 * GiB
    assert pool_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, "size_t*") == 4096
    assert pool_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT, "size_t*") == 4096
    assert not pool_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool*")
    assert pool_info(lds, lib.HSA_AMD_MEMORY_POOL_INFO_SIZE, "size_t*") == 65536
    assert pool_info(lds, lib.HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE, "size_t*") == 0
    # HSA_AMD_MEMORY_POOL_INFO_LOCATION (ROCr 5.5): test_versions.py


def test_cpu_pools(cpu):
    fine, kernarg, coarse = pools(cpu)
    fg = lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
    assert pool_summary(fine) == (lib.HSA_AMD_SEGMENT_GLOBAL, fg, True)
    assert pool_summary(kernarg) == (lib.HSA_AMD_SEGMENT_GLOBAL, fg | lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT,
                                     True)
    assert pool_summary(coarse)[1] == lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
    assert pool_info(fine, lib.HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL, "bool*")
    assert pool_info(fine, lib.HSA_AMD_MEMORY_POOL_INFO_SIZE, "size_t*") > 0


def access(a, pool):
    v = ffi.new("hsa_amd_memory_pool_access_t*")
    check(lib.hsa_amd_agent_memory_pool_get_info(a, pool, lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, v))
    return v[0]


def test_agent_pool_access_rules(gpu, cpu):
    coarse, fine, lds = pools(gpu)
    system = pools(cpu)[0]
    assert access(gpu, coarse) == lib.HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
    assert access(cpu, coarse) == lib.HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
    assert access(cpu, fine) == lib.HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
    assert access(cpu, lds) == lib.HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED
    assert access(cpu, system) == lib.HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT
    assert access(gpu, system) == lib.HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
    hops = ffi.new("uint32_t*")
    check(lib.hsa_amd_agent_memory_pool_get_info(cpu, coarse, lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, hops))
    assert hops[0] == 1
    link = ffi.new("hsa_amd_memory_pool_link_info_t*")
    check(lib.hsa_amd_agent_memory_pool_get_info(cpu, coarse, lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO, link))
    assert link.link_type == lib.HSA_AMD_LINK_INFO_TYPE_PCIE
    check(lib.hsa_amd_agent_memory_pool_get_info(gpu, coarse, lib.HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS, hops))
    assert hops[0] == 0


def test_pool_bad_input(gpu):
    bogus = ffi.new("hsa_amd_memory_pool_t*", {"handle": 0x1234})[0]
    out = ffi.new("uint64_t*")
    check(lib.hsa_amd_memory_pool_get_info(bogus, lib.HSA_AMD_MEMORY_POOL_INFO_SIZE, out),
          lib.HSA_STATUS_ERROR_INVALID_MEMORY_POOL)
    coarse = pools(gpu)[0]
    check(lib.hsa_amd_memory_pool_get_info(coarse, lib.HSA_AMD_MEMORY_POOL_INFO_SIZE, NULL),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_pool_get_info(coarse, 0x7777, out), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_agent_memory_pool_get_info(gpu, bogus, 0, out), lib.HSA_STATUS_ERROR_INVALID_MEMORY_POOL)
    check(lib.hsa_amd_agent_iterate_memory_pools(gpu, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    result = ffi.new("bool*", True)
    check(lib.hsa_amd_memory_pool_can_migrate(coarse, coarse, result), lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    assert not result[0]                         # not implemented in ROCr either


def test_allocation_granule_and_alignment(gpu):
    p = allocate(find_pool(gpu), 1000)
    assert int(ffi.cast("uintptr_t", p)) % 4096 == 0
    info = pointer_info(p)
    assert info.sizeInBytes == 1000              # the size asked for, as ROCr reports
    check(lib.hsa_amd_memory_pool_free(p))


def test_allocate_bad_input(gpu):
    coarse, _, lds = pools(gpu)
    out = ffi.new("void**")
    check(lib.hsa_amd_memory_pool_allocate(coarse, 0, 0, out), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_pool_allocate(coarse, 64, 0, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    bogus = ffi.new("hsa_amd_memory_pool_t*", {"handle": 8})[0]
    check(lib.hsa_amd_memory_pool_allocate(bogus, 64, 0, out), lib.HSA_STATUS_ERROR_INVALID_MEMORY_POOL)
    check(lib.hsa_amd_memory_pool_allocate(coarse, 64 * GiB + 1, 0, out), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)
    check(lib.hsa_amd_memory_pool_allocate(lds, 64, 0, out), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)


def test_injected_allocation_failure(gpu):
    lib.rocpy_stub_inject(lib.ROCPY_STUB_FAULT_ALLOC, 0, 1)
    out = ffi.new("void**")
    check(lib.hsa_amd_memory_pool_allocate(find_pool(gpu), 64, 0, out), lib.HSA_STATUS_ERROR_OUT_OF_RESOURCES)
    check(lib.hsa_amd_memory_pool_allocate(find_pool(gpu), 64, 0, out))   # one shot
    check(lib.hsa_amd_memory_pool_free(out[0]))


def test_free_rules(gpu):
    p = allocate(find_pool(gpu), 8192)
    interior = ffi.cast("char*", p) + 16
    check(lib.hsa_amd_memory_pool_free(interior), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)
    check(lib.hsa_amd_memory_pool_free(p))
    check(lib.hsa_amd_memory_pool_free(p), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)
    check(lib.hsa_amd_memory_pool_free(NULL))
    host = ffi.new("char[64]")
    check(lib.hsa_memory_free(host), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)


def test_pointer_info(gpu, cpu):
    p = allocate(find_pool(gpu), 5000)
    info = pointer_info(ffi.cast("char*", p) + 100)       # interior pointers find their allocation
    assert info.type == lib.HSA_EXT_POINTER_TYPE_HSA
    assert info.agentBaseAddress == p and info.hostBaseAddress == p
    assert info.agentOwner.handle == gpu.handle
    assert info.global_flags == lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED
    assert accessible_agents(p) == [gpu.handle]
    marker = ffi.new("int*")
    check(lib.hsa_amd_pointer_info_set_userdata(p, marker))
    assert pointer_info(p).userData == marker
    check(lib.hsa_amd_pointer_info_set_userdata(ffi.cast("char*", p) + 1, marker), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    k = allocate(find_pool(cpu, fine=True, kernarg=True), 64)
    kinfo = pointer_info(k)
    assert kinfo.agentOwner.handle == cpu.handle
    assert kinfo.global_flags == (lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED |
                                  lib.HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT)
    check(lib.hsa_amd_memory_pool_free(p))
    check(lib.hsa_amd_memory_pool_free(k))
    assert pointer_info(p).type == lib.HSA_EXT_POINTER_TYPE_UNKNOWN


def test_pointer_info_bad_input(rt):
    foreign = ffi.new("char[16]")
    info = pointer_info(foreign)
    assert info.type == lib.HSA_EXT_POINTER_TYPE_UNKNOWN and info.sizeInBytes == 0
    bad = ffi.new("hsa_amd_pointer_info_t*")
    bad.size = 0
    check(lib.hsa_amd_pointer_info(foreign, bad, NULL, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    bad.size = ffi.sizeof(bad[0])
    check(lib.hsa_amd_pointer_info(NULL, bad, NULL, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_pointer_info(foreign, NULL, NULL, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_allow_access_replaces_the_agent_set(gpu, cpu):
    p = allocate(find_pool(gpu), 4096)
    allow(p, cpu)
    assert accessible_agents(p) == [cpu.handle, gpu.handle]      # the owner keeps access
    allow(p, gpu)
    assert accessible_agents(p) == [gpu.handle]
    h = allocate(find_pool(cpu), 4096)
    assert accessible_agents(h) == [cpu.handle]                  # a system pool: the CPU's only
    allow(h, gpu)
    assert accessible_agents(h) == [cpu.handle, gpu.handle]
    check(lib.hsa_amd_memory_pool_free(p))
    check(lib.hsa_amd_memory_pool_free(h))


def test_allow_access_bad_input(gpu):
    p = allocate(find_pool(gpu), 4096)
    one = ffi.new("hsa_agent_t[1]", [gpu])
    check(lib.hsa_amd_agents_allow_access(0, one, NULL, p), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_agents_allow_access(1, NULL, NULL, p), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_agents_allow_access(1, one, ffi.new("uint32_t*"), p), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_agents_allow_access(1, one, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_agents_allow_access(1, one, NULL, ffi.cast("char*", p) + 8), lib.HSA_STATUS_ERROR)
    check(lib.hsa_amd_agents_allow_access(1, one, NULL, ffi.new("char[8]")), lib.HSA_STATUS_ERROR)
    bad = ffi.new("hsa_agent_t[1]", [{"handle": 77}])
    check(lib.hsa_amd_agents_allow_access(1, bad, NULL, p), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(lib.hsa_amd_memory_pool_free(p))


def test_memory_copy_round_trip(gpu):
    n = 1 << 12
    p = allocate(find_pool(gpu), 4 * n)
    src = np.arange(n, dtype=np.uint32)
    dst = np.zeros(n, dtype=np.uint32)
    check(lib.hsa_memory_copy(p, ffi.from_buffer(src), 4 * n))   # needs no access rights: the GPU's DMA
    check(lib.hsa_memory_copy(ffi.from_buffer(dst), p, 4 * n))
    assert (dst == src).all()
    check(lib.hsa_memory_copy(NULL, p, 4), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_memory_copy(p, NULL, 4), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_memory_copy(p, p, 0))
    check(lib.hsa_memory_copy(ffi.from_buffer(dst), p, 4 * n + 4), lib.HSA_STATUS_ERROR)   # past the allocation
    check(lib.hsa_amd_memory_pool_free(p))


_UNGRANTED_COPY = """
gpu, cpu = gpu_agents()[0], cpu_agent()
dev = allocate(find_pool(gpu), 4096)
host = allocate(find_pool(cpu), 4096)          # system pool memory, never granted to the GPU
{grant}
st = lib.hsa_memory_copy({dst}, {src}, 4096)   # ROCr: the GPU's blit kernel (Runtime::CopyMemory)
time.sleep(2)
print("survived", st)
"""


def test_memory_copy_of_ungranted_pool_memory_faults():
    for dst, src in (("dev", "host"), ("host", "dev")):
        proc = run_python("import time\n" + _UNGRANTED_COPY.format(grant="", dst=dst, src=src))
        assert_aborts(proc, "GPU memory fault", "Memory access fault by GPU node-1", "Page not present")
        assert "survived" not in proc.stdout


def test_memory_copy_of_granted_pool_memory_runs():
    proc = run_python("import time\n" + _UNGRANTED_COPY.format(grant="allow(host, gpu)", dst="dev", src="host"))
    assert proc.returncode == 0, proc.stderr
    assert "survived 0" in proc.stdout


def test_async_copy_waits_for_dependencies_then_decrements(gpu, cpu):
    n = 1024
    dev = allocate(find_pool(gpu), 4 * n)
    host = allocate(find_pool(cpu), 4 * n)
    allow(host, gpu)                                   # the copy engine is the GPU's
    np.frombuffer(ffi.buffer(host, 4 * n), dtype=np.uint32)[:] = np.arange(n)
    dep, done = signal(1), signal(2)
    deps = ffi.new("hsa_signal_t[1]", [dep])
    check(lib.hsa_amd_memory_async_copy(dev, gpu, host, cpu, 4 * n, 1, deps, done))
    assert wait_eq(done, 1, SECOND // 20) == 2         # held back by its dependency
    lib.hsa_signal_store_screlease(dep, 0)
    assert wait_eq(done, 1) == 1                       # decremented by exactly one
    back = np.zeros(n, dtype=np.uint32)
    check(lib.hsa_memory_copy(ffi.from_buffer(back), dev, 4 * n))
    assert (back == np.arange(n)).all()
    for s in (dep, done):
        check(lib.hsa_signal_destroy(s))
    for p in (dev, host):
        check(lib.hsa_amd_memory_pool_free(p))


def test_async_copy_needs_access_for_the_copy_agent(gpu, cpu):
    dev = allocate(find_pool(gpu), 4096)
    host = allocate(find_pool(cpu), 4096)
    done = signal(1)
    # GPU engine, host memory not mapped to the GPU yet
    check(lib.hsa_amd_memory_async_copy(dev, gpu, host, cpu, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    # a CPU copy of coarse GPU memory the CPU may not touch
    check(lib.hsa_amd_memory_async_copy(host, cpu, dev, cpu, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    allow(dev, cpu)
    check(lib.hsa_amd_memory_async_copy(host, cpu, dev, cpu, 64, 0, NULL, done))
    assert wait_eq(done, 0) == 0
    # foreign host memory is the CPU's: a CPU copy works, a GPU copy does not
    foreign = ffi.new("char[64]")
    lib.hsa_signal_store_relaxed(done, 1)
    check(lib.hsa_amd_memory_async_copy(foreign, cpu, host, cpu, 64, 0, NULL, done))
    assert wait_eq(done, 0) == 0
    check(lib.hsa_amd_memory_async_copy(dev, gpu, foreign, cpu, 64, 0, NULL, done),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(done))
    for p in (dev, host):
        check(lib.hsa_amd_memory_pool_free(p))


def test_async_copy_bad_input(gpu, cpu):
    dev = allocate(find_pool(gpu), 4096)
    done, dead = signal(1), signal(1)
    check(lib.hsa_signal_destroy(dead))
    s0 = ffi.new("hsa_signal_t*")[0]
    bad_agent = ffi.new("hsa_agent_t*", {"handle": 5})[0]
    one = ffi.new("hsa_signal_t[1]", [done])
    copy = lib.hsa_amd_memory_async_copy
    check(copy(NULL, gpu, dev, gpu, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, gpu, NULL, gpu, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, gpu, dev, gpu, 64, 1, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, gpu, dev, gpu, 64, 0, one, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, bad_agent, dev, gpu, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(copy(dev, gpu, dev, bad_agent, 64, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(copy(dev, gpu, dev, gpu, 64, 1, ffi.new("hsa_signal_t[1]", [s0]), done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, gpu, dev, gpu, 64, 1, ffi.new("hsa_signal_t[1]", [dead]), done), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(copy(dev, gpu, dev, gpu, 64, 0, NULL, s0), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(copy(dev, gpu, dev, gpu, 64, 0, NULL, dead), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(copy(dev, gpu, dev, gpu, 8192, 0, NULL, done), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)   # overruns
    check(copy(dev, gpu, dev, gpu, 0, 0, NULL, done))                 # nothing to do: nothing signalled
    assert lib.hsa_signal_load_relaxed(done) == 1
    check(lib.hsa_signal_destroy(done))
    check(lib.hsa_amd_memory_pool_free(dev))


def test_fill(gpu):
    p = allocate(find_pool(gpu), 4096)
    check(lib.hsa_amd_memory_fill(p, 0xA5A5A5A5, 1024))
    out = np.zeros(1024, dtype=np.uint32)
    check(lib.hsa_memory_copy(ffi.from_buffer(out), p, 4096))
    assert (out == 0xA5A5A5A5).all()
    check(lib.hsa_amd_memory_fill(ffi.cast("char*", p) + 2, 0, 1), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_fill(NULL, 0, 1), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_fill(p, 0, 1025), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)
    check(lib.hsa_amd_memory_fill(ffi.new("uint32_t[4]"), 0, 4), lib.HSA_STATUS_ERROR_INVALID_ALLOCATION)
    check(lib.hsa_amd_memory_fill(p, 0, 0))
    check(lib.hsa_amd_memory_pool_free(p))


def test_lock_and_unlock(gpu, cpu):
    host = np.zeros(1024, dtype=np.uint8)
    ptr = ffi.from_buffer(host)
    agent_ptr = ffi.new("void**")
    gpus = ffi.new("hsa_agent_t[1]", [gpu])
    check(lib.hsa_amd_memory_lock(ptr, 1024, gpus, 1, agent_ptr))
    assert agent_ptr[0] == ffi.cast("void*", ptr)
    info = pointer_info(ptr)
    assert info.type == lib.HSA_EXT_POINTER_TYPE_LOCKED and info.agentOwner.handle == cpu.handle
    assert accessible_agents(ptr) == [cpu.handle, gpu.handle]
    check(lib.hsa_amd_memory_lock(ptr, 1024, gpus, 1, agent_ptr), lib.HSA_STATUS_ERROR)   # already locked
    check(lib.hsa_amd_memory_unlock(ptr))
    assert pointer_info(ptr).type == lib.HSA_EXT_POINTER_TYPE_UNKNOWN
    check(lib.hsa_amd_memory_unlock(ptr))                                      # ROCr ignores a second unlock
    check(lib.hsa_amd_memory_lock(ptr, 0, gpus, 1, agent_ptr), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_lock(NULL, 8, gpus, 1, agent_ptr), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_lock(ptr, 8, gpus, 0, agent_ptr), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_lock(ptr, 8, NULL, 1, agent_ptr), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_lock(ptr, 8, gpus, 1, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_lock(ptr, 8, ffi.new("hsa_agent_t[1]", [{"handle": 3}]), 1, agent_ptr),
          lib.HSA_STATUS_ERROR_INVALID_AGENT)


def test_ipc_within_the_process(gpu):
    p = allocate(find_pool(gpu), 1000)
    handle = ffi.new("hsa_amd_ipc_memory_t*")
    check(lib.hsa_amd_ipc_memory_create(p, 999, handle), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_ipc_memory_create(p, 4096, handle))          # the size rounded to the page is accepted
    check(lib.hsa_amd_ipc_memory_create(p, 1000, handle))
    mapped = ffi.new("void**")
    check(lib.hsa_amd_ipc_memory_attach(handle, 1000, 0, NULL, mapped))
    # ROCr maps the shared buffer at a new address, in the exporter too (IPCAttach)
    assert mapped[0] != p
    ffi.cast("uint32_t*", p)[0] = 0x1234
    assert ffi.cast("uint32_t*", mapped[0])[0] == 0x1234
    check(lib.hsa_amd_ipc_memory_detach(p), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)   # the exporter's own
    check(lib.hsa_amd_ipc_memory_detach(mapped[0]))
    check(lib.hsa_amd_ipc_memory_detach(mapped[0]), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_ipc_memory_create(ffi.cast("char*", p) + 64, 64, handle), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_ipc_memory_create(ffi.new("char[64]"), 64, handle), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    forged = ffi.new("hsa_amd_ipc_memory_t*")
    check(lib.hsa_amd_ipc_memory_attach(forged, 64, 0, NULL, mapped), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_ipc_memory_attach(handle, 64, 1, NULL, mapped), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_ipc_memory_attach(handle, 64, 0, NULL, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_memory_pool_free(p))
    check(lib.hsa_amd_ipc_memory_attach(handle, 1000, 0, NULL, mapped), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def regions(a):
    out = []

    @ffi.callback("hsa_status_t(hsa_region_t, void*)")
    def cb(r, data):
        out.append(r.handle)
        return lib.HSA_STATUS_SUCCESS
    check(lib.hsa_agent_iterate_regions(a, cb, NULL))
    return [ffi.new("hsa_region_t*", {"handle": h})[0] for h in out]


def test_regions(gpu, cpu):
    gpu_regions, cpu_regions = regions(gpu), regions(cpu)
    # ROCr: the first GPU lists its own regions, then everyone's system regions
    assert [r.handle for r in gpu_regions[:3]] == [p.handle for p in pools(gpu)]
    assert [r.handle for r in gpu_regions[3:]] == [r.handle for r in cpu_regions]
    flags = ffi.new("uint32_t*")
    check(lib.hsa_region_get_info(cpu_regions[1], lib.HSA_REGION_INFO_GLOBAL_FLAGS, flags))
    assert flags[0] == lib.HSA_REGION_GLOBAL_FLAG_KERNARG | lib.HSA_REGION_GLOBAL_FLAG_FINE_GRAINED
    # hsa_memory_allocate maps system memory to every GPU (no restriction)
    p = ffi.new("void**")
    check(lib.hsa_memory_allocate(cpu_regions[1], 256, p))
    assert accessible_agents(p[0]) == [cpu.handle, gpu.handle]
    check(lib.hsa_memory_free(p[0]))
    check(lib.hsa_memory_allocate(cpu_regions[1], 0, p), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    bogus = ffi.new("hsa_region_t*", {"handle": 16})[0]
    check(lib.hsa_memory_allocate(bogus, 64, p), lib.HSA_STATUS_ERROR_INVALID_REGION)
    check(lib.hsa_region_get_info(bogus, lib.HSA_REGION_INFO_SIZE, ffi.new("size_t*")), lib.HSA_STATUS_ERROR_INVALID_REGION)
    check(lib.hsa_region_get_info(cpu_regions[0], lib.HSA_REGION_INFO_SIZE, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


@pytest.mark.parametrize("address,size,expected", [
    (True, 0, "HSA_STATUS_ERROR_INVALID_ARGUMENT"), (True, 64, "HSA_STATUS_SUCCESS"), (False, 0, "HSA_STATUS_SUCCESS")])
def test_memory_register(rt, address, size, expected):
    ptr = ffi.new("char[64]") if address else NULL
    check(lib.hsa_memory_register(ptr, size), getattr(lib, expected))
    check(lib.hsa_memory_deregister(ptr, size))
