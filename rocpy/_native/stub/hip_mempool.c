/* Memory pools and stream-ordered allocation (hipamd hip_mempool.cpp,
 * hip_mempool_impl.cpp at rocm-5.2.3).
 *
 * Each device has a default pool, which is also its current pool until
 * hipDeviceSetMemPool; hipMallocAsync allocates from the stream's device's
 * current pool, hipMallocFromPoolAsync from the one named.  As hip::MemoryPool
 * does, a pool has a busy heap (handed out: hipMemPoolAttrUsedMem*) and a
 * free heap (freed by hipFreeAsync, still reserved): hipFreeAsync moves the
 * block to the free heap at once, and a later allocation of at most its size
 * reuses it on the stream that freed it (stream order makes that safe) or,
 * with hipMemPoolReuseAllowOpportunistic, on any stream once the stream has
 * reached the free (Heap::FindMemory, IsSafeFind).  hipMemPoolTrimTo releases
 * free blocks whose free has been reached until the pool holds at most the
 * bytes asked (Heap::ReleaseAllMemory).
 *
 * When freed memory goes back to the device differs by release: 5.2 (and
 * clr up to 5.7) only at hipMemPoolTrimTo and pool destruction; ROCm/clr
 * 6.x also at every stream, event and device synchronisation, down to the
 * pool's hipMemPoolAttrReleaseThreshold (hip_stream.cpp, hip_event.cpp,
 * hip_device.cpp -> Device::ReleaseFreedMemory).  The stub does the latter
 * (hip_mempool_release_freed), so that a program that synchronises after
 * its frees holds no memory it freed, whichever release it meets.
 *
 * Pool handles are checked against a registry (hipamd casts any pointer).
 * Access from other devices follows ROCm/clr's MemoryPool::SetAccess/GetAccess
 * (5.2 returns hipSuccess and writes nothing). */
#include <string.h>

#include "hip_internal.h"

#define HIP_MAGIC_POOL 0x504f4f4cu

typedef struct stub_pool {
    uint32_t magic;
    int device;
    pthread_mutex_t lock;
    int32_t follow_events, opportunistic, internal_deps;
    uint64_t release_threshold;
    uint64_t used, used_high, reserved, reserved_high;   /* reserved: busy + free */
    hipMemAccessFlags access[STUB_MAX_DEVICES];
} stub_pool_t;

typedef struct pool_block {
    void *ptr;
    size_t size;
    stub_pool_t *pool;                /* NULL once its pool is destroyed */
    bool freed;                       /* in the free heap */
    uint64_t stream;                  /* id of the stream that freed it */
    hip_op_t *free_op;                /* the free's place in that stream */
} pool_block_t;

static hip_registry_t pools = HIP_REGISTRY_INIT;
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static pool_block_t *blocks;
static size_t nblocks, cap_blocks;

static stub_pool_t *default_pool[STUB_MAX_DEVICES];
static stub_pool_t *current_pool[STUB_MAX_DEVICES];
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;

static stub_pool_t *pool_new(int device) {
    stub_pool_t *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->magic = HIP_MAGIC_POOL;
    p->device = device;
    pthread_mutex_init(&p->lock, NULL);
    /* hip::MemoryPool's SharedState: every reuse policy on */
    p->follow_events = p->opportunistic = p->internal_deps = 1;
    p->access[device] = hipMemAccessFlagsProtReadWrite;
    if (!hip_registry_add(&pools, p)) {
        free(p);
        return NULL;
    }
    return p;
}

static void note_high(stub_pool_t *p);

/* hip::Device's graph memory pool (GetGraphMemoryPool): a pool of its own
 * per device, which no API hands out (hip_graph_mem.c) */
static stub_pool_t *graph_pool[STUB_MAX_DEVICES];

static void make_defaults(void) {
    for (int d = 0; d < hip_device_count(); d++) {
        current_pool[d] = default_pool[d] = pool_new(d);
        graph_pool[d] = pool_new(d);
    }
}

hipMemPool_t hip_mempool_graph_pool(int device) {
    pthread_once(&defaults_once, make_defaults);
    return device >= 0 && device < hip_device_count() ? (hipMemPool_t)(void *)graph_pool[device]
                                                      : NULL;
}

void hip_mempool_graph_use(int device, int64_t bytes) {
    stub_pool_t *p = (stub_pool_t *)(void *)hip_mempool_graph_pool(device);
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->used += (uint64_t)bytes;
    if (p->used > p->reserved) p->reserved = p->used;   /* freed memory is reused first */
    note_high(p);
    pthread_mutex_unlock(&p->lock);
}

void hip_mempool_graph_trim(int device) {
    stub_pool_t *p = (stub_pool_t *)(void *)hip_mempool_graph_pool(device);
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->reserved = p->used;
    pthread_mutex_unlock(&p->lock);
}

static stub_pool_t *pool_of(hipMemPool_t h) {
    pthread_once(&defaults_once, make_defaults);
    return h && hip_registry_contains(&pools, h) ? (stub_pool_t *)(void *)h : NULL;
}

static bool is_default(const stub_pool_t *p) {
    for (int d = 0; d < hip_device_count(); d++)
        if (default_pool[d] == p) return true;
    return false;
}

static pool_block_t *find_block(const void *ptr) {
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].ptr == ptr) return &blocks[i];
    return NULL;
}

static void drop_block(size_t i) {
    hip_op_unref(blocks[i].free_op);
    blocks[i] = blocks[--nblocks];
}

static void note_high(stub_pool_t *p) {
    if (p->used > p->used_high) p->used_high = p->used;
    if (p->reserved > p->reserved_high) p->reserved_high = p->reserved;
}

static hipError_t pool_alloc(stub_pool_t *p, hip_stream_t *s, void **ptr, size_t size) {
    pthread_mutex_lock(&blocks_lock);
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < nblocks; i++) {
        pool_block_t *b = &blocks[i];
        if (b->pool != p || !b->freed || b->size < size) continue;
        bool safe = b->stream == s->id || (p->opportunistic && hip_op_done(b->free_op));
        if (!safe) continue;
        b->freed = false;
        hip_op_unref(b->free_op);
        b->free_op = NULL;
        p->used += b->size;
        note_high(p);
        *ptr = b->ptr;
        pthread_mutex_unlock(&p->lock);
        pthread_mutex_unlock(&blocks_lock);
        return hipSuccess;
    }
    pthread_mutex_unlock(&p->lock);
    hipError_t status = hip_device_alloc(ptr, size, p->device, 0);
    if (status == hipSuccess && nblocks == cap_blocks) {
        size_t cap = cap_blocks ? cap_blocks * 2 : 64;
        pool_block_t *b = realloc(blocks, cap * sizeof *b);
        if (b) {
            blocks = b;
            cap_blocks = cap;
        } else {
            stub_mem_release(*ptr, STUB_MEM_DEVICE, NULL);
            *ptr = NULL;
            status = hipErrorOutOfMemory;
        }
    }
    if (status == hipSuccess) {
        blocks[nblocks++] = (pool_block_t){*ptr, size, p, false, 0, NULL};
        pthread_mutex_lock(&p->lock);
        p->used += size;
        p->reserved += size;
        note_high(p);
        pthread_mutex_unlock(&p->lock);
    }
    pthread_mutex_unlock(&blocks_lock);
    return status;
}

/* hipFree of pool memory: a busy block leaves its pool (hipamd frees the
 * memory object); false for a block already in a free heap (a second free). */
static bool pool_forget(void *ptr) {
    bool ok = true;
    pthread_mutex_lock(&blocks_lock);
    pool_block_t *b = find_block(ptr);
    if (b && b->freed) {
        ok = false;
    } else if (b) {
        if (b->pool) {
            pthread_mutex_lock(&b->pool->lock);
            b->pool->used -= b->size;
            b->pool->reserved -= b->size;
            pthread_mutex_unlock(&b->pool->lock);
        }
        drop_block((size_t)(b - blocks));
    }
    pthread_mutex_unlock(&blocks_lock);
    return ok;
}

bool hip_mempool_forget(void *ptr) { return pool_forget(ptr); }

void hip_mempool_device_reset(int device) {
    pthread_mutex_lock(&blocks_lock);
    for (size_t i = 0; i < nblocks;) {
        stub_alloc_t a;
        if (stub_mem_find(blocks[i].ptr, &a) && a.device == device) {
            stub_pool_t *p = blocks[i].pool;
            if (p) {
                pthread_mutex_lock(&p->lock);
                p->reserved -= blocks[i].size;
                if (!blocks[i].freed) p->used -= blocks[i].size;
                pthread_mutex_unlock(&p->lock);
            }
            drop_block(i);
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&blocks_lock);
}

hipError_t hipDeviceGetDefaultMemPool(hipMemPool_t *mem_pool, int device) {
    HIP_INIT_API();
    pthread_once(&defaults_once, make_defaults);
    if (!mem_pool) HIP_RETURN(hipErrorInvalidValue);
    if (device < 0 || device >= hip_device_count())
        HIP_RETURN(stub_rule(STUB_RULE_DEFAULT_MEM_POOL_INVALID_DEVICE) ? hipErrorInvalidDevice
                                                                        : hipErrorInvalidValue);
    *mem_pool = (hipMemPool_t)(void *)default_pool[device];
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceGetMemPool(hipMemPool_t *mem_pool, int device) {
    HIP_INIT_API();
    pthread_once(&defaults_once, make_defaults);
    if (!mem_pool || device < 0 || device >= hip_device_count()) HIP_RETURN(hipErrorInvalidValue);
    *mem_pool = (hipMemPool_t)(void *)current_pool[device];
    HIP_RETURN(hipSuccess);
}

/* a pool of another device is hipErrorInvalidValue (ROCm/clr; 5.2 takes it) */
hipError_t hipDeviceSetMemPool(int device, hipMemPool_t mem_pool) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!mem_pool || device < 0 || device >= hip_device_count()) HIP_RETURN(hipErrorInvalidValue);
    if (!p) HIP_RETURN(hipErrorInvalidValue);
    if (p->device != device && stub_rule(STUB_RULE_SET_MEM_POOL_CHECKS_DEVICE))
        HIP_RETURN(hipErrorInvalidDevice);
    current_pool[device] = p;
    HIP_RETURN(hipSuccess);
}

/* only device locations; a null props is hipErrorInvalidValue (5.2 reads it) */
hipError_t hipMemPoolCreate(hipMemPool_t *mem_pool, const hipMemPoolProps *pool_props) {
    HIP_INIT_API();
    pthread_once(&defaults_once, make_defaults);
    if (!mem_pool || !pool_props) HIP_RETURN(hipErrorInvalidValue);
    if (pool_props->location.type != hipMemLocationTypeDevice || pool_props->location.id < 0 ||
        pool_props->location.id >= hip_device_count())
        HIP_RETURN(hipErrorInvalidValue);
    stub_pool_t *p = pool_new(pool_props->location.id);
    if (!p) HIP_RETURN(hipErrorOutOfMemory);
    *mem_pool = (hipMemPool_t)(void *)p;
    HIP_RETURN(hipSuccess);
}

/* Release free blocks of p whose free the stream has reached while p holds
 * more than `keep` bytes (Heap::ReleaseAllMemory); call with blocks_lock. */
static void release_free(stub_pool_t *p, uint64_t keep, bool wait) {
    for (size_t i = 0; i < nblocks;) {
        pool_block_t *b = &blocks[i];
        pthread_mutex_lock(&p->lock);
        bool over = p->reserved > keep;
        pthread_mutex_unlock(&p->lock);
        if (!over) return;
        if (b->pool != p || !b->freed) {
            i++;
            continue;
        }
        if (wait) hip_op_wait(b->free_op);
        if (!hip_op_done(b->free_op)) {
            i++;
            continue;
        }
        pthread_mutex_lock(&p->lock);
        p->reserved -= b->size;
        pthread_mutex_unlock(&p->lock);
        stub_mem_release(b->ptr, STUB_MEM_DEVICE, NULL);
        drop_block(i);
    }
}

/* MemoryPool::ReleaseFreedMemory on destruction (waiting for the frees);
 * blocks still handed out outlive the pool (its references in hipamd) and
 * are freed by hipFree or hipFreeAsync as plain device memory.  The current
 * pool falls back to the default; destroying a default pool is
 * hipErrorInvalidValue (ROCm/clr), a destroyed pool too (5.2 would release
 * it again). */
hipError_t hipMemPoolDestroy(hipMemPool_t mem_pool) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!p || is_default(p)) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_registry_remove(&pools, p)) HIP_RETURN(hipErrorInvalidValue);
    if (current_pool[p->device] == p) current_pool[p->device] = default_pool[p->device];
    pthread_mutex_lock(&blocks_lock);
    release_free(p, 0, true);
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i].pool == p) blocks[i].pool = NULL;
    pthread_mutex_unlock(&blocks_lock);
    pthread_mutex_destroy(&p->lock);
    free(p);
    HIP_RETURN(hipSuccess);
}

hipError_t hipMallocAsync(void **dev_ptr, size_t size, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    if (!dev_ptr || size == 0 || hip_stream_resolve(stream, &s) != hipSuccess)
        HIP_RETURN(hipErrorInvalidValue);
    pthread_once(&defaults_once, make_defaults);
    HIP_RETURN(pool_alloc(current_pool[s->device], s, dev_ptr, size));
}

hipError_t hipMallocFromPoolAsync(void **dev_ptr, size_t size, hipMemPool_t mem_pool,
                                  hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    stub_pool_t *p = pool_of(mem_pool);
    if (!dev_ptr || size == 0 || !p || hip_stream_resolve(stream, &s) != hipSuccess)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(pool_alloc(p, s, dev_ptr, size));
}

/* hipamd's hipFreeAsync: pool memory moves to its pool's free heap, the free
 * marked in the stream (MemoryPool::FreeMemory); other device memory is
 * freed at once, after the devices finish (ihipFree). */
hipError_t hipFreeAsync(void *dev_ptr, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    if (!dev_ptr || hip_stream_resolve(stream, &s) != hipSuccess) HIP_RETURN(hipErrorInvalidValue);
    stub_alloc_t a;
    if (stub_mem_find(dev_ptr, &a) && a.base == (uintptr_t)dev_ptr && a.tag)
        HIP_RETURN(hip_graph_alloc_free(dev_ptr, s));
    if (!stub_mem_find(dev_ptr, &a) || a.base != (uintptr_t)dev_ptr || a.kind != STUB_MEM_DEVICE ||
        a.tag)
        HIP_RETURN(hipErrorInvalidValue);
    hip_op_t *op = hip_op_new(NULL, 0);       /* a marker: where the free is */
    if (!op) HIP_RETURN(hipErrorOutOfMemory);
    pthread_mutex_lock(&blocks_lock);
    pool_block_t *b = find_block(dev_ptr);
    if (b && b->freed) {                       /* freed twice */
        pthread_mutex_unlock(&blocks_lock);
        hip_op_unref(op);
        HIP_RETURN(hipErrorInvalidValue);
    }
    if (!b || !b->pool) {
        if (b) drop_block((size_t)(b - blocks));
        pthread_mutex_unlock(&blocks_lock);
        hip_op_unref(op);
        hip_device_sync(a.device);
        HIP_RETURN(stub_mem_release(dev_ptr, STUB_MEM_DEVICE, NULL) ? hipSuccess
                                                                   : hipErrorInvalidValue);
    }
    b->freed = true;
    b->stream = s->id;
    b->free_op = hip_op_ref(op);
    pthread_mutex_lock(&b->pool->lock);
    b->pool->used -= b->size;
    pthread_mutex_unlock(&b->pool->lock);
    pthread_mutex_unlock(&blocks_lock);
    hip_stream_submit(s, op);
    HIP_RETURN(hipSuccess);
}

static void release_to_threshold(void *h, void *ctx) {
    stub_pool_t *p = h;
    if (p->device == *(int *)ctx) release_free(p, p->release_threshold, false);
}

void hip_mempool_release_freed(int device) {
    pthread_once(&defaults_once, make_defaults);
    pthread_mutex_lock(&blocks_lock);
    hip_registry_foreach(&pools, release_to_threshold, &device);
    pthread_mutex_unlock(&blocks_lock);
}

/* free blocks whose free the stream has not reached stay (hip-tests
 * hipMemPoolApi.cc:281: "Trim must be a nop because execution isn't done") */
hipError_t hipMemPoolTrimTo(hipMemPool_t mem_pool, size_t min_bytes_to_hold) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!p) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&blocks_lock);
    release_free(p, min_bytes_to_hold, false);
    pthread_mutex_unlock(&blocks_lock);
    HIP_RETURN(hipSuccess);
}

/* MemoryPool::SetAttribute: the reuse flags and the threshold are set; the
 * high-water marks only reset to 0 (the current figures never) */
hipError_t hipMemPoolSetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void *value) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!p || !value) HIP_RETURN(hipErrorInvalidValue);
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&p->lock);
    switch (attr) {
    case hipMemPoolReuseFollowEventDependencies: p->follow_events = *(int32_t *)value; break;
    case hipMemPoolReuseAllowOpportunistic: p->opportunistic = *(int32_t *)value; break;
    case hipMemPoolReuseAllowInternalDependencies: p->internal_deps = *(int32_t *)value; break;
    case hipMemPoolAttrReleaseThreshold: p->release_threshold = *(uint64_t *)value; break;
    case hipMemPoolAttrReservedMemHigh:
        if (*(uint64_t *)value != 0) status = hipErrorInvalidValue;
        else p->reserved_high = p->reserved;
        break;
    case hipMemPoolAttrUsedMemHigh:
        if (*(uint64_t *)value != 0) status = hipErrorInvalidValue;
        else p->used_high = p->used;
        break;
    default: status = hipErrorInvalidValue;   /* the current figures, unknown attributes */
    }
    pthread_mutex_unlock(&p->lock);
    HIP_RETURN(status);
}

hipError_t hipMemPoolGetAttribute(hipMemPool_t mem_pool, hipMemPoolAttr attr, void *value) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!p || !value) HIP_RETURN(hipErrorInvalidValue);
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&p->lock);
    switch (attr) {
    case hipMemPoolReuseFollowEventDependencies: *(int32_t *)value = p->follow_events; break;
    case hipMemPoolReuseAllowOpportunistic: *(int32_t *)value = p->opportunistic; break;
    case hipMemPoolReuseAllowInternalDependencies: *(int32_t *)value = p->internal_deps; break;
    case hipMemPoolAttrReleaseThreshold: *(uint64_t *)value = p->release_threshold; break;
    case hipMemPoolAttrReservedMemCurrent: *(uint64_t *)value = p->reserved; break;
    case hipMemPoolAttrUsedMemCurrent: *(uint64_t *)value = p->used; break;
    case hipMemPoolAttrReservedMemHigh: *(uint64_t *)value = p->reserved_high; break;
    case hipMemPoolAttrUsedMemHigh: *(uint64_t *)value = p->used_high; break;
    default: status = hipErrorInvalidValue;
    }
    pthread_mutex_unlock(&p->lock);
    HIP_RETURN(status);
}

/* ROCm/clr: every descriptor names a device; the pool's own device must
 * keep read-write access (hipErrorInvalidDevice otherwise). */
hipError_t hipMemPoolSetAccess(hipMemPool_t mem_pool, const hipMemAccessDesc *desc_list,
                               size_t count) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!p || (count && !desc_list)) HIP_RETURN(hipErrorInvalidValue);
    for (size_t i = 0; i < count; i++) {
        const hipMemAccessDesc *d = &desc_list[i];
        if (d->location.type != hipMemLocationTypeDevice || d->location.id < 0 ||
            d->location.id >= hip_device_count())
            HIP_RETURN(hipErrorInvalidDevice);
        if (d->flags != hipMemAccessFlagsProtNone && d->flags != hipMemAccessFlagsProtRead &&
            d->flags != hipMemAccessFlagsProtReadWrite)
            HIP_RETURN(hipErrorInvalidValue);
        if (d->location.id == p->device && d->flags != hipMemAccessFlagsProtReadWrite)
            HIP_RETURN(hipErrorInvalidDevice);
    }
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < count; i++) p->access[desc_list[i].location.id] = desc_list[i].flags;
    pthread_mutex_unlock(&p->lock);
    HIP_RETURN(hipSuccess);
}

hipError_t hipMemPoolGetAccess(hipMemAccessFlags *flags, hipMemPool_t mem_pool,
                               hipMemLocation *location) {
    HIP_INIT_API();
    stub_pool_t *p = pool_of(mem_pool);
    if (!flags || !p || !location) HIP_RETURN(hipErrorInvalidValue);
    if (location->type != hipMemLocationTypeDevice || location->id < 0 ||
        location->id >= hip_device_count())
        HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&p->lock);
    *flags = p->access[location->id];
    pthread_mutex_unlock(&p->lock);
    HIP_RETURN(hipSuccess);
}
