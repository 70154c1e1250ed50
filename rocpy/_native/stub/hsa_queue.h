/* AQL queues, private to hsa_queue.c and hsa_aql.c.
 *
 * The public hsa_queue_t is the first member of the stub's queue, so the
 * pointer hsa_queue_create returns is the queue itself; its ring, doorbell
 * signal, size and id are real.  The read and write indices live here, each
 * on its own cache line, as in ROCr's amd_queue_t. */
#ifndef ROCPY_STUB_HSA_QUEUE_H
#define ROCPY_STUB_HSA_QUEUE_H

#include "hsa_internal.h"

#include <stdatomic.h>

typedef void (*stub_queue_callback_t)(hsa_status_t status, hsa_queue_t *source, void *data);

#define STUB_AQL_MAX_DEFERRED 64
#define STUB_CU_MASK_DWORDS 16   /* 512 CUs */

typedef enum queue_state { QUEUE_ACTIVE, QUEUE_INACTIVE } queue_state_t;

typedef struct stub_queue {
    hsa_queue_t q;
    _Alignas(64) _Atomic uint64_t write_index;
    _Alignas(64) _Atomic uint64_t read_index;
    _Alignas(64) stub_hsa_agent_t *agent;
    stub_signal_t *doorbell;
    stub_signal_t *interrupt;        /* non-zero: stop waiting on barriers */
    stub_queue_callback_t callback;  /* NULL: ROCr's default handler */
    void *callback_data;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    _Atomic bool sleeping;           /* the processor is (about to be) asleep */
    bool stop;                       /* under lock */
    bool detached;                   /* destroyed from its own thread */
    _Atomic int state;               /* queue_state_t */
    _Atomic bool suspended;          /* stopped by an error (ROCr AqlQueue::Suspend) */
    _Atomic bool profiling;
    _Atomic int priority;
    /* ROCr AqlQueue::cu_mask_: ceil(CUs / 32) dwords once set (all CUs at
     * creation); STUB_CU_MASK_DWORDS covers the largest agent (MI300X: 304) */
    uint32_t cu_mask[STUB_CU_MASK_DWORDS];
    uint32_t cu_mask_dwords;
    struct stub_queue *next;         /* the registry */
    /* overlap mode (hsa_aql.c): packets without the barrier bit taken from
     * the ring but not yet run; the processor thread's own */
    uint32_t ndeferred;
    hsa_kernel_dispatch_packet_t deferred[STUB_AQL_MAX_DEFERRED];
} stub_queue_t;

/* The packet processor thread. */
void *stub_aql_processor(void *queue);
/* Wake the processor if it sleeps (the doorbell hook). */
void stub_aql_ring(void *queue);
/* Free what a stopped queue holds. */
void stub_queue_free(stub_queue_t *q);

#endif
