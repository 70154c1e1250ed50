/* Virtual memory (hsa_amd_vmem_*, hsa_ext_amd.h 1.4+, ROCm 6.0): reserved address
 * ranges, physical memory handles, mappings and per-agent access, after ROCr's
 * Runtime::VMemory* (runtime.cpp) and their statuses.
 *
 * A reservation is an inaccessible anonymous mapping (mmap PROT_NONE: the
 * address space is really held); a handle's memory is a memfd (what the GPU
 * BO would be); a map puts it at the address with no agent's access (ROCr
 * maps with HSA_ACCESS_PERMISSION_NONE) and set_access grants it: a GPU's
 * permission is what the stub's kernels and copy engines check
 * (stub_hsa_accessible).  The CPU's is recorded but not enforced: the pages
 * stay readable and writable, because the stub's GPUs are CPU threads that
 * must reach them (a CPU touching memory it was not granted would fault on
 * hardware, and does not here).  As in ROCr a map uses the handle from its
 * start: `in_offset` is not used (VMemoryHandleMap exports the BO at offset 0).
 * Export and import go through the memfd (a dma-buf in ROCr); an import
 * outside the exporting process is not modelled (the stub has no shared pool
 * identity): it is HSA_STATUS_ERROR_INVALID_ARGUMENT there. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* memfd_create, MAP_FIXED_NOREPLACE */
#endif
#include "hsa_internal.h"

#ifdef ROCPY_HAVE_hsa_amd_vmem_address_reserve

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define VM_PAGE 4096u
#define MAX_AGENTS (1 + STUB_MAX_DEVICES)

typedef struct reservation {
    uintptr_t base;
    size_t size;
    uint32_t use_count;
    struct reservation *next;
} reservation_t;

typedef struct mem_handle {
    int fd;
    size_t size;
    const stub_hsa_pool_t *pool;
    hsa_amd_memory_type_t type;
    uint32_t ref_count, use_count;
    dev_t dev;
    ino_t ino;
    struct mem_handle *next;
} mem_handle_t;

typedef struct mapping {
    uintptr_t va;
    size_t size;
    reservation_t *reservation;
    mem_handle_t *handle;
    bool allowed[MAX_AGENTS];
    hsa_access_permission_t perms[MAX_AGENTS];
    struct mapping *next;
} mapping_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static reservation_t *reservations;
static mem_handle_t *handles;
static mapping_t *mappings;

static int index_of(const stub_hsa_agent_t *a) { return a->is_gpu ? 1 + a->device : 0; }

static reservation_t *reservation_covering(uintptr_t va, size_t size) {
    for (reservation_t *r = reservations; r; r = r->next)
        if (r->base <= va && va + size <= r->base + r->size) return r;
    return NULL;
}

static mem_handle_t *handle_of(uint64_t h) {
    for (mem_handle_t *m = handles; m; m = m->next)
        if ((uint64_t)(uintptr_t)m == h) return m;
    return NULL;
}

static void free_handle(mem_handle_t *m) {
    for (mem_handle_t **p = &handles; *p; p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            break;
        }
    close(m->fd);
    free(m);
}

hsa_status_t hsa_amd_vmem_address_reserve_align(void **va, size_t size, uint64_t address, uint64_t alignment,
                                                uint64_t flags) {
    HSA_CHECK_OPEN();
    (void)flags;
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* IS_ZERO */
    HSA_CHECK_PTR(va);
    if (!alignment) alignment = VM_PAGE;
    if (alignment & (alignment - 1)) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;   /* the thunk refuses */
    size_t span = size + (alignment > VM_PAGE ? alignment : 0);
    /* the address asked for first (FixedAddress), then anywhere */
    void *p = mmap((void *)(uintptr_t)address, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    uintptr_t base = (uintptr_t)p;
    if (address && base != address && address % alignment == 0 &&
        mmap((void *)(uintptr_t)address, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
             MAP_FIXED_NOREPLACE, -1, 0) == (void *)(uintptr_t)address) {
        munmap(p, span);
        base = address;
        span = size;
    } else {
        uintptr_t aligned = (base + alignment - 1) & ~(uintptr_t)(alignment - 1);
        if (aligned > base) munmap(p, aligned - base);
        if (base + span > aligned + size) munmap((void *)(aligned + size), base + span - aligned - size);
        base = aligned;
    }
    reservation_t *r = malloc(sizeof *r);
    if (!r) {
        munmap((void *)base, size);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *r = (reservation_t){base, size, 0, NULL};
    pthread_mutex_lock(&lock);
    r->next = reservations;
    reservations = r;
    pthread_mutex_unlock(&lock);
    *va = (void *)base;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_vmem_address_reserve(void **va, size_t size, uint64_t address, uint64_t flags) {
    return hsa_amd_vmem_address_reserve_align(va, size, address, 0, flags);
}

hsa_status_t hsa_amd_vmem_address_free(void *va, size_t size) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(va);
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    reservation_t **p = &reservations;
    while (*p && (*p)->base != (uintptr_t)va) p = &(*p)->next;
    hsa_status_t st = HSA_STATUS_SUCCESS;
    reservation_t *r = *p;
    if (!r) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
    else if (r->size != size) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    else if (r->use_count) st = HSA_STATUS_ERROR_RESOURCE_FREE;   /* still mapped */
    else {
        *p = r->next;
        munmap(va, size);
        free(r);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

/* ROCr: local (device) memory only, whole pages of the pool */
hsa_status_t hsa_amd_vmem_handle_create(hsa_amd_memory_pool_t pool, size_t size, hsa_amd_memory_type_t type,
                                        uint64_t flags, hsa_amd_vmem_alloc_handle_t *memory_handle) {
    HSA_CHECK_OPEN();
    (void)flags;
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (type != MEMORY_TYPE_NONE && type != MEMORY_TYPE_PINNED) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    const stub_hsa_pool_t *p = stub_hsa_pool(pool.handle);
    if (!p) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (stub_pool_is_system(p)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* !IsLocalMemory() */
    size_t granule = 0;
    stub_pool_region_info(p, HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, &granule);
    if (!granule || size % granule) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    HSA_CHECK_PTR(memory_handle);
    if (size > stub_pool_size(p)) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    int fd = (int)syscall(SYS_memfd_create, "rocpy-stub-vmem", 0);
    if (fd < 0) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    struct stat sb;
    mem_handle_t *m = malloc(sizeof *m);
    if (!m || ftruncate(fd, (off_t)size) != 0 || fstat(fd, &sb) != 0) {
        free(m);
        close(fd);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *m = (mem_handle_t){fd, size, p, type, 1, 0, sb.st_dev, sb.st_ino, NULL};
    pthread_mutex_lock(&lock);
    m->next = handles;
    handles = m;
    pthread_mutex_unlock(&lock);
    memory_handle->handle = (uint64_t)(uintptr_t)m;
    return HSA_STATUS_SUCCESS;
}

/* the memory goes with the last reference once nothing maps it */
hsa_status_t hsa_amd_vmem_handle_release(hsa_amd_vmem_alloc_handle_t memory_handle) {
    HSA_CHECK_OPEN();
    pthread_mutex_lock(&lock);
    mem_handle_t *m = handle_of(memory_handle.handle);
    hsa_status_t st = HSA_STATUS_SUCCESS;
    if (!m || !m->ref_count) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
    else if (--m->ref_count == 0 && m->use_count == 0) free_handle(m);
    pthread_mutex_unlock(&lock);
    return st;
}

hsa_status_t hsa_amd_vmem_map(void *va, size_t size, size_t in_offset, hsa_amd_vmem_alloc_handle_t memory_handle,
                              uint64_t flags) {
    HSA_CHECK_OPEN();
    (void)in_offset;
    (void)flags;
    HSA_CHECK_PTR(va);
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    uintptr_t a = (uintptr_t)va;
    pthread_mutex_lock(&lock);
    hsa_status_t st = HSA_STATUS_SUCCESS;
    reservation_t *r = reservation_covering(a, size);
    mem_handle_t *m = handle_of(memory_handle.handle);
    mapping_t *mp = NULL;
    if (!r) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (mapping_t *x = mappings; x && st == HSA_STATUS_SUCCESS; x = x->next)
        if (x->va < a + size && a < x->va + x->size) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* mapped already */
    if (st == HSA_STATUS_SUCCESS && !m) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (st == HSA_STATUS_SUCCESS && size > m->size) st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;   /* export fails */
    if (st == HSA_STATUS_SUCCESS && !(mp = calloc(1, sizeof *mp))) st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    if (st == HSA_STATUS_SUCCESS &&
        mmap(va, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m->fd, 0) == MAP_FAILED)
        st = HSA_STATUS_ERROR;
    if (st == HSA_STATUS_SUCCESS) {
        mp->va = a;
        mp->size = size;
        mp->reservation = r;
        mp->handle = m;
        mp->next = mappings;
        mappings = mp;
        r->use_count++;
        m->use_count++;
    } else {
        free(mp);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

hsa_status_t hsa_amd_vmem_unmap(void *va, size_t size) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(va);
    if (size == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    mapping_t **p = &mappings;
    while (*p && (*p)->va != (uintptr_t)va) p = &(*p)->next;
    mapping_t *mp = *p;
    hsa_status_t st = HSA_STATUS_SUCCESS;
    if (!mp) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
    else if (mp->size != size) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    else if (mmap(va, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
        st = HSA_STATUS_ERROR;   /* back to a bare reservation */
    else {
        *p = mp->next;
        mp->reservation->use_count--;
        mem_handle_t *m = mp->handle;
        if (--m->use_count == 0 && m->ref_count == 0) free_handle(m);
        free(mp);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

static void perm_grant(mapping_t *mp, int agent, hsa_access_permission_t perm) {
    mp->allowed[agent] = true;
    mp->perms[agent] = perm;
}

static void perm_revoke(mapping_t *mp, int agent) {
    mp->allowed[agent] = false;
    mp->perms[agent] = HSA_ACCESS_PERMISSION_NONE;
}

/* ROCr Runtime::VMemorySetAccess: every chunk of [va, va+size) must be a whole
 * mapping; an agent whose permission changes also drops the agents not
 * listed (its loop over allowed_agents), one listed with the same
 * permission is left as it is. */
hsa_status_t hsa_amd_vmem_set_access(void *va, size_t size, const hsa_amd_memory_access_desc_t *desc,
                                     size_t desc_cnt) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(va);
    HSA_CHECK_PTR(desc);
    if (desc_cnt == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    int idx[MAX_AGENTS * 4];
    if (desc_cnt > MAX_AGENTS * 4) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < desc_cnt; i++) {
        stub_hsa_agent_t *ag = stub_hsa_agent(desc[i].agent_handle);
        if (!ag) return HSA_STATUS_ERROR_INVALID_AGENT;
        idx[i] = index_of(ag);
    }
    uintptr_t a = (uintptr_t)va;
    pthread_mutex_lock(&lock);
    hsa_status_t st = HSA_STATUS_SUCCESS;
    mapping_t *chunks[64];
    size_t n = 0;
    if (!reservation_covering(a, size)) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uintptr_t at = a; st == HSA_STATUS_SUCCESS && at < a + size;) {
        mapping_t *mp = mappings;
        while (mp && mp->va != at) mp = mp->next;
        if (!mp || n == 64) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
        else chunks[n++] = mp, at += mp->size;
    }
    for (size_t i = 0; st == HSA_STATUS_SUCCESS && i < desc_cnt; i++)
        for (size_t c = 0; c < n; c++) {
            mapping_t *mp = chunks[c];
            if (!mp->allowed[idx[i]]) {
                perm_grant(mp, idx[i], desc[i].permissions);
                continue;
            }
            if (mp->perms[idx[i]] == desc[i].permissions) continue;
            perm_grant(mp, idx[i], desc[i].permissions);
            for (int ag = 0; ag < MAX_AGENTS; ag++) {
                bool listed = false;
                for (size_t j = 0; j < desc_cnt; j++) listed = listed || idx[j] == ag;
                if (mp->allowed[ag] && !listed) perm_revoke(mp, ag);
            }
        }
    pthread_mutex_unlock(&lock);
    return st;
}

hsa_status_t hsa_amd_vmem_get_access(void *va, hsa_access_permission_t *perms, hsa_agent_t agent_handle) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(va);
    HSA_CHECK_PTR(perms);
    *perms = HSA_ACCESS_PERMISSION_NONE;
    uintptr_t a = (uintptr_t)va;
    pthread_mutex_lock(&lock);
    mapping_t *mp = mappings;
    /* ROCr's test includes the end address itself */
    while (mp && !(mp->va <= a && a <= mp->va + mp->size)) mp = mp->next;
    hsa_status_t st = HSA_STATUS_SUCCESS;
    stub_hsa_agent_t *ag = stub_hsa_agent(agent_handle);
    if (!mp) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
    else if (!ag || !ag->is_gpu) st = HSA_STATUS_ERROR_INVALID_AGENT;
    else if (mp->allowed[index_of(ag)]) *perms = mp->perms[index_of(ag)];
    pthread_mutex_unlock(&lock);
    return st;
}

hsa_status_t hsa_amd_vmem_export_shareable_handle(int *dmabuf_fd, hsa_amd_vmem_alloc_handle_t handle,
                                                  uint64_t flags) {
    HSA_CHECK_OPEN();
    (void)flags;
    HSA_CHECK_PTR(dmabuf_fd);
    *dmabuf_fd = -1;
    pthread_mutex_lock(&lock);
    mem_handle_t *m = handle_of(handle.handle);
    hsa_status_t st = HSA_STATUS_SUCCESS;
    if (!m) st = HSA_STATUS_ERROR_INVALID_ALLOCATION;
    else if ((*dmabuf_fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0)) < 0) st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    pthread_mutex_unlock(&lock);
    return st;
}

/* ROCr: no IS_OPEN here; IS_VALID_FD */
hsa_status_t hsa_amd_vmem_import_shareable_handle(int dmabuf_fd, hsa_amd_vmem_alloc_handle_t *handle) {
    HSA_CHECK_PTR(handle);
    struct stat sb;
    if (dmabuf_fd < 0 || fstat(dmabuf_fd, &sb) != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    mem_handle_t *src = handles;
    while (src && !(src->dev == sb.st_dev && src->ino == sb.st_ino)) src = src->next;
    hsa_status_t st = HSA_STATUS_SUCCESS;
    mem_handle_t *m = NULL;
    int fd = -1;
    if (!src) st = HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* not this process's: see the top */
    else if (!(m = malloc(sizeof *m)) || (fd = fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0)) < 0) st = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    if (st == HSA_STATUS_SUCCESS) {
        *m = (mem_handle_t){fd, src->size, src->pool, src->type, 1, 0, sb.st_dev, sb.st_ino, handles};
        handles = m;
        handle->handle = (uint64_t)(uintptr_t)m;
    } else {
        free(m);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

/* the handle mapped at addr, one reference more */
hsa_status_t hsa_amd_vmem_retain_alloc_handle(hsa_amd_vmem_alloc_handle_t *memory_handle, void *addr) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(addr);
    HSA_CHECK_PTR(memory_handle);
    uintptr_t a = (uintptr_t)addr;
    pthread_mutex_lock(&lock);
    mapping_t *mp = mappings;
    while (mp && !(mp->va <= a && a < mp->va + mp->size)) mp = mp->next;
    if (mp) {
        mp->handle->ref_count++;
        memory_handle->handle = (uint64_t)(uintptr_t)mp->handle;
    }
    pthread_mutex_unlock(&lock);
    return mp ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ALLOCATION;
}

hsa_status_t hsa_amd_vmem_get_alloc_properties_from_handle(hsa_amd_vmem_alloc_handle_t memory_handle,
                                                           hsa_amd_memory_pool_t *pool, hsa_amd_memory_type_t *type) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(pool);
    HSA_CHECK_PTR(type);
    pthread_mutex_lock(&lock);
    mem_handle_t *m = handle_of(memory_handle.handle);
    if (m) {
        pool->handle = stub_hsa_pool_handle(m->pool);
        *type = m->type;
    }
    pthread_mutex_unlock(&lock);
    return m ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ALLOCATION;
}

bool stub_hsa_vmem_supported(void) { return true; }

bool stub_hsa_vmem_gpu_access(const stub_hsa_agent_t *agent, const void *ptr, size_t size) {
    uintptr_t a = (uintptr_t)ptr;
    bool ok = false;
    pthread_mutex_lock(&lock);
    for (mapping_t *mp = mappings; mp; mp = mp->next)
        if (mp->va <= a && a + size <= mp->va + mp->size) {
            ok = mp->allowed[index_of(agent)] && mp->perms[index_of(agent)] != HSA_ACCESS_PERMISSION_NONE;
            break;
        }
    pthread_mutex_unlock(&lock);
    return ok;
}

#else

bool stub_hsa_vmem_supported(void) { return false; }

bool stub_hsa_vmem_gpu_access(const stub_hsa_agent_t *agent, const void *ptr, size_t size) {
    (void)agent;
    (void)ptr;
    (void)size;
    return false;
}

#endif
