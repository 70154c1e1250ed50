/* Copies and fills: hsa_memory_copy, hsa_amd_memory_async_copy(_on_engine),
 * hsa_amd_memory_copy_engine_status, hsa_amd_memory_fill.  Asynchronous
 * copies run on a copy engine, a FIFO worker: per GPU agent one per ROCr
 * blit (GpuAgent::BlitEnum: 0 device-to-device, the blit kernel; 1 host-to-
 * device, SDMA0; 2 device-to-host, SDMA1: the stub's GPUs report 2 SDMA
 * engines and no xGMI ones), plus one for CPU-to-CPU copies.  Each waits
 * for its dependency signals to reach 0, copies, then decrements its
 * completion signal by 1, as ROCr's blit engines do (amd_blit_sdma.cpp).
 * An engine's speed is the CPU's memmove: the choice of engine changes
 * which worker (and which FIFO order) a copy gets, not how fast it is. */
#include "hsa_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#define BLIT_D2D 0
#define BLIT_H2D 1
#define BLIT_D2H 2
#define NUM_SDMA 2                                        /* HSA_AMD_AGENT_INFO_NUM_SDMA_ENG */
static stub_worker_t *engines[1 + STUB_MAX_DEVICES][3];  /* [0][0]: CPU copies */
static stub_signal_t *stopping;                        /* non-zero: shutting down */

typedef struct copy_task {
    void *dst;
    const void *src;
    size_t size;
    const stub_hsa_agent_t *agent;   /* the copy agent */
    stub_signal_t *completion;       /* retained */
    stub_signal_t *stop;
    bool profile;
    uint32_t ndeps;
    stub_signal_t *deps[];           /* retained */
} copy_task_t;

static void run_copy(void *p) {
    copy_task_t *t = p;
    bool cancelled = false;
    for (uint32_t i = 0; i < t->ndeps && !cancelled; i++) {
        stub_signal_t *sigs[2] = {t->stop, t->deps[i]};
        const hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_NE, HSA_SIGNAL_CONDITION_EQ};
        const hsa_signal_value_t values[2] = {0, 0};
        /* a dependency destroyed while waited on counts as done */
        cancelled = stub_sig_wait_any(2, sigs, conds, values, UINT64_MAX, NULL) == 0;
    }
    if (!cancelled && t->agent->is_gpu) {
        /* checked again when the copy runs: memory freed since the submit is
         * unmapped from the GPU, and the engine's access page-faults (ROCr's
         * VM fault handler: system event handlers, then abort) */
        const void *gone = !stub_hsa_accessible(t->agent, t->src, t->size) ? t->src
                           : !stub_hsa_accessible(t->agent, t->dst, t->size) ? t->dst : NULL;
        if (gone) {
            stub_hsa_memory_fault(t->agent, (uint64_t)(uintptr_t)gone,
                                  HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT);
            cancelled = true;
        }
    }
    if (!cancelled) {
        uint64_t start = stub_now_ns();
        memmove(t->dst, t->src, t->size);
        uint64_t end = stub_now_ns();
        if (t->profile && t->agent->is_gpu)   /* a GPU engine's counter */
            start = stub_hsa_gpu_ticks(t->agent, start), end = stub_hsa_gpu_ticks(t->agent, end);
        if (t->profile) stub_sig_set_copy_time(t->completion, t->agent, start, end);
        stub_sig_add(t->completion, -1);
    }
    for (uint32_t i = 0; i < t->ndeps; i++) stub_sig_release(t->deps[i]);
    stub_sig_release(t->completion);
    free(t);
}

/* caller holds lock */
static stub_worker_t *engine_for(const stub_hsa_agent_t *agent, int blit) {
    int slot = agent->is_gpu ? 1 + agent->device : 0;
    if (!stopping && !(stopping = stub_sig_create_internal(0))) return NULL;
    if (!engines[slot][blit])
        engines[slot][blit] = stub_worker_create(agent->is_gpu ? "hsa-copy-engine" : "hsa-cpu-copy");
    return engines[slot][blit];
}

/* ROCr GpuAgent::DmaCopy's choice: by direction (the copy agent's view) */
static int default_blit(const stub_hsa_agent_t *dst, const stub_hsa_agent_t *src) {
    if (!src->is_gpu && !dst->is_gpu) return BLIT_D2D;   /* the CPU's one worker */
    if (!src->is_gpu) return BLIT_H2D;
    if (!dst->is_gpu) return BLIT_D2H;
    return BLIT_D2D;
}

typedef struct posted {
    void (*fn)(void *arg, stub_signal_t *stop);
    void *arg;
    stub_signal_t *stop;
} posted_t;

static void run_posted(void *p) {
    posted_t t = *(posted_t *)p;
    free(p);
    t.fn(t.arg, t.stop);
}

hsa_status_t stub_hsa_engine_post(const stub_hsa_agent_t *agent, void (*fn)(void *arg, stub_signal_t *stop),
                                  void *arg) {
    posted_t *t = malloc(sizeof *t);
    if (!t) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *t = (posted_t){fn, arg, NULL};
    pthread_mutex_lock(&lock);
    stub_worker_t *w = engine_for(agent, BLIT_D2D);
    t->stop = stopping;
    uint64_t ticket = w ? stub_worker_submit(w, run_posted, t) : 0;
    pthread_mutex_unlock(&lock);
    if (!ticket) {
        free(t);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    return HSA_STATUS_SUCCESS;
}

void stub_hsa_copy_shutdown(void) {
    pthread_mutex_lock(&lock);
    if (stopping) stub_sig_store(stopping, 1);
    for (int i = 0; i <= STUB_MAX_DEVICES; i++)
        for (int b = 0; b < 3; b++) {
            stub_worker_destroy(engines[i][b]);   /* runs what is queued (cancelled), then stops */
            engines[i][b] = NULL;
        }
    if (stopping) stub_sig_destroy_internal(stopping);
    stopping = NULL;
    pthread_mutex_unlock(&lock);
}

/* Both ranges must be reachable by the agent that does the copy: the
 * source GPU, else the destination agent (ROCr Runtime::CopyMemory). */
static hsa_status_t engine_blit(const stub_hsa_agent_t *copy, const stub_hsa_agent_t *da,
                                 const stub_hsa_agent_t *sa, uint32_t engine_id, bool force, int *blit);

/* engine_id 0: ROCr's own choice (hsa_amd_memory_async_copy) */
static hsa_status_t submit(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                           size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals,
                           hsa_signal_t completion_signal, uint32_t engine_id, bool force_sdma) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(dst);
    HSA_CHECK_PTR(src);
    if ((num_dep_signals == 0) != (dep_signals == NULL)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_hsa_agent_t *da = stub_hsa_agent(dst_agent), *sa = stub_hsa_agent(src_agent);
    if (!da || !sa) return HSA_STATUS_ERROR_INVALID_AGENT;
    for (uint32_t i = 0; i < num_dep_signals; i++) {
        hsa_status_t st = stub_sig_check(dep_signals[i]);
        if (st != HSA_STATUS_SUCCESS) return st;
    }
    hsa_status_t st = stub_sig_check(completion_signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    if (size == 0) return HSA_STATUS_SUCCESS;   /* ROCr: nothing is signalled either */
    const stub_hsa_agent_t *agent = sa->is_gpu ? sa : da;
    int blit = default_blit(da, sa);
    if (engine_id) {
        st = engine_blit(agent, da, sa, engine_id, force_sdma, &blit);
        if (st != HSA_STATUS_SUCCESS) return st;
    }
    if (!stub_hsa_accessible(agent, dst, size) || !stub_hsa_accessible(agent, src, size))
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    copy_task_t *t = calloc(1, sizeof *t + num_dep_signals * sizeof(stub_signal_t *));
    if (!t) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    t->dst = dst;
    t->src = src;
    t->size = size;
    t->agent = agent;
    t->profile = stub_hsa_copy_profiling_enabled();
    for (; t->ndeps < num_dep_signals; t->ndeps++)
        if (!(t->deps[t->ndeps] = stub_sig_retain(dep_signals[t->ndeps]))) break;
    t->completion = stub_sig_retain(completion_signal);
    if (t->ndeps < num_dep_signals || !t->completion) {
        for (uint32_t i = 0; i < t->ndeps; i++) stub_sig_release(t->deps[i]);
        if (t->completion) stub_sig_release(t->completion);
        free(t);
        return HSA_STATUS_ERROR_INVALID_SIGNAL;   /* destroyed meanwhile */
    }
    pthread_mutex_lock(&lock);
    stub_worker_t *w = engine_for(agent, blit);
    t->stop = stopping;
    uint64_t ticket = w ? stub_worker_submit(w, run_copy, t) : 0;
    pthread_mutex_unlock(&lock);
    if (!ticket) {
        for (uint32_t i = 0; i < t->ndeps; i++) stub_sig_release(t->deps[i]);
        stub_sig_release(t->completion);
        free(t);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_async_copy(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                                       size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals,
                                       hsa_signal_t completion_signal) {
    return submit(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal, 0, false);
}

/* ROCr Runtime::CopyMemoryOnEngine + GpuAgent::DmaCopyOnEngine: the id must be
 * one bit (its offset, ffs, names the blit: SDMA0 -> 1 host-to-device, SDMA1
 * -> 2 device-to-host), within the agent's SDMA engines; gfx90a takes SDMA0
 * for host-to-device copies only (a RAS issue); a copy within one GPU runs on
 * the blit kernel unless force_copy_on_sdma.  A CPU-to-CPU copy has no
 * engine to choose (core::Agent::DmaCopyOnEngine: HSA_STATUS_ERROR). */
static hsa_status_t engine_blit(const stub_hsa_agent_t *copy, const stub_hsa_agent_t *da,
                                 const stub_hsa_agent_t *sa, uint32_t engine_id, bool force, int *blit) {
    int offset = __builtin_ffs((int)engine_id);
    if (!engine_id || (engine_id >> offset) != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!copy->is_gpu) return HSA_STATUS_ERROR;
    if (offset > NUM_SDMA) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    bool same_gpu = da == sa && da == copy;
    bool h2d = !sa->is_gpu && da->is_gpu;
    bool limit_h2d = strcmp(copy->dev->gfx, "gfx90a") == 0;
    if (!h2d && !same_gpu && limit_h2d && offset == BLIT_H2D) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *blit = same_gpu && !force ? BLIT_D2D : offset;
    return HSA_STATUS_SUCCESS;
}

#ifdef ROCPY_HAVE_hsa_amd_memory_async_copy_on_engine
hsa_status_t hsa_amd_memory_async_copy_on_engine(void *dst, hsa_agent_t dst_agent, const void *src,
                                                 hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals,
                                                 const hsa_signal_t *dep_signals, hsa_signal_t completion_signal,
                                                 hsa_amd_sdma_engine_id_t engine_id, bool force_copy_on_sdma) {
    /* a 0 id is refused only for a copy that happens (size > 0), after the other checks */
    uint32_t id = (uint32_t)engine_id;
    return submit(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal,
                  id ? id : UINT32_MAX, force_copy_on_sdma);
}
#endif

#ifdef ROCPY_HAVE_hsa_amd_memory_copy_engine_status
/* ROCr Runtime::CopyMemoryStatus + GpuAgent::DmaCopyStatus: the engines the
 * copy agent (the source GPU, else the destination) has free for that
 * direction (DmaEngineIsFree: nothing pending; here: the worker is idle);
 * none free is HSA_STATUS_ERROR_OUT_OF_RESOURCES. */
hsa_status_t hsa_amd_memory_copy_engine_status(hsa_agent_t dst_agent, hsa_agent_t src_agent,
                                               uint32_t *engine_ids_mask) {
    HSA_CHECK_OPEN();
    stub_hsa_agent_t *da = stub_hsa_agent(dst_agent), *sa = stub_hsa_agent(src_agent);
    if (!da || !sa) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (da == sa) return HSA_STATUS_ERROR_INVALID_AGENT;
    const stub_hsa_agent_t *copy = sa->is_gpu ? sa : da;
    if (!copy->is_gpu) return HSA_STATUS_ERROR;   /* core::Agent::DmaCopyStatus */
    HSA_CHECK_PTR(engine_ids_mask);
    bool h2d = !sa->is_gpu && da->is_gpu;
    bool limit_h2d = strcmp(copy->dev->gfx, "gfx90a") == 0;
    int slot = 1 + copy->device;
    uint32_t mask = 0;
    pthread_mutex_lock(&lock);
    if ((!engines[slot][BLIT_H2D] || stub_worker_idle(engines[slot][BLIT_H2D])) && (h2d || !limit_h2d))
        mask |= HSA_AMD_SDMA_ENGINE_0;
    if (!engines[slot][BLIT_D2H] || stub_worker_idle(engines[slot][BLIT_D2H]))
        mask |= NUM_SDMA > 1 ? HSA_AMD_SDMA_ENGINE_1 : HSA_AMD_SDMA_ENGINE_0;
    pthread_mutex_unlock(&lock);
    *engine_ids_mask = mask;
    return mask ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}
#endif

/* True if [p, p+size) overruns the tracked allocation that contains p. */
static bool overruns(const void *p, size_t size) {
    stub_alloc_t a;
    return stub_hsa_find(p, &a) && size > a.base + a.size - (uintptr_t)p;
}

/* The agent whose memory [p, p+size) is (ROCr's is_system_mem): the GPU that
 * owns the allocation, else NULL (system memory: host pools, locked or plain
 * host memory). */
static const stub_hsa_agent_t *gpu_owner(const void *p, size_t size, bool *known) {
    stub_alloc_t a;
    *known = stub_hsa_find(p, &a);
    if (!*known || !(a.kind & STUB_MEM_DEVICE) || size > a.base + a.size - (uintptr_t)p) return NULL;
    return stub_hsa_gpu_agent(a.device);
}

/* ROCr Runtime::CopyMemory (runtime.cpp): system to system is a memcpy; any
 * other copy is a blit kernel of a GPU (GpuAgent::DmaCopy).  Plain host
 * memory ROCr does not know is locked for that GPU for the copy
 * (locked_copy), but memory it knows (pool allocations, locked memory) is
 * used as it is: if the GPU was never granted access to it, the blit kernel
 * reaches an unmapped page and the GPU faults (VMFaultHandler: system event
 * handlers, then abort).  GPU to GPU stages through memory ROCr allocates
 * for both, so each GPU only touches its own.  A range that runs past its
 * allocation fails to pin (HSA_STATUS_ERROR). */
hsa_status_t hsa_memory_copy(void *dst, const void *src, size_t size) {
    HSA_CHECK_OPEN();
    if (dst == NULL || src == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (size == 0) return HSA_STATUS_SUCCESS;
    if (overruns(dst, size) || overruns(src, size)) return HSA_STATUS_ERROR;
    bool dst_known, src_known;
    const stub_hsa_agent_t *dg = gpu_owner(dst, size, &dst_known), *sg = gpu_owner(src, size, &src_known);
    const void *host = NULL;           /* the system end a single GPU's blit reaches */
    const stub_hsa_agent_t *blit = NULL;
    if (dg && !sg && dst_known && src_known) host = src, blit = dg;
    if (sg && !dg && src_known && dst_known) host = dst, blit = sg;
    if (host && !stub_hsa_accessible(blit, host, size)) {
        stub_hsa_memory_fault(blit, (uint64_t)(uintptr_t)host, HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT);
        return HSA_STATUS_ERROR;       /* reached only if a system event handler took the fault */
    }
    memmove(dst, src, size);
    return HSA_STATUS_SUCCESS;
}

/* ROCr Runtime::FillMemory: the range must lie in a known allocation. */
hsa_status_t hsa_amd_memory_fill(void *ptr, uint32_t value, size_t count) {
    HSA_CHECK_OPEN();
    if (ptr == NULL || (uintptr_t)ptr % 4 != 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (count == 0) return HSA_STATUS_SUCCESS;
    stub_alloc_t a;
    if (!stub_hsa_find(ptr, &a) || count > (a.base + a.size - (uintptr_t)ptr) / 4)
        return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    uint32_t *p = ptr;
    for (size_t i = 0; i < count; i++) p[i] = value;
    return HSA_STATUS_SUCCESS;
}
