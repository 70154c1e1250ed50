/* AQL queues: creation and destruction with ROCr's checks (hsa.cpp
 * hsa_queue_create, GpuAgent::QueueCreate, AqlQueue), the read/write index
 * operations in every memory order, inactivation, priority, CU masks.
 * The packet processor is in hsa_aql.c. */
#include "hsa_queue.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PRIVATE_SEGMENT 262128u   /* ROCr: per-lane scratch limit */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static stub_queue_t *queues;
static _Atomic uint64_t next_id;

/* caller holds registry_lock */
static stub_queue_t **find(const hsa_queue_t *handle) {
    stub_queue_t **p = &queues;
    while (*p && &(*p)->q != handle) p = &(*p)->next;
    return p;
}

static stub_queue_t *lookup(const hsa_queue_t *handle) {
    pthread_mutex_lock(&registry_lock);
    stub_queue_t *q = *find(handle);
    pthread_mutex_unlock(&registry_lock);
    return q;
}

static uint32_t count_for(const stub_hsa_agent_t *agent) {
    uint32_t n = 0;
    for (stub_queue_t *q = queues; q; q = q->next) n += q->agent == agent;
    return n;
}

static uint32_t cu_dwords(const stub_hsa_agent_t *agent) { return (agent->dev->compute_units + 31) / 32; }

/* ---- HSA_CU_MASK (ROCr Flag::parse_masks, read once, as at ROCr's init) -------------
 * "gpu_list:cu_list[;...]", lists of base-10 ids and ranges ("0,2-4"), or a
 * cu part in hex ("0x337F", least significant dword last); a malformed set
 * ends the parse (the sets before it stay), ids past the limits are dropped,
 * a GPU named twice ends it too. */
static uint32_t global_masks[STUB_MAX_DEVICES][STUB_CU_MASK_DWORDS];
static uint32_t global_dwords[STUB_MAX_DEVICES];   /* 0: no mask for that GPU */
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

/* ids of "a,b-c" up to max into out (sorted, no duplicates); 0 on bad syntax */
static uint32_t elements(const char *s, size_t len, uint32_t max, uint32_t *out, uint32_t cap) {
    uint32_t n = 0;
    bool seen[STUB_CU_MASK_DWORDS * 32 + STUB_MAX_DEVICES + 1] = {false};
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != ',') j++;
        char item[32];
        if (j - i == 0 || j - i >= sizeof item) return 0;
        memcpy(item, s + i, j - i);
        item[j - i] = 0;
        char *dash = strchr(item, '-'), *end;
        if (dash && strchr(dash + 1, '-')) return 0;
        if (dash) *dash = 0;
        unsigned long a = strtoul(item, &end, 10);
        if (*end || end == item) return 0;
        unsigned long b = a;
        if (dash) {
            b = strtoul(dash + 1, &end, 10);
            if (*end || end == dash + 1 || b < a) return 0;
        }
        if (b > max) b = max;
        for (unsigned long k = a; k <= b; k++) {
            if (k >= sizeof seen || seen[k] || n == cap) return 0;   /* duplicate */
            seen[k] = true;
            out[n++] = (uint32_t)k;
        }
        i = j + 1;
    }
    return n;
}

static void parse_global_masks(void) {
    const char *env = getenv("HSA_CU_MASK");
    if (!env) return;
    char var[1024];
    size_t n = 0;
    for (const char *c = env; *c && n + 1 < sizeof var; c++)
        if (!isspace((unsigned char)*c)) var[n++] = (char)toupper((unsigned char)*c);
    var[n] = 0;
    uint32_t max_gpu = (uint32_t)stub_hsa_gpu_count(), max_cu = 0;
    for (int g = 0; g < stub_hsa_gpu_count(); g++)
        if (stub_device(g)->compute_units > max_cu) max_cu = stub_device(g)->compute_units;
    if (max_cu > STUB_CU_MASK_DWORDS * 32 - 1) max_cu = STUB_CU_MASK_DWORDS * 32 - 1;
    for (char *set = var; *set;) {
        char *next = strchr(set, ';');
        if (next) *next = 0;
        char *colon = strchr(set, ':');
        if (!colon || strchr(colon + 1, ':')) return;
        *colon = 0;
        const char *cus = colon + 1;
        uint32_t mask[STUB_CU_MASK_DWORDS] = {0}, dwords = 0;
        if (cus[0] && cus[1] == 'X') {
            if (cus[0] != '0') return;
            const char *hex = cus + 2;
            size_t len = strlen(hex);
            for (size_t k = 0; k < len; k++) if (!isxdigit((unsigned char)hex[k])) return;
            while (len && dwords < STUB_CU_MASK_DWORDS) {
                size_t take = len < 8 ? len : 8;
                len -= take;
                char chunk[9] = {0};
                memcpy(chunk, hex + len, take);
                mask[dwords++] = (uint32_t)strtoul(chunk, NULL, 16);
            }
            uint32_t max_dwords = max_cu / 32 + 1;
            if (dwords > max_dwords) dwords = max_dwords;
            while (dwords && !mask[dwords - 1]) dwords--;
            if (!dwords) return;   /* 0x0 is an error */
        } else {
            uint32_t ids[STUB_CU_MASK_DWORDS * 32];
            uint32_t k = elements(cus, strlen(cus), max_cu, ids, STUB_CU_MASK_DWORDS * 32);
            if (!k) return;
            uint32_t top = 0;
            for (uint32_t i = 0; i < k; i++) {
                mask[ids[i] / 32] |= 1u << (ids[i] % 32);
                if (ids[i] > top) top = ids[i];
            }
            dwords = top / 32 + 1;
        }
        uint32_t gpus[STUB_MAX_DEVICES + 1];
        uint32_t g = elements(set, strlen(set), max_gpu, gpus, STUB_MAX_DEVICES + 1);
        if (!g) return;
        for (uint32_t i = 0; i < g; i++)
            if (gpus[i] < STUB_MAX_DEVICES && global_dwords[gpus[i]]) return;   /* repeated */
        for (uint32_t i = 0; i < g; i++) {
            if (gpus[i] >= STUB_MAX_DEVICES) continue;
            memcpy(global_masks[gpus[i]], mask, sizeof mask);
            global_dwords[gpus[i]] = dwords;
        }
        if (!next) break;
        set = next + 1;
    }
}

/* ROCr AqlQueue::SetCUMasking: the mask to apply; *clipped: CUs the global mask took */
static uint32_t effective_mask(const stub_hsa_agent_t *agent, uint32_t count, const uint32_t *user,
                               uint32_t out[STUB_CU_MASK_DWORDS], bool *clipped) {
    pthread_once(&global_once, parse_global_masks);
    uint32_t cus = agent->dev->compute_units, dwords = cu_dwords(agent);
    uint32_t n = count == 0 ? dwords : count / 32;
    memset(out, 0, STUB_CU_MASK_DWORDS * sizeof *out);
    *clipped = false;
    const uint32_t *global = global_masks[agent->device];
    uint32_t gdw = global_dwords[agent->device];
    uint32_t limit = n < dwords ? n : dwords;
    if (gdw && gdw < limit) limit = gdw;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = count == 0 ? UINT32_MAX : user[i];
        if (i >= limit) {
            if (gdw && v) *clipped = true;   /* only with a global mask: else silently cut */
            continue;
        }
        if (gdw) {
            if (v & ~global[i]) *clipped = true;
            v &= global[i];
        }
        out[i] = v;
    }
    if (limit == dwords && cus % 32) out[dwords - 1] &= (1u << (cus % 32)) - 1;
    return limit;
}

/* ROCr AqlQueue constructor: SetCUMasking(0, nullptr) (HSA_CU_MASK applied) */
static void init_cu_mask(stub_queue_t *q) {
    bool clipped;
    q->cu_mask_dwords = effective_mask(q->agent, 0, NULL, q->cu_mask, &clipped);
}

/* The ISA's major version (gfx906 -> 9, gfx1030 -> 10): ROCr isa()->GetMajorVersion() */
static unsigned gfx_major(const stub_hsa_agent_t *agent) {
    const char *g = agent->dev->gfx + 3;
    size_t n = strlen(g);
    unsigned major = 0;
    for (size_t i = 0; i + 2 < n; i++) major = major * 10 + (unsigned)(g[i] - '0');
    return major;
}

void stub_queue_free(stub_queue_t *q) {
    stub_sig_destroy_internal(q->doorbell);
    stub_sig_destroy_internal(q->interrupt);
    stub_mem_release(q->q.base_address, STUB_MEM_HOST, NULL);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->wake);
    free(q);
}

static hsa_status_t create(stub_hsa_agent_t *agent, uint32_t size, hsa_queue_type32_t type,
                           stub_queue_callback_t callback, void *data, stub_queue_t **out) {
    stub_queue_t *q = aligned_alloc(64, sizeof *q);
    if (!q) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    memset(q, 0, sizeof *q);
    void *ring;
    /* the ring is system memory both the host and the queue's GPU use */
    if (stub_mem_alloc((size_t)size * 64, STUB_PAGE_SIZE, STUB_MEM_HOST, -1, 0, &ring) != 0) {
        free(q);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    stub_mem_set_access(ring, STUB_ACCESS_CPU | stub_hsa_access_bit(agent));
    for (uint32_t i = 0; i < size; i++) ((hsa_kernel_dispatch_packet_t *)ring)[i].header = HSA_PACKET_TYPE_INVALID;
    q->doorbell = stub_sig_create_internal(0);
    q->interrupt = stub_sig_create_internal(0);
    pthread_mutex_init(&q->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->wake, &attr);
    pthread_condattr_destroy(&attr);
    q->q.type = type;
    q->q.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
    q->q.base_address = ring;
    q->q.size = size;
    q->q.id = atomic_fetch_add(&next_id, 1);
    q->agent = agent;
    q->callback = callback;
    q->callback_data = data;
    q->priority = HSA_AMD_QUEUE_PRIORITY_NORMAL;
    init_cu_mask(q);
    if (!q->doorbell || !q->interrupt) {
        if (q->doorbell) stub_sig_destroy_internal(q->doorbell);
        if (q->interrupt) stub_sig_destroy_internal(q->interrupt);
        q->doorbell = q->interrupt = NULL;
        stub_mem_release(ring, STUB_MEM_HOST, NULL);
        free(q);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    q->q.doorbell_signal = stub_sig_handle(q->doorbell);
    stub_sig_set_hook(q->doorbell, stub_aql_ring, q);
    if (pthread_create(&q->thread, NULL, stub_aql_processor, q) != 0) {
        stub_queue_free(q);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *out = q;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                              void (*callback)(hsa_status_t status, hsa_queue_t *source, void *data), void *data,
                              uint32_t private_segment_size, uint32_t group_segment_size, hsa_queue_t **queue) {
    HSA_CHECK_OPEN();
    (void)group_segment_size;
    if (queue == NULL || size == 0 || (size & (size - 1)) != 0 || type > HSA_QUEUE_TYPE_COOPERATIVE)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!a->is_gpu) return HSA_STATUS_ERROR;   /* ROCr CpuAgent::QueueCreate: no AQL processor */
    if (type == HSA_QUEUE_TYPE_COOPERATIVE) return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;   /* no GWS */
    if (size > STUB_QUEUE_MAX_PACKETS) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    if (size < STUB_QUEUE_MIN_PACKETS) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (private_segment_size != UINT32_MAX && private_segment_size > MAX_PRIVATE_SEGMENT)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    pthread_mutex_lock(&registry_lock);
    if (count_for(a) >= STUB_QUEUES_MAX) {
        pthread_mutex_unlock(&registry_lock);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    stub_queue_t *q;
    hsa_status_t st = create(a, size, type, callback, data, &q);
    if (st == HSA_STATUS_SUCCESS) {
        q->next = queues;
        queues = q;
        *queue = &q->q;
    }
    pthread_mutex_unlock(&registry_lock);
    return st;
}

/* Stop the processor and free the queue; from the processor's own thread
 * (a kernel emulation destroying its queue) the thread frees it on exit. */
static void destroy(stub_queue_t *q) {
    bool self = pthread_equal(q->thread, pthread_self());
    pthread_mutex_lock(&q->lock);
    q->stop = true;
    q->detached = self;
    pthread_cond_signal(&q->wake);
    pthread_mutex_unlock(&q->lock);
    stub_sig_store(q->interrupt, 1);
    if (self) {
        pthread_detach(q->thread);
        return;
    }
    pthread_join(q->thread, NULL);
    stub_queue_free(q);
}

hsa_status_t hsa_queue_destroy(hsa_queue_t *queue) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(queue);
    pthread_mutex_lock(&registry_lock);
    stub_queue_t **p = find(queue), *q = *p;
    if (q) *p = q->next;
    pthread_mutex_unlock(&registry_lock);
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    destroy(q);
    return HSA_STATUS_SUCCESS;
}

void stub_hsa_queues_shutdown(void) {
    pthread_mutex_lock(&registry_lock);
    stub_queue_t *list = queues;
    queues = NULL;
    pthread_mutex_unlock(&registry_lock);
    while (list) {
        stub_queue_t *next = list->next;
        destroy(list);
        list = next;
    }
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t *queue) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(queue);
    stub_queue_t *q = lookup(queue);
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    atomic_store(&q->state, QUEUE_INACTIVE);
    stub_sig_store(q->interrupt, 1);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t stub_hsa_queue_set_profiling(hsa_queue_t *queue, int enable) {
    stub_queue_t *q = queue ? lookup(queue) : NULL;
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    atomic_store(&q->profiling, enable != 0);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_queue_set_priority(hsa_queue_t *queue, hsa_amd_queue_priority_t priority) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(queue);
    stub_queue_t *q = lookup(queue);
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    /* ROCr 5.2 maps the value first (hsa_amd_queue_set_priority), then
     * AqlQueue::SetPriority refuses a queue an error suspended */
    if (priority != HSA_AMD_QUEUE_PRIORITY_LOW && priority != HSA_AMD_QUEUE_PRIORITY_NORMAL &&
        priority != HSA_AMD_QUEUE_PRIORITY_HIGH)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (atomic_load(&q->suspended)) return HSA_STATUS_ERROR_INVALID_QUEUE;
    atomic_store(&q->priority, (int)priority);
    return HSA_STATUS_SUCCESS;
}

/* ROCr hsa_amd_queue_cu_set_mask + AqlQueue::SetCUMasking: the count must be
 * a multiple of 32 (0 resets to every CU); the mask is cut to ceil(CUs/32)
 * dwords and the last dword to the CU count, silently: CU_MASK_REDUCED comes
 * only from the process-wide HSA_CU_MASK (Flag::cu_mask), for CUs it takes
 * away (a reset included).  A mask of no CU is passed to
 * the driver as it is (hsaKmtSetQueueCUMask) and accepted.  Since 5.3 a gfx10+
 * agent (CUs paired in WGPs) refuses a mask enabling one CU of a pair.
 * The stub keeps the mask and reports it back; it has no effect on where
 * an emulated kernel runs (a CPU thread: there are no CUs to mask). */
hsa_status_t hsa_amd_queue_cu_set_mask(const hsa_queue_t *queue, uint32_t num_cu_mask_count,
                                       const uint32_t *cu_mask) {
    HSA_CHECK_OPEN();
    stub_queue_t *q = queue ? lookup(queue) : NULL;
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    if (num_cu_mask_count != 0) HSA_CHECK_PTR(cu_mask);
    if (num_cu_mask_count % 32 != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    uint32_t mask[STUB_CU_MASK_DWORDS];
    bool clipped;
    uint32_t n = effective_mask(q->agent, num_cu_mask_count, cu_mask, mask, &clipped);
    if (stub_rule(STUB_RULE_CU_MASK_WGP_PAIRS) && gfx_major(q->agent) >= 10)
        for (uint32_t i = 0; i < n * 32; i += 2) {
            uint32_t pair = (mask[i / 32] >> (i % 32)) & 3;
            if (pair && pair != 3) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
    pthread_mutex_lock(&q->lock);
    memcpy(q->cu_mask, mask, sizeof mask);
    q->cu_mask_dwords = n;
    pthread_mutex_unlock(&q->lock);
    return clipped ? (hsa_status_t)HSA_STATUS_CU_MASK_REDUCED : HSA_STATUS_SUCCESS;
}

/* ROCr AqlQueue::GetCUMasking: the mask as set, zero past its dwords */
hsa_status_t hsa_amd_queue_cu_get_mask(const hsa_queue_t *queue, uint32_t num_cu_mask_count, uint32_t *cu_mask) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(cu_mask);
    stub_queue_t *q = queue ? lookup(queue) : NULL;
    if (!q) return HSA_STATUS_ERROR_INVALID_QUEUE;
    if (num_cu_mask_count == 0 || num_cu_mask_count % 32 != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&q->lock);
    for (uint32_t i = 0; i < num_cu_mask_count / 32; i++) cu_mask[i] = i < q->cu_mask_dwords ? q->cu_mask[i] : 0;
    pthread_mutex_unlock(&q->lock);
    return HSA_STATUS_SUCCESS;
}

/* ---- read and write indices -------------------------------------------------
 * Unchecked beyond NULL, as in ROCr (an assert there): these are the hot path. */

static stub_queue_t *of(const hsa_queue_t *queue, const char *call) {
    if (!queue) stub_abort(call, "NULL queue");
    return (stub_queue_t *)queue;
}

#define LOAD_INDEX(which, suffix, order)                                                     \
    uint64_t hsa_queue_load_##which##_index_##suffix(const hsa_queue_t *queue) {             \
        return atomic_load_explicit(&of(queue, "hsa_queue_load_" #which "_index_" #suffix)->which##_index, order); \
    }
HSA_LOAD_ORDERS(LOAD_INDEX, read)
HSA_LOAD_ORDERS(LOAD_INDEX, write)

#define STORE_INDEX(which, suffix, order)                                                    \
    void hsa_queue_store_##which##_index_##suffix(const hsa_queue_t *queue, uint64_t value) { \
        atomic_store_explicit(&of(queue, "hsa_queue_store_" #which "_index_" #suffix)->which##_index, value, order); \
    }
HSA_STORE_ORDERS(STORE_INDEX, read)
HSA_STORE_ORDERS(STORE_INDEX, write)

#define CAS_INDEX(which, suffix, order, fail)                                                \
    uint64_t hsa_queue_cas_##which##_index_##suffix(const hsa_queue_t *queue, uint64_t expected, uint64_t value) { \
        stub_queue_t *q = of(queue, "hsa_queue_cas_" #which "_index_" #suffix);              \
        atomic_compare_exchange_strong_explicit(&q->which##_index, &expected, value, order, fail); \
        return expected;                                                                     \
    }
HSA_RMW_ORDERS(CAS_INDEX, write)

#define ADD_INDEX(which, suffix, order, fail)                                                \
    uint64_t hsa_queue_add_##which##_index_##suffix(const hsa_queue_t *queue, uint64_t value) { \
        stub_queue_t *q = of(queue, "hsa_queue_add_" #which "_index_" #suffix);              \
        return atomic_fetch_add_explicit(&q->which##_index, value, order);                   \
    }
HSA_RMW_ORDERS(ADD_INDEX, write)
