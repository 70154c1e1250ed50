/* Allocation, access rights, pointer info, locking and IPC of HSA memory.
 *
 * The core tracker (stub_mem_*) holds every allocation and its access mask;
 * this file keeps, for the allocations it made, what ROCr's allocation map
 * keeps (core::Runtime::allocation_map_): the pool, the size asked for, the
 * user data, the IPC state.
 *
 * IPC itself is hsa_ipc.c; this file exports an allocation's record to it.
 *
 * Access rules (ROCr KfdDriver::AllocateMemory, MemoryRegion::AllowAccess):
 * memory from a GPU's pools is mapped to that GPU only; memory from a system
 * pool through hsa_amd_memory_pool_allocate is the CPU's only, while
 * hsa_memory_allocate maps system memory to every GPU; hsa_amd_agents_allow_
 * access replaces the set of agents (the owner always keeps its access). */
#include "hsa_internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MY_KINDS (STUB_MEM_DEVICE | STUB_MEM_HOST | STUB_MEM_KERNARG)

typedef struct mem_rec {
    uintptr_t base;
    size_t size;                     /* as requested */
    const stub_hsa_pool_t *pool;     /* NULL: memory locked by hsa_amd_memory_lock */
    void *userdata;
    int ipc_fd;                      /* > 0 once exported: the memory it is mapped from (hsa_ipc.c) */
} mem_rec_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mem_rec_t *recs;
static size_t rec_count, rec_cap;

/* index of the first record with base >= b */
static size_t lower_bound(uintptr_t b) {
    size_t lo = 0, hi = rec_count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (recs[mid].base < b) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* caller holds lock */
static mem_rec_t *rec_find(uintptr_t base) {
    size_t i = lower_bound(base);
    return i < rec_count && recs[i].base == base ? &recs[i] : NULL;
}

static bool rec_add(const mem_rec_t *r) {
    pthread_mutex_lock(&lock);
    if (rec_count == rec_cap) {
        size_t cap = rec_cap ? rec_cap * 2 : 64;
        mem_rec_t *n = realloc(recs, cap * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&lock);
            return false;
        }
        recs = n;
        rec_cap = cap;
    }
    size_t i = lower_bound(r->base);
    memmove(&recs[i + 1], &recs[i], (rec_count - i) * sizeof *recs);
    recs[i] = *r;
    rec_count++;
    pthread_mutex_unlock(&lock);
    return true;
}

/* caller holds lock */
static void rec_remove(mem_rec_t *r) {
    size_t i = (size_t)(r - recs);
    memmove(&recs[i], &recs[i + 1], (rec_count - i - 1) * sizeof *recs);
    rec_count--;
}

static uint64_t all_gpu_bits(void) {
    uint64_t bits = 0;
    for (int i = 0; i < stub_hsa_gpu_count(); i++) bits |= 1ull << i;
    return bits;
}

bool stub_hsa_find(const void *ptr, stub_alloc_t *info) { return stub_mem_find(ptr, info); }

bool stub_hsa_accessible(const stub_hsa_agent_t *agent, const void *ptr, size_t size) {
    stub_alloc_t a;
    if (!stub_mem_find(ptr, &a))
        return !agent->is_gpu || stub_hsa_vmem_gpu_access(agent, ptr, size) || stub_hsa_svm_gpu_access(agent, ptr, size);
    if (size > a.base + a.size - (uintptr_t)ptr) return false;
    return (a.access_mask & stub_hsa_access_bit(agent)) != 0;
}

hsa_status_t stub_hsa_allocate(const stub_hsa_pool_t *pool, size_t size, bool restricted, void **ptr) {
    size_t granule;
    stub_pool_region_info(pool, HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, &granule);
    if (granule == 0) return HSA_STATUS_ERROR_INVALID_ALLOCATION;   /* the LDS */
    size_t max;
    stub_pool_region_info(pool, HSA_REGION_INFO_ALLOC_MAX_SIZE, &max);
    if (size > max) return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    stub_mem_kind_t kind = pool->kind == STUB_POOL_SYS_KERNARG ? STUB_MEM_KERNARG
                           : stub_pool_is_system(pool)          ? STUB_MEM_HOST
                                                                : STUB_MEM_DEVICE;
    int device = pool->owner->is_gpu ? pool->owner->device : -1;
    void *p;
    /* the 4 KiB granule: memory is really page-aligned and page-rounded;
     * the tracker and pointer info keep the size asked for, as ROCr does */
    if (stub_mem_alloc(size, granule, kind, device, 0, &p) != 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    if (stub_pool_is_system(pool) && !restricted) stub_mem_set_access(p, STUB_ACCESS_CPU | all_gpu_bits());
    stub_mem_set_tag(p, (void *)pool);
    mem_rec_t r = {(uintptr_t)p, size, pool, NULL, 0};
    if (!rec_add(&r)) {
        stub_mem_release(p, MY_KINDS, NULL);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *ptr = p;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t memory_pool, size_t size, uint32_t flags,
                                          void **ptr) {
    HSA_CHECK_OPEN();
    (void)flags;   /* PCIe / contiguous / executable hints change nothing here */
    if (size == 0 || ptr == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_hsa_pool_t *pool = stub_hsa_pool(memory_pool.handle);
    if (!pool) return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    return stub_hsa_allocate(pool, size, true, ptr);
}

hsa_status_t hsa_memory_allocate(hsa_region_t region, size_t size, void **ptr) {
    HSA_CHECK_OPEN();
    if (size == 0 || ptr == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_hsa_pool_t *pool = stub_hsa_pool(region.handle);
    if (!pool) return HSA_STATUS_ERROR_INVALID_REGION;
    return stub_hsa_allocate(pool, size, false, ptr);
}

hsa_status_t hsa_memory_free(void *ptr) {
    HSA_CHECK_OPEN();
    if (ptr == NULL) return HSA_STATUS_SUCCESS;
    pthread_mutex_lock(&lock);
    mem_rec_t *r = rec_find((uintptr_t)ptr);
    if (!r || !r->pool) {
        pthread_mutex_unlock(&lock);
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
    int ipc_fd = r->ipc_fd;
    size_t pages = (r->size + STUB_PAGE_SIZE - 1) / STUB_PAGE_SIZE * STUB_PAGE_SIZE;
    rec_remove(r);
    pthread_mutex_unlock(&lock);
    if (ipc_fd > 0) stub_ipc_unshare(ptr, pages, ipc_fd);
    stub_mem_release(ptr, MY_KINDS, NULL);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_free(void *ptr) { return hsa_memory_free(ptr); }

hsa_status_t hsa_amd_agents_allow_access(uint32_t num_agents, const hsa_agent_t *agents, const uint32_t *flags,
                                         const void *ptr) {
    HSA_CHECK_OPEN();
    if (num_agents == 0 || agents == NULL || flags != NULL || ptr == NULL)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_alloc_t a;
    /* ROCr 5.2 Runtime::AllowAccess: only the base of an allocation */
    if (!stub_mem_find(ptr, &a) || a.base != (uintptr_t)ptr || a.kind == STUB_MEM_REGISTERED)
        return HSA_STATUS_ERROR;
    uint64_t mask = a.device >= 0 ? 1ull << a.device : STUB_ACCESS_CPU;
    for (uint32_t i = 0; i < num_agents; i++) {
        stub_hsa_agent_t *ag = stub_hsa_agent(agents[i]);
        if (!ag) return HSA_STATUS_ERROR_INVALID_AGENT;
        mask |= stub_hsa_access_bit(ag);
    }
    return stub_mem_set_access(ptr, mask) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR;
}

hsa_status_t hsa_amd_pointer_info(const void *ptr, hsa_amd_pointer_info_t *info, void *(*alloc)(size_t),
                                  uint32_t *num_agents_accessible, hsa_agent_t **accessible) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(ptr);
    HSA_CHECK_PTR(info);
    if (info->size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    hsa_amd_pointer_info_t out;
    memset(&out, 0, sizeof out);
    out.size = info->size < sizeof out ? info->size : (uint32_t)sizeof out;
    stub_alloc_t a;
    if (!stub_mem_find(ptr, &a)) {
        out.type = HSA_EXT_POINTER_TYPE_UNKNOWN;
        memcpy(info, &out, out.size);
        return HSA_STATUS_SUCCESS;
    }
    pthread_mutex_lock(&lock);
    mem_rec_t *r = rec_find(a.base);
    mem_rec_t rec = r ? *r : (mem_rec_t){0};
    pthread_mutex_unlock(&lock);
    out.type = a.kind == STUB_MEM_REGISTERED ? HSA_EXT_POINTER_TYPE_LOCKED : HSA_EXT_POINTER_TYPE_HSA;
    out.agentBaseAddress = out.hostBaseAddress = (void *)a.base;
    out.sizeInBytes = a.size;
    out.userData = rec.userdata;
    stub_hsa_agent_t *owner = a.device >= 0 ? stub_hsa_gpu_agent(a.device) : NULL;
    out.agentOwner = stub_hsa_agent_handle(owner ? owner : stub_hsa_cpu_agent());
    bool fine = rec.pool ? stub_pool_fine_grained(rec.pool) : a.kind != STUB_MEM_DEVICE;
    out.global_flags = fine ? HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED
                            : HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED;
    if (a.kind == STUB_MEM_KERNARG) out.global_flags |= HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT;
    memcpy(info, &out, out.size);
    if (!alloc || !num_agents_accessible || !accessible) return HSA_STATUS_SUCCESS;
    hsa_agent_t list[1 + STUB_MAX_DEVICES];
    uint32_t n = 0;
    if (a.access_mask & STUB_ACCESS_CPU) list[n++] = stub_hsa_agent_handle(stub_hsa_cpu_agent());
    for (int i = 0; i < stub_hsa_gpu_count(); i++)
        if (a.access_mask & (1ull << i)) list[n++] = stub_hsa_agent_handle(stub_hsa_gpu_agent(i));
    *accessible = alloc(sizeof(hsa_agent_t) * n);
    if (*accessible == NULL) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    memcpy(*accessible, list, sizeof(hsa_agent_t) * n);
    *num_agents_accessible = n;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_pointer_info_set_userdata(const void *ptr, void *userdata) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(ptr);
    pthread_mutex_lock(&lock);
    mem_rec_t *r = rec_find((uintptr_t)ptr);
    if (r) r->userdata = userdata;
    pthread_mutex_unlock(&lock);
    return r ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

/* ---- registration and locking ----------------------------------------- */

hsa_status_t hsa_memory_register(void *address, size_t size) {
    HSA_CHECK_OPEN();
    if (size == 0 && address != NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return HSA_STATUS_SUCCESS;   /* a no-op in ROCr: all host memory is usable */
}

hsa_status_t hsa_memory_deregister(void *address, size_t size) {
    HSA_CHECK_OPEN();
    (void)address;
    (void)size;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_assign_agent(void *ptr, hsa_agent_t agent, hsa_access_permission_t access) {
    HSA_CHECK_OPEN();
    if (ptr == NULL || access < HSA_ACCESS_PERMISSION_RO || access > HSA_ACCESS_PERMISSION_RW)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!stub_hsa_agent(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
    return HSA_STATUS_SUCCESS;
}

/* ROCr MemoryRegion::Lock on the system region: register the range and map
 * it to the listed GPUs (all GPUs for an empty list); a list of CPUs only
 * needs no registration.  The agent pointer is the host pointer here. */
static hsa_status_t lock_range(void *host_ptr, size_t size, hsa_agent_t *agents, int num_agent,
                               void **agent_ptr) {
    uint64_t gpus = 0;
    if (num_agent == 0) {
        gpus = all_gpu_bits();
    } else {
        for (int i = 0; i < num_agent; i++) {
            stub_hsa_agent_t *a = stub_hsa_agent(agents[i]);
            if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
            if (a->is_gpu) gpus |= 1ull << a->device;
        }
    }
    if (gpus == 0) {
        *agent_ptr = host_ptr;
        return HSA_STATUS_SUCCESS;
    }
    if (stub_mem_track(host_ptr, size, STUB_MEM_REGISTERED, -1, 0) != 0) return HSA_STATUS_ERROR;
    stub_mem_set_access(host_ptr, STUB_ACCESS_CPU | gpus);
    mem_rec_t r = {(uintptr_t)host_ptr, size, NULL, NULL, 0};
    if (!rec_add(&r)) {
        stub_mem_release(host_ptr, STUB_MEM_REGISTERED, NULL);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *agent_ptr = host_ptr;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_lock(void *host_ptr, size_t size, hsa_agent_t *agents, int num_agent,
                                 void **agent_ptr) {
    HSA_CHECK_OPEN();
    if (size == 0 || host_ptr == NULL || agent_ptr == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *agent_ptr = NULL;
    if ((agents != NULL && num_agent == 0) || (agents == NULL && num_agent != 0))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return lock_range(host_ptr, size, agents, num_agent, agent_ptr);
}

hsa_status_t hsa_amd_memory_lock_to_pool(void *host_ptr, size_t size, hsa_agent_t *agents, int num_agent,
                                         hsa_amd_memory_pool_t pool, uint32_t flags, void **agent_ptr) {
    HSA_CHECK_OPEN();
    if (size == 0 || host_ptr == NULL || agent_ptr == NULL || flags != 0)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *agent_ptr = NULL;
    if ((agents != NULL && num_agent == 0) || (agents == NULL && num_agent != 0))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_hsa_pool_t *p = stub_hsa_pool(pool.handle);
    if (!p || p->owner->is_gpu) return (hsa_status_t)HSA_STATUS_ERROR_INVALID_MEMORY_POOL;
    return lock_range(host_ptr, size, agents, num_agent, agent_ptr);
}

hsa_status_t hsa_amd_memory_unlock(void *host_ptr) {
    HSA_CHECK_OPEN();
    pthread_mutex_lock(&lock);
    mem_rec_t *r = rec_find((uintptr_t)host_ptr);
    bool mine = r && !r->pool;
    if (mine) rec_remove(r);
    pthread_mutex_unlock(&lock);
    if (mine) stub_mem_release(host_ptr, STUB_MEM_REGISTERED, NULL);
    return HSA_STATUS_SUCCESS;   /* ROCr ignores unlock failures */
}

/* ---- IPC export (hsa_ipc.c does the rest) ----------------------------- */

/* ROCr's IPCCreate checks the pointer is an allocation's base and len its
 * size (pointer info's sizeInBytes; the stub also takes it rounded to the
 * page, its allocation granule).  The first export moves the allocation onto
 * memory other processes can map (stub_ipc_share); later ones reuse it. */
hsa_status_t stub_hsa_mem_export(void *ptr, size_t len, stub_ipc_export_t *out) {
    pthread_mutex_lock(&lock);
    mem_rec_t *r = rec_find((uintptr_t)ptr);
    size_t rounded = r ? (r->size + STUB_PAGE_SIZE - 1) / STUB_PAGE_SIZE * STUB_PAGE_SIZE : 0;
    if (!r || !r->pool || (len != r->size && len != rounded)) {
        pthread_mutex_unlock(&lock);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    if (!r->ipc_fd) r->ipc_fd = stub_ipc_share(ptr, rounded);
    int fd = r->ipc_fd;
    size_t size = r->size;
    pthread_mutex_unlock(&lock);
    if (fd < 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    stub_alloc_t a;
    if (!stub_mem_find(ptr, &a)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *out = (stub_ipc_export_t){fd, size, a.kind, a.device};
    return HSA_STATUS_SUCCESS;
}
