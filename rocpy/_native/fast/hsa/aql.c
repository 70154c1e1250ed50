/* The AQL submission fast path (aql.h describes it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "aql.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PACKET_BYTES 64u
#define KERNARG_ALIGN 64u            /* one cache line per dispatch's arguments */
#define RECORD_ALIGN 16u             /* batch records: kernarg bytes padded to this */
#define OFF_KERNARG 40u              /* hsa_kernel_dispatch_packet_t.kernarg_address */
#define OFF_RESERVED2 48u            /* reserved2 in dispatch and barrier packets */
#define OFF_COMPLETION 56u           /* completion_signal in every packet type */

struct rocpy_aql_queue {
    hsa_queue_t *queue;
    char *ring;                      /* queue->base_address */
    uint64_t mask;                   /* queue->size - 1 */
    uint64_t size;
    hsa_signal_t doorbell;
    char *kbase;                     /* the kernarg ring; NULL: none */
    uint64_t seg_bytes;
    uint32_t nseg;
    uint32_t seg;                    /* the segment in use */
    uint64_t off;                    /* bytes used in it */
    uint64_t gen;                    /* segments opened so far - 1 (atomic: read by other threads) */
    uint64_t wait_ticks;
    uint64_t wait_ns;                /* the same slice in ns (waits for ring space) */
    uint32_t done;                   /* packets the last submission call published */
    int32_t error;                   /* atomic: non-zero once the queue failed */
    hsa_signal_t retire[];           /* one per segment: 1 while its closing barrier runs */
};

rocpy_aql_queue *rocpy_aql_create(hsa_queue_t *queue, void *kernarg_base, uint64_t kernarg_bytes,
                                  uint32_t segments, const hsa_signal_t *retire,
                                  uint64_t wait_ticks) {
    if (!queue || (kernarg_base && (!segments || !retire))) return NULL;
    if (!kernarg_base) segments = 0;
    rocpy_aql_queue *q = calloc(1, sizeof *q + segments * sizeof(hsa_signal_t));
    if (!q) return NULL;
    q->queue = queue;
    q->ring = queue->base_address;
    q->size = queue->size;
    q->mask = q->size - 1;
    q->doorbell = queue->doorbell_signal;
    q->kbase = kernarg_base;
    q->nseg = segments;
    q->seg_bytes = segments ? kernarg_bytes / segments / KERNARG_ALIGN * KERNARG_ALIGN : 0;
    q->wait_ticks = wait_ticks ? wait_ticks : 1;
    uint64_t freq = 0;
    hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq);
    q->wait_ns = freq ? (uint64_t)((double)q->wait_ticks * 1e9 / (double)freq) : 50000000ull;
    if (segments) memcpy(q->retire, retire, segments * sizeof(hsa_signal_t));
    return q;
}

void rocpy_aql_free(rocpy_aql_queue *q) { free(q); }

void rocpy_aql_set_error(rocpy_aql_queue *q, int32_t status) {
    __atomic_store_n(&q->error, status ? status : -1, __ATOMIC_RELEASE);
}

int32_t rocpy_aql_error(const rocpy_aql_queue *q) { return __atomic_load_n(&q->error, __ATOMIC_ACQUIRE); }

uint64_t rocpy_aql_generation(const rocpy_aql_queue *q) { return __atomic_load_n(&q->gen, __ATOMIC_ACQUIRE); }

int rocpy_aql_retired(const rocpy_aql_queue *q, uint64_t gen) {
    uint64_t now = rocpy_aql_generation(q);
    if (__atomic_load_n(&q->error, __ATOMIC_ACQUIRE)) return 1;   /* a failed queue runs nothing more */
    if (gen >= now) return 0;                      /* still being filled */
    if (!q->nseg || gen + q->nseg <= now) return 1;   /* no ring, or its segment was reused */
    return hsa_signal_load_scacquire(q->retire[gen % q->nseg]) == 0;
}

/* ---- the four steps ------------------------------------------------------------ */

static inline void ring_doorbell(rocpy_aql_queue *q, int64_t index) {
    if (index >= 0) hsa_signal_store_screlease(q->doorbell, (hsa_signal_value_t)index);
}

/* Waiting for ring space (nothing signals it): yield a little, then sleep
 * from 20 us doubling to 1 ms, so a ring that stays full costs no CPU. */
static void backoff(unsigned *spins) {
    if (++*spins < 64) {
        sched_yield();
        return;
    }
    unsigned k = *spins - 64 < 6 ? *spins - 64 : 6;
    long ns = 20000L << k;
    struct timespec ts = {0, ns > 1000000L ? 1000000L : ns};
    nanosleep(&ts, NULL);
}

static int64_t now_ns(void);

/* Reserve one slot, waiting for space if the ring is full; `*last` is the
 * last packet this call published and has not rung for yet (-1: none).  The
 * slot is claimed only once there is space (a CAS on the write index), so a
 * wait that lasts a whole slice can give up with nothing claimed:
 * ROCPY_AQL_FULL, and the caller (Python) retries, taking Ctrl-C between. */
static int reserve(rocpy_aql_queue *q, uint64_t *index, int64_t *last) {
    unsigned spins = 0;
    uint64_t since = 0;
    for (;;) {
        uint64_t w = hsa_queue_load_write_index_relaxed(q->queue);
        if (w - hsa_queue_load_read_index_scacquire(q->queue) < q->size) {
            if (hsa_queue_cas_write_index_scacq_screl(q->queue, w, w + 1) == w) {
                *index = w;
                return 0;
            }
            continue;   /* another producer took it */
        }
        ring_doorbell(q, *last);
        *last = -1;
        if (__atomic_load_n(&q->error, __ATOMIC_ACQUIRE)) return ROCPY_AQL_FAILED;
        uint64_t t = (uint64_t)now_ns();
        if (!since) since = t;
        else if (t - since >= q->wait_ns) return ROCPY_AQL_FULL;
        backoff(&spins);
    }
}

/* Body first, then header + setup in one atomic release store.  The sfence:
 * with the ring in device memory (HSA_ALLOCATE_QUEUE_DEV_MEM=1) the body's
 * stores go through a write-combining mapping that a release store does not
 * order, so the header could reach the GPU before the body; ROCr puts an
 * sfence before its header stores there (AqlQueue, amd_aql_queue.cpp). */
static inline void publish(rocpy_aql_queue *q, uint64_t index, const char *packet, const void *kernarg,
                           uint64_t completion) {
    char local[PACKET_BYTES];
    memcpy(local, packet, PACKET_BYTES);
    if (kernarg) memcpy(local + OFF_KERNARG, &kernarg, sizeof kernarg);
    memset(local + OFF_RESERVED2, 0, 8);
    if (completion) memcpy(local + OFF_COMPLETION, &completion, sizeof completion);
    char *slot = q->ring + (index & q->mask) * PACKET_BYTES;
    memcpy(slot + 4, local + 4, PACKET_BYTES - 4);
    uint32_t header_and_setup;
    memcpy(&header_and_setup, local, sizeof header_and_setup);
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_sfence();
#endif
    __atomic_store_n((uint32_t *)slot, header_and_setup, __ATOMIC_RELEASE);
}

/* One slice of waiting for a kernarg segment to retire: ROCPY_AQL_FULL if it
 * has not (the caller retries from Python, so Ctrl-C gets through). */
static int wait_zero(rocpy_aql_queue *q, hsa_signal_t signal) {
    if (hsa_signal_wait_scacquire(signal, HSA_SIGNAL_CONDITION_EQ, 0, q->wait_ticks,
                                  HSA_WAIT_STATE_BLOCKED) == 0)
        return 0;
    return __atomic_load_n(&q->error, __ATOMIC_ACQUIRE) ? ROCPY_AQL_FAILED : ROCPY_AQL_FULL;
}

/* A barrier-AND packet with the barrier bit and no dependencies (completion
 * signal 0).  System-scope acquire and release fences: its completion is what
 * Queue.sync waits for, and work released only at agent scope
 * (fences='agent') becomes visible to the host at this packet's release. */
static void barrier_and_packet(char packet[PACKET_BYTES]) {
    memset(packet, 0, PACKET_BYTES);
    uint16_t header = (uint16_t)((HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                                 (1u << HSA_PACKET_HEADER_BARRIER) |
                                 (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                                 (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
    memcpy(packet, &header, sizeof header);
}

/* Close the current segment with a barrier-AND packet and open the next. */
static int64_t next_segment(rocpy_aql_queue *q, int64_t *last) {
    uint32_t next = (q->seg + 1) % q->nseg;
    int rc;
    if (next != q->seg && hsa_signal_load_scacquire(q->retire[next]) != 0) {
        /* wait for the next segment before closing this one: a wait that gives up
         * (ROCPY_AQL_FULL) has changed nothing, and the retry starts over */
        ring_doorbell(q, *last);
        *last = -1;
        if ((rc = wait_zero(q, q->retire[next]))) return rc;
    }
    hsa_signal_t retire = q->retire[q->seg];
    hsa_signal_store_relaxed(retire, 1);
    char barrier[PACKET_BYTES];
    barrier_and_packet(barrier);
    uint64_t index;
    rc = reserve(q, &index, last);
    if (rc) {
        hsa_signal_store_relaxed(retire, 0);
        return rc;
    }
    publish(q, index, barrier, NULL, retire.handle);
    *last = (int64_t)index;
    /* one segment: it is its own next; a retry after a FULL here closes it again
     * with another barrier, harmless (no packet was added in between) */
    if (hsa_signal_load_scacquire(q->retire[next]) != 0) {
        ring_doorbell(q, *last);
        *last = -1;
        if ((rc = wait_zero(q, q->retire[next]))) return rc;
    }
    q->seg = next;
    q->off = 0;
    return (int64_t)__atomic_add_fetch(&q->gen, 1, __ATOMIC_RELEASE);
}

static int64_t kernarg_alloc(rocpy_aql_queue *q, uint64_t size, char **out, int64_t *last) {
    uint64_t need = (size + KERNARG_ALIGN - 1) / KERNARG_ALIGN * KERNARG_ALIGN;
    if (!q->kbase || need > q->seg_bytes) return ROCPY_AQL_TOO_LARGE;
    if (q->off + need > q->seg_bytes) {
        int64_t rc = next_segment(q, last);
        if (rc < 0) return rc;
    }
    *out = q->kbase + (uint64_t)q->seg * q->seg_bytes + q->off;
    q->off += need;
    return 0;
}

static inline int is_dispatch(const char *packet) {
    return (uint8_t)packet[0] == HSA_PACKET_TYPE_KERNEL_DISPATCH;
}

/* One packet of a call: kernarg (if any), slot, body + header. */
static int64_t put(rocpy_aql_queue *q, const char *packet, const char *kernarg, uint64_t kernarg_size,
                   uint64_t completion, int64_t *last) {
    char *args = NULL;
    if (kernarg_size && is_dispatch(packet)) {
        int64_t rc = kernarg_alloc(q, kernarg_size, &args, last);
        if (rc < 0) return rc;
        memcpy(args, kernarg, kernarg_size);
    }
    uint64_t index;
    int rc = reserve(q, &index, last);
    if (rc) return rc;
    publish(q, index, packet, args, completion);
    *last = (int64_t)index;
    return 0;
}

static inline int64_t finish(rocpy_aql_queue *q, int64_t rc, int64_t last) {
    ring_doorbell(q, last);
    return rc < 0 ? rc : (int64_t)q->gen;
}

uint32_t rocpy_aql_done(const rocpy_aql_queue *q) { return q->done; }

int64_t rocpy_aql_dispatch(rocpy_aql_queue *q, const char *packet, const char *kernarg,
                           uint32_t kernarg_size, uint64_t completion) {
    int64_t last = -1;
    int64_t rc = put(q, packet, kernarg, kernarg_size, completion, &last);
    q->done = rc < 0 ? 0 : 1;
    return finish(q, rc, last);
}

int64_t rocpy_aql_submit(rocpy_aql_queue *q, const char *records, uint64_t nbytes, uint32_t count,
                         uint32_t *done) {
    int64_t last = -1, rc = 0;
    const char *p = records, *end = records + nbytes;
    uint32_t i = 0;
    for (; i < count; i++) {
        if ((uint64_t)(end - p) < PACKET_BYTES) {
            rc = ROCPY_AQL_BAD_RECORD;
            break;
        }
        uint64_t size;
        memcpy(&size, p + OFF_RESERVED2, sizeof size);
        uint64_t padded = (size + RECORD_ALIGN - 1) / RECORD_ALIGN * RECORD_ALIGN;
        if (padded < size || (uint64_t)(end - p) - PACKET_BYTES < padded) {
            rc = ROCPY_AQL_BAD_RECORD;
            break;
        }
        if ((rc = put(q, p, p + PACKET_BYTES, size, 0, &last)) < 0) break;
        p += PACKET_BYTES + padded;
    }
    if (done) *done = i;
    q->done = i;
    return finish(q, rc, last);
}

int64_t rocpy_aql_submit_repeat(rocpy_aql_queue *q, const char *packet, const char *kernarg,
                                uint32_t kernarg_size, uint64_t completion, uint32_t count) {
    int64_t last = -1, rc = 0;
    uint32_t i = 0;
    for (; i < count; i++)
        if ((rc = put(q, packet, kernarg, kernarg_size, completion, &last)) < 0) break;
    q->done = i;
    return finish(q, rc, last);
}

int64_t rocpy_aql_close_segment(rocpy_aql_queue *q) {
    int64_t last = -1, rc;
    if (!q->nseg) {
        /* no kernarg ring: a plain barrier still orders the queue */
        char barrier[PACKET_BYTES];
        barrier_and_packet(barrier);
        rc = put(q, barrier, NULL, 0, 0, &last);
    } else {
        rc = next_segment(q, &last);
    }
    return finish(q, rc, last);
}

/* ---- the benchmark's C reference ------------------------------------------------ */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t rocpy_bench_dispatch_loop(rocpy_aql_queue *q, uint64_t n, uint64_t kernel_object,
                                  const char *kernarg, uint32_t kernarg_size, uint32_t grid,
                                  uint16_t block, int ring_each) {
    int64_t start = now_ns(), last = -1, rc = 0;
    for (uint64_t i = 0; i < n && rc >= 0; i++) {
        hsa_kernel_dispatch_packet_t p;
        memset(&p, 0, sizeof p);
        p.header = (uint16_t)((HSA_PACKET_TYPE_KERNEL_DISPATCH << HSA_PACKET_HEADER_TYPE) |
                              (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                              (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
        p.setup = 1u << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
        p.workgroup_size_x = block;
        p.workgroup_size_y = p.workgroup_size_z = 1;
        p.grid_size_x = grid;
        p.grid_size_y = p.grid_size_z = 1;
        p.kernel_object = kernel_object;
        rc = put(q, (const char *)&p, kernarg, kernarg_size, 0, &last);
        if (ring_each && rc >= 0) {
            ring_doorbell(q, last);
            last = -1;
        }
    }
    ring_doorbell(q, last);
    return rc < 0 ? rc : now_ns() - start;
}
