/* Memory regions and AMD memory pools: the same objects in ROCr
 * (AMD::MemoryRegion), answered as amd_memory_region.cpp does.
 *
 * CPU agent: system fine-grained, system kernarg (fine), system coarse.
 * GPU agent: local coarse-grained (the device memory), local fine-grained,
 * and the group segment (LDS), which cannot be allocated from. */
#include "hsa_internal.h"

#include <string.h>
#include <unistd.h>

#define POOLS_PER_AGENT 3
#define MAX_AGENTS (1 + STUB_MAX_DEVICES)
#define LOCAL_REC_GRANULE (2u << 20)   /* ROCr's fragment allocator block */

static stub_hsa_pool_t pools[MAX_AGENTS][POOLS_PER_AGENT];
static pthread_once_t pools_once = PTHREAD_ONCE_INIT;
static size_t system_size;

static void init_pools(void) {
    long pages = sysconf(_SC_PHYS_PAGES);
    system_size = pages > 0 ? (size_t)pages * STUB_PAGE_SIZE : (size_t)16 << 30;
    stub_hsa_agent_t *cpu = stub_hsa_cpu_agent();
    pools[0][0] = (stub_hsa_pool_t){STUB_POOL_SYS_FINE, cpu};
    pools[0][1] = (stub_hsa_pool_t){STUB_POOL_SYS_KERNARG, cpu};
    pools[0][2] = (stub_hsa_pool_t){STUB_POOL_SYS_COARSE, cpu};
    for (int i = 0; i < STUB_MAX_DEVICES; i++) {
        stub_hsa_agent_t *gpu = stub_hsa_gpu_agent(i);
        pools[1 + i][0] = (stub_hsa_pool_t){STUB_POOL_GPU_COARSE, gpu};
        pools[1 + i][1] = (stub_hsa_pool_t){STUB_POOL_GPU_FINE, gpu};
        pools[1 + i][2] = (stub_hsa_pool_t){STUB_POOL_GPU_LDS, gpu};
    }
}

static stub_hsa_pool_t *agent_pools(const stub_hsa_agent_t *agent) {
    pthread_once(&pools_once, init_pools);
    return pools[agent->is_gpu ? 1 + agent->device : 0];
}

stub_hsa_pool_t *stub_hsa_pool(uint64_t handle) {
    pthread_once(&pools_once, init_pools);
    uintptr_t p = (uintptr_t)handle, base = (uintptr_t)pools;
    if (p < base || (p - base) % sizeof(stub_hsa_pool_t) != 0) return NULL;
    size_t i = (p - base) / sizeof(stub_hsa_pool_t);
    if (i >= (size_t)MAX_AGENTS * POOLS_PER_AGENT) return NULL;
    stub_hsa_pool_t *pool = &pools[i / POOLS_PER_AGENT][i % POOLS_PER_AGENT];
    return pool->owner ? pool : NULL;   /* NULL owner: no such GPU */
}

uint64_t stub_hsa_pool_handle(const stub_hsa_pool_t *pool) { return (uint64_t)(uintptr_t)pool; }

bool stub_pool_is_system(const stub_hsa_pool_t *pool) { return pool->kind <= STUB_POOL_SYS_COARSE; }

static bool is_local(const stub_hsa_pool_t *pool) {
    return pool->kind == STUB_POOL_GPU_COARSE || pool->kind == STUB_POOL_GPU_FINE;
}

bool stub_pool_fine_grained(const stub_hsa_pool_t *pool) {
    return pool->kind == STUB_POOL_SYS_FINE || pool->kind == STUB_POOL_SYS_KERNARG ||
           pool->kind == STUB_POOL_GPU_FINE;
}

size_t stub_pool_size(const stub_hsa_pool_t *pool) {
    if (stub_pool_is_system(pool)) return system_size;
    if (pool->kind == STUB_POOL_GPU_LDS) return (size_t)pool->owner->dev->lds_size;
    return (size_t)pool->owner->dev->global_mem_size;
}

static size_t alloc_max(const stub_hsa_pool_t *pool) {
    if (pool->kind == STUB_POOL_GPU_LDS) return 0;
    return stub_pool_size(pool) / STUB_PAGE_SIZE * STUB_PAGE_SIZE;
}

hsa_status_t stub_pool_region_info(const stub_hsa_pool_t *pool, int attribute, void *value) {
    bool lds = pool->kind == STUB_POOL_GPU_LDS;
    switch (attribute) {
    case HSA_REGION_INFO_SEGMENT:
        *(hsa_region_segment_t *)value = lds ? HSA_REGION_SEGMENT_GROUP : HSA_REGION_SEGMENT_GLOBAL;
        break;
    case HSA_REGION_INFO_GLOBAL_FLAGS: {
        uint32_t flags = 0;
        if (!lds) flags = stub_pool_fine_grained(pool) ? HSA_REGION_GLOBAL_FLAG_FINE_GRAINED
                                                       : HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED;
        if (pool->kind == STUB_POOL_SYS_KERNARG) flags |= HSA_REGION_GLOBAL_FLAG_KERNARG;
        *(uint32_t *)value = flags;
        break;
    }
    case HSA_REGION_INFO_SIZE: *(size_t *)value = stub_pool_size(pool); break;
    case HSA_REGION_INFO_ALLOC_MAX_SIZE: *(size_t *)value = alloc_max(pool); break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED: *(bool *)value = !lds; break;
    case HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_REGION_INFO_RUNTIME_ALLOC_ALIGNMENT: *(size_t *)value = lds ? 0 : STUB_PAGE_SIZE; break;
    case HSA_AMD_REGION_INFO_HOST_ACCESSIBLE: *(bool *)value = stub_pool_is_system(pool); break;
    case HSA_AMD_REGION_INFO_BASE: *(void **)value = NULL; break;
    case HSA_AMD_REGION_INFO_BUS_WIDTH:
        *(uint32_t *)value = is_local(pool) ? pool->owner->dev->memory_bus_width : 0;
        break;
    case HSA_AMD_REGION_INFO_MAX_CLOCK_FREQUENCY:
        *(uint32_t *)value = is_local(pool) ? pool->owner->dev->memory_clock_mhz : 0;
        break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_region_get_info(hsa_region_t region, hsa_region_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    stub_hsa_pool_t *pool = stub_hsa_pool(region.handle);
    if (!pool) return HSA_STATUS_ERROR_INVALID_REGION;
    return stub_pool_region_info(pool, (int)attribute, value);
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t memory_pool,
                                          hsa_amd_memory_pool_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    stub_hsa_pool_t *pool = stub_hsa_pool(memory_pool.handle);
    if (!pool) return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    if (!stub_hsa_attribute_known(STUB_HSA_POOL_INFO, (int)attribute)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    switch ((int)attribute) {
    case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
    case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
    case HSA_AMD_MEMORY_POOL_INFO_SIZE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
    case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
        return stub_pool_region_info(pool, (int)attribute, value);
    case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL: *(bool *)value = stub_pool_is_system(pool); break;
    case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE: *(size_t *)value = alloc_max(pool); break;
    case STUB_AMD_MEMORY_POOL_INFO_LOCATION:
        /* hsa_amd_memory_pool_location_t: CPU 0, GPU 1; LDS has neither */
        if (pool->kind == STUB_POOL_GPU_LDS) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        *(int *)value = is_local(pool) ? 1 : 0;
        break;
    case STUB_AMD_MEMORY_POOL_INFO_ALLOC_REC_GRANULE:
        *(size_t *)value = stub_pool_is_system(pool) ? STUB_PAGE_SIZE : is_local(pool) ? LOCAL_REC_GRANULE : 0;
        break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t visit_regions(stub_hsa_pool_t *list, hsa_status_t (*callback)(hsa_region_t r, void *d),
                                  void *data) {
    for (int i = 0; i < POOLS_PER_AGENT; i++) {
        hsa_status_t s = callback((hsa_region_t){stub_hsa_pool_handle(&list[i])}, data);
        if (s != HSA_STATUS_SUCCESS) return s;
    }
    return HSA_STATUS_SUCCESS;
}

/* ROCr's GpuAgent::VisitRegion(include_peer = true): only the first GPU
 * (the "region GPU") lists its own regions; every agent lists the system
 * regions, fine-grained (with kernarg) first, then coarse-grained. */
hsa_status_t hsa_agent_iterate_regions(hsa_agent_t agent, hsa_status_t (*callback)(hsa_region_t r, void *d),
                                       void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    hsa_status_t s = HSA_STATUS_SUCCESS;
    if (a->is_gpu && a->device == 0) s = visit_regions(agent_pools(a), callback, data);
    if (s == HSA_STATUS_SUCCESS) s = visit_regions(agent_pools(stub_hsa_cpu_agent()), callback, data);
    return s;
}

hsa_status_t hsa_amd_agent_iterate_memory_pools(hsa_agent_t agent,
                                                hsa_status_t (*callback)(hsa_amd_memory_pool_t p, void *d),
                                                void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    stub_hsa_pool_t *list = agent_pools(a);
    for (int i = 0; i < POOLS_PER_AGENT; i++) {
        hsa_status_t s = callback((hsa_amd_memory_pool_t){stub_hsa_pool_handle(&list[i])}, data);
        if (s != HSA_STATUS_SUCCESS) return s;
    }
    return HSA_STATUS_SUCCESS;
}

/* ROCr MemoryRegion::GetAccessInfo for a PCIe system without xGMI hives. */
static hsa_amd_memory_pool_access_t access_of(const stub_hsa_agent_t *agent, const stub_hsa_pool_t *pool) {
    if (agent == pool->owner) return HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
    if (stub_pool_is_system(pool))
        return agent->is_gpu ? HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT
                             : HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
    if (is_local(pool)) return HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;
    return HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
}

static uint32_t link_hops(const stub_hsa_agent_t *from, const stub_hsa_agent_t *to) {
    return from == to ? 0 : 1;
}

hsa_status_t hsa_amd_agent_memory_pool_get_info(hsa_agent_t agent, hsa_amd_memory_pool_t memory_pool,
                                                hsa_amd_agent_memory_pool_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    stub_hsa_pool_t *pool = stub_hsa_pool(memory_pool.handle);
    if (!pool) return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    hsa_amd_memory_pool_access_t access = access_of(a, pool);
    uint32_t hops = access == HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED ? 0 : link_hops(a, pool->owner);
    switch (attribute) {
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS: *(hsa_amd_memory_pool_access_t *)value = access; break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS: *(uint32_t *)value = hops; break;
    case HSA_AMD_AGENT_MEMORY_POOL_INFO_LINK_INFO: {
        hsa_amd_memory_pool_link_info_t *link = value;
        memset(link, 0, sizeof *link);
        if (hops == 0) break;
        /* a PCIe 4.0 x16 link, as KFD's io_links report it (MB/s) */
        link->min_bandwidth = 312;
        link->max_bandwidth = 31508;
        link->atomic_support_32bit = link->atomic_support_64bit = true;
        link->coherent_support = true;
        link->link_type = HSA_AMD_LINK_INFO_TYPE_PCIE;
        link->numa_distance = a->is_gpu && pool->owner->is_gpu ? 40 : 20;
        break;
    }
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

/* Not implemented in ROCr either: result false, OUT_OF_RESOURCES. */
hsa_status_t hsa_amd_memory_pool_can_migrate(hsa_amd_memory_pool_t src_memory_pool,
                                             hsa_amd_memory_pool_t dst_memory_pool, bool *result) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(result);
    if (!stub_hsa_pool(src_memory_pool.handle) || !stub_hsa_pool(dst_memory_pool.handle))
        return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    *result = false;
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

hsa_status_t hsa_amd_memory_migrate(const void *ptr, hsa_amd_memory_pool_t memory_pool, uint32_t flags) {
    HSA_CHECK_OPEN();
    if (ptr == NULL || flags != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!stub_hsa_pool(memory_pool.handle)) return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}
