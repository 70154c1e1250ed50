/* Copies and fills: hsa_memory_copy, hsa_amd_memory_async_copy(_on_engine),
 * hsa_amd_memory_fill.  Asynchronous copies run on a copy engine, a FIFO
 * worker per GPU agent (plus one for CPU-to-CPU copies): each waits for its
 * dependency signals to reach 0, copies, then decrements its completion
 * signal by 1, as ROCr's blit engines do (amd_blit_sdma.cpp). */
#include "hsa_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static stub_worker_t *engines[1 + STUB_MAX_DEVICES];   /* [0]: CPU copies */
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
static stub_worker_t *engine_for(const stub_hsa_agent_t *agent) {
    int slot = agent->is_gpu ? 1 + agent->device : 0;
    if (!stopping && !(stopping = stub_sig_create_internal(0))) return NULL;
    if (!engines[slot]) engines[slot] = stub_worker_create(agent->is_gpu ? "hsa-copy-engine" : "hsa-cpu-copy");
    return engines[slot];
}

void stub_hsa_copy_shutdown(void) {
    pthread_mutex_lock(&lock);
    if (stopping) stub_sig_store(stopping, 1);
    for (int i = 0; i <= STUB_MAX_DEVICES; i++) {
        stub_worker_destroy(engines[i]);   /* runs what is queued (cancelled), then stops */
        engines[i] = NULL;
    }
    if (stopping) stub_sig_destroy_internal(stopping);
    stopping = NULL;
    pthread_mutex_unlock(&lock);
}

/* Both ranges must be reachable by the agent that does the copy: the
 * source GPU, else the destination agent (ROCr Runtime::CopyMemory). */
static hsa_status_t submit(void *dst, hsa_agent_t dst_agent, const void *src, hsa_agent_t src_agent,
                           size_t size, uint32_t num_dep_signals, const hsa_signal_t *dep_signals,
                           hsa_signal_t completion_signal) {
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
    stub_worker_t *w = engine_for(agent);
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
    return submit(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal);
}

#if HSA_AMD_INTERFACE_VERSION_MAJOR > 1 || HSA_AMD_INTERFACE_VERSION_MINOR >= 2
/* The stub has one engine per agent: any single engine id selects it. */
hsa_status_t hsa_amd_memory_async_copy_on_engine(void *dst, hsa_agent_t dst_agent, const void *src,
                                                 hsa_agent_t src_agent, size_t size, uint32_t num_dep_signals,
                                                 const hsa_signal_t *dep_signals, hsa_signal_t completion_signal,
                                                 hsa_amd_sdma_engine_id_t engine_id, bool force_copy_on_sdma) {
    (void)force_copy_on_sdma;
    uint32_t id = (uint32_t)engine_id;
    if (size > 0 && (id == 0 || (id & (id - 1)) != 0)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return submit(dst, dst_agent, src, src_agent, size, num_dep_signals, dep_signals, completion_signal);
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
