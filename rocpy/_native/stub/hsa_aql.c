/* The AQL packet processor: one thread per queue, asleep until the doorbell
 * is written, then taking packets in order from the read index while their
 * header is published.
 *
 * The barrier bit: hardware starts a packet without it as soon as it is
 * fetched, so it may run concurrently with (and finish before) the packets
 * ahead of it; with the bit it waits for all of them.  In the overlap mode
 * (rocpy_stub_aql_overlap, on in rocpy's tests) the stub does what makes a
 * missing barrier visible: kernel dispatches without the bit are taken from
 * the ring (read index advanced, as the command processor fetches them) and
 * held; they run, the latest first, when a packet with the barrier bit or a
 * barrier packet comes, or when no further packet arrives within
 * OVERLAP_GRACE_NS.  Off, packets run one at a time in order.
 *
 * Errors are those the command processor reports (ROCr AqlQueue::
 * ExceptionHandler / DynamicQueueEventsHandler): the queue stops at the
 * faulty packet and its error callback runs on the async-handler thread.
 *   dimensions not 1..3                  HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS
 *   a work-group size of 0, or > 1024    HSA_STATUS_ERROR_INVALID_ARGUMENT
 *   group segment larger than the LDS    HSA_STATUS_ERROR_INVALID_ALLOCATION
 *   unknown kernel object / no emulation HSA_STATUS_ERROR_INVALID_CODE_OBJECT
 *   unsupported packet type              HSA_STATUS_ERROR_INVALID_PACKET_FORMAT
 *   the emulation fails (a wave trap)    HSA_STATUS_ERROR_EXCEPTION
 * The kernel's own limits (metadata; ROCr's packet processor does not look,
 * the kernel just computes garbage, so the stub refuses with the statuses
 * for a bad packet):
 *   more work-items than .max_flat_workgroup_size, a work-group other than
 *   .reqd_workgroup_size, a partial work-group for a kernel compiled with
 *   .uniform_work_group_size (hipamd ihipModuleLaunchKernel refuses those
 *   with hipErrorInvalidValue)       HSA_STATUS_ERROR_INVALID_ARGUMENT
 *   a private segment smaller than the kernel's fixed size, or, for a
 *   dynamic call stack, than max(fixed size, STUB_DYNAMIC_STACK_BYTES)
 *   (ROCclr VirtualGPU::submitKernelInternal: max(StackSize(), private
 *   size), HIP's default stack 1024 bytes): the waves' scratch overlaps
 *                                        HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION
 * Hidden arguments (code object v5) a kernel declares are taken as used: a
 * buffer pointer (printf, hostcall, heap, device enqueue) that is 0 or not
 * reachable, a queue pointer other than this queue, an aperture base of 0
 * is what a GPU dereferences: a memory fault at that address.
 * (hidden_multigrid_sync_arg is 0 for launches that are not cooperative, as
 * ROCclr passes it, and is not checked.)
 * Memory the GPU may not access (a kernel object loaded for another agent,
 * kernarg or buffer arguments not mapped to it, memory no allocation covers
 * reached by the emulation: STUB_KERNEL_MEMORY_FAULT) is a GPU memory fault:
 * the queue stops without a callback and the system event handlers run
 * (ROCr's VMFaultHandler), then the process aborts unless one handled it. */
#include "hsa_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POLL_NS 1000000ull   /* a reserved slot not yet published: look again */
#define OVERLAP_GRACE_NS 2000000ull   /* held packets wait this long for more */
#define STUB_DYNAMIC_STACK_BYTES 1024u

static _Atomic int overlap = -1;   /* -1: not read from the environment yet */

int rocpy_stub_aql_overlap(int enable) {
    int before = atomic_load(&overlap);
    if (before < 0) {
        const char *e = getenv("ROCPY_STUB_AQL_OVERLAP");
        before = e && strcmp(e, "1") == 0;
        int expected = -1;
        if (!atomic_compare_exchange_strong(&overlap, &expected, before)) before = expected;
    }
    if (enable >= 0) atomic_store(&overlap, enable ? 1 : 0);
    return before;
}

typedef enum outcome { DONE, FAILED, FAULTED, INTERRUPTED } outcome_t;

void stub_aql_ring(void *queue) {
    stub_queue_t *q = queue;
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&q->sleeping, memory_order_relaxed)) {
        pthread_mutex_lock(&q->lock);
        pthread_cond_signal(&q->wake);
        pthread_mutex_unlock(&q->lock);
    }
}

static _Atomic uint16_t *header_of(stub_queue_t *q, uint64_t index) {
    hsa_kernel_dispatch_packet_t *ring = q->q.base_address;
    return (_Atomic uint16_t *)&ring[index & (q->q.size - 1)].header;
}

/* Is the packet at the read index published?  *poll: a producer has
 * reserved it (write index past it) but not published it yet. */
static bool ready(stub_queue_t *q, bool *poll) {
    uint64_t rd = atomic_load_explicit(&q->read_index, memory_order_relaxed);
    uint16_t header = atomic_load_explicit(header_of(q, rd), memory_order_acquire);
    if ((header & 0xff) != HSA_PACKET_TYPE_INVALID) return true;
    *poll = rd < atomic_load_explicit(&q->write_index, memory_order_acquire);
    return false;
}

/* ---- errors -------------------------------------------------------------------- */

typedef struct queue_error {
    stub_queue_callback_t callback;
    void *data;
    hsa_queue_t *queue;
    hsa_status_t status;
} queue_error_t;

static void deliver_error(void *p) {
    queue_error_t e = *(queue_error_t *)p;
    free(p);
    if (e.callback) {
        e.callback(e.status, e.queue, e.data);
        return;
    }
    /* ROCr's Queue::DefaultErrorHandler */
    const char *quiet = getenv("HSA_ENABLE_QUEUE_FAULT_MESSAGE");
    if (quiet && strcmp(quiet, "0") == 0) return;
    const char *text = "UNKNOWN ERROR";
    hsa_status_string(e.status, &text);
    stub_abort("queue error", "Queue at %p inactivated due to async error:\n\t%s", (void *)e.queue, text);
}

static void report(stub_queue_t *q, hsa_status_t status) {
    atomic_store(&q->state, QUEUE_INACTIVE);
    atomic_store(&q->suspended, true);
    queue_error_t *e = malloc(sizeof *e);
    if (!e) stub_abort("queue error", "out of memory reporting status 0x%x", (unsigned)status);
    *e = (queue_error_t){q->callback, q->callback_data, &q->q, status};
    if (stub_hsa_async_post(deliver_error, e) != HSA_STATUS_SUCCESS)
        stub_abort("queue error", "cannot reach the async handler thread");
}

static outcome_t fault(stub_queue_t *q, uint64_t address) {
    atomic_store(&q->state, QUEUE_INACTIVE);
    atomic_store(&q->suspended, true);
    stub_hsa_memory_fault(q->agent, address, HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT);
    return FAULTED;
}

/* ---- packets ---------------------------------------------------------------------- */

static outcome_t dispatch(stub_queue_t *q, const hsa_kernel_dispatch_packet_t *p, hsa_status_t *status) {
    unsigned dims = (p->setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3;
    if (dims < 1 || dims > 3) {
        *status = HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
        return FAILED;
    }
    uint32_t block[3] = {p->workgroup_size_x, p->workgroup_size_y, p->workgroup_size_z};
    uint32_t grid[3] = {p->grid_size_x, p->grid_size_y, p->grid_size_z};
    if (!block[0] || !block[1] || !block[2] || (uint64_t)block[0] * block[1] * block[2] > 1024) {
        *status = HSA_STATUS_ERROR_INVALID_ARGUMENT;
        return FAILED;
    }
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    stub_kernel_info_t k;
    if (!stub_hsa_kernel_lookup(p->kernel_object, &k)) {
        *status = HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
        return FAILED;
    }
    bool beyond = k.max_flat_workgroup_size && threads > k.max_flat_workgroup_size;
    bool partial = false, other = false;
    for (int i = 0; i < 3; i++) {
        if (k.reqd_workgroup_size[i] && k.reqd_workgroup_size[i] != block[i]) other = true;
        if (k.uniform_work_group_size && grid[i] % block[i]) partial = true;
    }
    if (beyond || other || partial) {
        *status = HSA_STATUS_ERROR_INVALID_ARGUMENT;
        return FAILED;
    }
    uint32_t need = k.private_size;
    if (k.dynamic_stack && need < STUB_DYNAMIC_STACK_BYTES) need = STUB_DYNAMIC_STACK_BYTES;
    if (p->private_segment_size < need) {
        *status = HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION;
        return FAILED;
    }
    if (p->group_segment_size > q->agent->dev->lds_size) {
        *status = HSA_STATUS_ERROR_INVALID_ALLOCATION;
        return FAILED;
    }
    if (k.agent != q->agent) return fault(q, p->kernel_object);   /* code not mapped to this GPU */
    const char *kernarg = p->kernarg_address;
    if (k.kernarg_size && !stub_hsa_accessible(q->agent, kernarg, k.kernarg_size))
        return fault(q, (uint64_t)(uintptr_t)kernarg);
    uint64_t first_buffer = 0;
    for (uint32_t i = 0; i < k.num_buffers; i++) {
        uint64_t ptr;
        if (k.buffer_offsets[i] + sizeof ptr > k.kernarg_size) continue;
        memcpy(&ptr, kernarg + k.buffer_offsets[i], sizeof ptr);
        if (!first_buffer) first_buffer = ptr;
        if (ptr && !stub_hsa_accessible(q->agent, (const void *)(uintptr_t)ptr, 1)) return fault(q, ptr);
    }
    for (uint32_t i = 0; i < k.num_hidden; i++) {
        uint64_t v = 0;
        if (k.hidden[i].offset + k.hidden[i].size > k.kernarg_size) continue;
        memcpy(&v, kernarg + k.hidden[i].offset, k.hidden[i].size);
        bool bad;
        switch (k.hidden[i].kind) {
        case STUB_HIDDEN_QUEUE_PTR: bad = v != (uint64_t)(uintptr_t)&q->q; break;
        case STUB_HIDDEN_APERTURE: bad = v == 0; break;
        default: bad = v == 0 || !stub_hsa_accessible(q->agent, (const void *)(uintptr_t)v, 1); break;
        }
        if (bad) return fault(q, v);
    }
    if (stub_fault_fire(ROCPY_STUB_FAULT_MEMORY_FAULT))
        return fault(q, first_buffer ? first_buffer : (uint64_t)(uintptr_t)kernarg);
    if (!grid[0] || !grid[1] || !grid[2]) return DONE;   /* no work-items: nothing runs */
    rocpy_stub_dispatch_t d = {k.name, (void *)kernarg, k.kernarg_size, {grid[0], grid[1], grid[2]},
                               {block[0], block[1], block[2]}, p->group_segment_size, q->agent->device};
    uint64_t address;
    int rc = stub_kernel_run(&d, k.cpu, &address);
    if (rc == 0) return DONE;
    if (rc == STUB_KERNEL_MEMORY_FAULT) return fault(q, address);
    if (rc < 0)
        fprintf(stderr, "rocpy stub: kernel '%s' has no emulation (rocpy.stub.register_kernel); "
                        "the dispatch fails as an invalid code object\n", k.name);
    *status = rc < 0 ? HSA_STATUS_ERROR_INVALID_CODE_OBJECT : HSA_STATUS_ERROR_EXCEPTION;
    return FAILED;
}

/* Barrier-AND waits for every dependency to reach 0 in turn; barrier-OR for
 * any one of them.  Null handles are ignored, a dependency destroyed while
 * waited on counts as satisfied; queue destruction interrupts the wait. */
static outcome_t barrier(stub_queue_t *q, const hsa_barrier_and_packet_t *p, bool all, hsa_status_t *status) {
    stub_signal_t *sigs[6] = {q->interrupt};
    hsa_signal_condition_t conds[6] = {HSA_SIGNAL_CONDITION_NE};
    hsa_signal_value_t values[6] = {0};
    uint32_t n = 1;
    outcome_t out = DONE;
    for (int i = 0; i < 5; i++) {
        if (!p->dep_signal[i].handle) continue;
        if (!(sigs[n] = stub_sig_retain(p->dep_signal[i]))) {
            *status = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
            out = FAILED;
            goto release;
        }
        conds[n] = HSA_SIGNAL_CONDITION_EQ;
        values[n++] = 0;
    }
    if (all) {
        for (uint32_t i = 1; i < n && out == DONE; i++) {
            stub_signal_t *pair[2] = {sigs[0], sigs[i]};
            if (stub_sig_wait_any(2, pair, conds, values, UINT64_MAX, NULL) == 0) out = INTERRUPTED;
        }
    } else if (n > 1 && stub_sig_wait_any(n, sigs, conds, values, UINT64_MAX, NULL) == 0) {
        out = INTERRUPTED;
    }
release:
    for (uint32_t i = 1; i < n; i++) stub_sig_release(sigs[i]);
    return out;
}

/* Run one packet taken from the ring (its slot already released or not). */
static bool execute(stub_queue_t *q, const hsa_kernel_dispatch_packet_t *packet, uint64_t rd, bool in_ring) {
    unsigned type = packet->header & 0xff;
    stub_signal_t *completion = NULL;
    hsa_status_t status = HSA_STATUS_SUCCESS;
    outcome_t out = FAILED;
    uint64_t start = stub_now_ns();
    if (packet->completion_signal.handle && !(completion = stub_sig_retain(packet->completion_signal)))
        status = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    else if (stub_fault_fire(ROCPY_STUB_FAULT_QUEUE_ERROR))
        status = HSA_STATUS_ERROR_EXCEPTION;
    else if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH)
        out = dispatch(q, packet, &status);
    else if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR)
        out = barrier(q, (const hsa_barrier_and_packet_t *)packet, type == HSA_PACKET_TYPE_BARRIER_AND, &status);
    else
        /* agent dispatch, vendor specific, unknown: the command processor serves
         * none of them (ROCr AqlQueue::ExceptionHandler, EC_QUEUE_PACKET_UNSUPPORTED) */
        status = HSA_STATUS_ERROR_INVALID_PACKET_FORMAT;
    if (out == DONE) {
        uint64_t end = stub_now_ns();
        if (completion && atomic_load(&q->profiling))
            stub_sig_set_dispatch_time(completion, stub_hsa_gpu_ticks(q->agent, start),
                                       stub_hsa_gpu_ticks(q->agent, end));
        if (in_ring) {
            atomic_store_explicit(header_of(q, rd), HSA_PACKET_TYPE_INVALID, memory_order_release);
            atomic_store_explicit(&q->read_index, rd + 1, memory_order_release);
        }
        if (completion) stub_sig_add(completion, -1);
    } else if (out == FAILED) {
        report(q, status);
    }
    if (completion) stub_sig_release(completion);
    return out == DONE;
}

/* Run the held packets, the latest first; stop at one that fails. */
static void flush(stub_queue_t *q) {
    while (q->ndeferred && atomic_load(&q->state) == QUEUE_ACTIVE) {
        hsa_kernel_dispatch_packet_t p = q->deferred[--q->ndeferred];
        if (!execute(q, &p, 0, false)) break;
    }
    q->ndeferred = 0;
}

static void process(stub_queue_t *q) {
    uint64_t rd = atomic_load_explicit(&q->read_index, memory_order_relaxed);
    hsa_kernel_dispatch_packet_t packet;
    memcpy(&packet, (hsa_kernel_dispatch_packet_t *)q->q.base_address + (rd & (q->q.size - 1)), sizeof packet);
    unsigned type = packet.header & 0xff;
    bool barrier_bit = (packet.header >> HSA_PACKET_HEADER_BARRIER) & 1;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH && !barrier_bit && rocpy_stub_aql_overlap(-1) &&
        q->ndeferred < STUB_AQL_MAX_DEFERRED) {
        q->deferred[q->ndeferred++] = packet;   /* fetched: the slot is free again */
        atomic_store_explicit(header_of(q, rd), HSA_PACKET_TYPE_INVALID, memory_order_release);
        atomic_store_explicit(&q->read_index, rd + 1, memory_order_release);
        return;
    }
    flush(q);   /* what is held runs before (barrier bit) or at least starts before this one */
    if (atomic_load(&q->state) == QUEUE_ACTIVE) execute(q, &packet, rd, true);
}

void *stub_aql_processor(void *arg) {
    stub_queue_t *q = arg;
    for (;;) {
        bool run_held = false;
        pthread_mutex_lock(&q->lock);
        for (;;) {
            if (q->stop) break;
            bool poll = false;
            if (atomic_load(&q->state) == QUEUE_ACTIVE) {
                atomic_store(&q->sleeping, true);
                atomic_thread_fence(memory_order_seq_cst);
                if (ready(q, &poll)) break;
            }
            if (q->ndeferred && !poll) {
                /* held packets: wait a little for more, then run them */
                uint64_t at = stub_now_ns() + OVERLAP_GRACE_NS;
                struct timespec ts = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
                if (pthread_cond_timedwait(&q->wake, &q->lock, &ts) != 0) {
                    run_held = true;
                    break;
                }
            } else if (poll) {
                uint64_t at = stub_now_ns() + POLL_NS;
                struct timespec ts = {(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
                pthread_cond_timedwait(&q->wake, &q->lock, &ts);
            } else {
                pthread_cond_wait(&q->wake, &q->lock);
            }
        }
        atomic_store(&q->sleeping, false);
        bool stop = q->stop, detached = q->detached;
        pthread_mutex_unlock(&q->lock);
        if (stop) {
            q->ndeferred = 0;   /* destroyed: what was held never runs, as on hardware */
            if (detached) stub_queue_free(q);
            return NULL;
        }
        if (run_held) flush(q);
        else process(q);
    }
}
