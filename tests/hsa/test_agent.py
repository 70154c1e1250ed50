"""hsa.Agent: typed information, pools and regions, access and links, queue creation."""
from __future__ import annotations

import pytest

from rocpy.errors import (
    ClosedError,
    HsaError,
    HsaInvalidValueError,
    HsaOutOfMemoryError,
)


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def test_gpu_information(gpu):
    assert gpu.type == "gpu" and gpu.is_gpu and not gpu.is_cpu
    assert gpu.name.startswith("gfx")
    assert gpu.isa_name.startswith("amdgcn-amd-amdhsa--" + gpu.name)
    assert gpu.target.split(":")[0] == gpu.name
    assert gpu.wavefront_size in (32, 64)
    assert gpu.compute_units > 0
    assert gpu.features == {"kernel_dispatch"}
    assert gpu.node >= 1
    assert gpu.uuid.startswith("GPU-")
    assert gpu.product_name
    assert gpu.vendor_name == "AMD"
    assert gpu.profile in ("base", "full")
    assert gpu.queues_max > 0
    assert _power_of_two(gpu.queue_min_size) and _power_of_two(gpu.queue_max_size)
    assert gpu.queue_min_size <= gpu.queue_max_size
    assert gpu.queue_type in ("multi", "single")
    assert gpu.workgroup_max_size >= 256
    assert len(gpu.workgroup_max_dim) == 3 and max(gpu.workgroup_max_dim) >= 256
    assert len(gpu.grid_max_dim) == 3 and gpu.grid_max_size > 0
    assert len(gpu.cache_sizes) == 4
    assert gpu.simds_per_cu > 0 and gpu.max_waves_per_cu > 0
    assert gpu.max_clock_mhz > 0 and gpu.cacheline_size in (64, 128)
    assert isinstance(gpu.chip_id, int) and isinstance(gpu.bdf_id, int)
    assert gpu.isas and gpu.isas[0] == gpu.isa_name
    caches = gpu.caches
    assert all(isinstance(name, str) and 1 <= level <= 4 and size >= 0
               for name, level, size in caches)


def test_cpu_information(cpu):
    assert cpu.type == "cpu" and cpu.is_cpu
    assert cpu.features == frozenset()        # no AQL packet processor
    assert cpu.isa_name is None and cpu.target is None
    assert cpu.isas == []
    assert cpu.compute_units > 0
    assert cpu.name


def test_info_by_name_value_and_errors(gpu):
    from rocpy.hsa import lib
    assert gpu.info("HSA_AGENT_INFO_WAVEFRONT_SIZE", "u32") == gpu.wavefront_size
    assert gpu.info(lib.HSA_AGENT_INFO_NODE, "u32") == gpu.node
    with pytest.raises(ValueError, match="no HSA_AGENT_INFO_COLOUR"):
        gpu.info("HSA_AGENT_INFO_COLOUR", "u32")
    with pytest.raises(HsaInvalidValueError) as e:
        gpu.info(0x7ffffff0, "u32")
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert e.value.call == "hsa_agent_get_info"


def test_agents_compare_by_handle(rt, gpu, cpu):
    assert gpu == rt.gpu_agents[0] and hash(gpu) == hash(rt.gpu_agents[0])
    assert gpu != cpu
    assert "gpu" in repr(gpu) and gpu.name in repr(gpu)


def test_extension_supported_per_agent(gpu, cpu, stub_only):
    assert gpu.extension_supported("amd_profiler")
    assert not cpu.extension_supported("amd_profiler")


# ---- memory pools and regions ---------------------------------------------------------------

def test_pools_are_filtered(gpu, cpu):
    everything = gpu.pools()
    assert everything and gpu.pools() == everything
    coarse = gpu.pools(segment="global", fine_grained=False)
    assert coarse and all(p.segment == "global" and p.coarse_grained for p in coarse)
    assert all(p.agent == gpu for p in everything)
    kernarg = cpu.pools(kernarg=True)
    assert kernarg and all(p.kernarg and p.fine_grained and p.is_system for p in kernarg)
    assert all(not p.kernarg for p in gpu.pools(kernarg=False))
    group = gpu.pools(segment="group")
    assert all(not p.alloc_allowed for p in group)
    assert all(p.alloc_allowed for p in gpu.pools(allocatable=True))
    with pytest.raises(ValueError, match="segment must be"):
        gpu.pools(segment="shared")


def test_pool_information(gpu):
    pool = gpu.pools(segment="global", fine_grained=False)[0]
    assert pool.size > 0
    assert pool.alloc_allowed
    assert pool.alloc_granule > 0 and pool.alloc_alignment > 0
    assert 0 < pool.alloc_max_size <= pool.size
    assert pool.accessible_by_all in (True, False)
    assert pool.flags == {"coarse_grained"}
    assert "coarse_grained" in repr(pool)


def test_regions_are_filtered(gpu):
    regions = gpu.regions()
    assert regions
    kernarg = gpu.regions(kernarg=True)
    assert kernarg and all(r.kernarg and r.host_accessible for r in kernarg)
    assert all(r.segment == "global" for r in gpu.regions(segment="global"))
    assert {r.segment for r in regions} <= {"global", "readonly", "private", "group", "kernarg"}


def test_access_and_links(gpu, cpu, stub_only):
    coarse = gpu.pools(segment="global", fine_grained=False)[0]
    own = gpu.access(coarse)
    assert own.access == "allowed_by_default" and own.allowed and own.hops == 0
    assert own.links == ()
    remote = cpu.access(coarse)
    assert remote.access == "disallowed_by_default" and remote.possible and not remote.allowed
    assert remote.hops == 1 and len(remote.links) == 1
    link = remote.links[0]
    assert link.type == "pcie" and link.max_bandwidth >= link.min_bandwidth > 0
    assert coarse.access(cpu) == remote
    lds = gpu.pools(segment="group")[0]
    assert cpu.access(lds).access == "never_allowed" and not cpu.access(lds).possible
    kernarg = cpu.pools(kernarg=True)[0]
    assert gpu.access(kernarg).access == "disallowed_by_default"


# ---- queues -------------------------------------------------------------------------------

def test_create_queue_defaults(gpu):
    with gpu.create_queue() as q:
        assert q.size == min(max(4096, gpu.queue_min_size), gpu.queue_max_size)
        assert q.kind == "multi"
        assert q.agent == gpu
        assert q.read_index == q.write_index == 0
        assert q.error is None
        assert "active" in repr(q)
    assert q.closed and "closed" in repr(q)


def test_create_queue_sizes(gpu):
    with gpu.create_queue(size=gpu.queue_min_size, kind="single") as q:
        assert q.size == gpu.queue_min_size and q.kind == "single"
    for bad in (0, 100, -64):
        with pytest.raises(ValueError, match="power of two"):
            gpu.create_queue(size=bad)
    for bad in (64.0, True, "64"):            # a wrong type is a TypeError (rocpy._args)
        with pytest.raises(TypeError, match="size must be an integer"):
            gpu.create_queue(size=bad)
    with pytest.raises(ValueError, match="'multi' or 'single'"):
        gpu.create_queue(kind="cooperative")
    with pytest.raises(TypeError, match="on_error must be callable"):
        gpu.create_queue(on_error=42)


def test_queue_sizes_the_runtime_refuses(gpu, stub_only):
    with pytest.raises(HsaInvalidValueError) as e:
        gpu.create_queue(size=gpu.queue_min_size // 2)
    assert e.value.name == "HSA_STATUS_ERROR_INVALID_ARGUMENT"
    assert e.value.call == "hsa_queue_create"
    with pytest.raises(HsaOutOfMemoryError) as e:
        gpu.create_queue(size=gpu.queue_max_size * 2)
    assert e.value.name == "HSA_STATUS_ERROR_OUT_OF_RESOURCES"


def test_cpu_agents_have_no_queues(cpu):
    for size in (64, None):
        with pytest.raises(HsaError) as e:
            cpu.create_queue(size=size)
        assert e.value.call == "hsa_queue_create"


def test_queue_after_the_runtime_closed(rt, gpu):
    q = gpu.create_queue()
    rt.close()                      # the queue keeps the runtime up
    assert q.read_index == 0
    q.close()


def test_closed_agent_refuses_use(gpu):
    gpu.close()
    with pytest.raises(ClosedError, match="Agent is closed"):
        gpu.pools()
    with pytest.raises(ClosedError):
        gpu.create_queue()
