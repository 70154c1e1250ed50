/* The AQL submission fast path of rocpy.hsa.Queue.
 *
 * One rocpy_aql_queue per HSA queue: the queue and a kernarg ring (one large
 * allocation from the CPU agent's kernarg pool, cut into segments).  A
 * submission, all in C, with no Python in between:
 *
 *   1. kernarg space: bump-allocated in the current segment.  When it is
 *      full, the segment is closed by a barrier-AND packet (barrier bit set,
 *      no dependencies) whose completion signal is the segment's retire
 *      signal: it completes once every packet before it has completed, so
 *      the segment's arguments are dead then.  The next segment is reused
 *      only after its retire signal reached 0 (normally long ago).
 *   2. a slot: hsa_queue_add_write_index_scacq_screl; if the ring is full
 *      (index - read index >= size), ring the doorbell and wait for space.
 *   3. the packet body (bytes 4..63) is written, then the header and setup
 *      (bytes 0..3) are published with ONE 32-bit atomic release store, so
 *      the packet processor never sees a valid header over a stale body.
 *   4. the doorbell: hsa_signal_store_screlease(doorbell, index), once per
 *      call (a batch writes N packets and rings once).
 *
 * Packets come from Python as 64-byte templates (hsa_kernel_dispatch_packet_t
 * or a barrier packet, header included); C fills in the kernarg address
 * (dispatch packets with kernarg bytes only) and the completion signal.
 *
 * Not thread-safe: rocpy.hsa.Queue calls in under its own lock.  The Python
 * layer keeps alive what a segment's dispatches use until rocpy_aql_retired
 * says the segment retired.
 */
#ifndef ROCPY_FAST_HSA_AQL_H
#define ROCPY_FAST_HSA_AQL_H

#include <stdint.h>

#include <hsa/hsa.h>

typedef struct rocpy_aql_queue rocpy_aql_queue;

/* Errors of the submission calls (negative; >= 0 is a kernarg generation). */
#define ROCPY_AQL_TOO_LARGE (-1)     /* kernarg bytes larger than one segment */
#define ROCPY_AQL_FAILED (-2)        /* the queue failed (rocpy_aql_set_error) while waiting */
#define ROCPY_AQL_BAD_RECORD (-3)    /* a malformed batch record */
#define ROCPY_AQL_FULL (-4)          /* no ring space (or kernarg segment) within one wait
                                      * slice: nothing of the failing packet was submitted;
                                      * retry (rocpy_aql_done says how many went before) */

/* A submission state over `queue`; the kernarg ring is `kernarg_bytes` at
 * `kernarg_base` (NULL/0: no ring, kernels with arguments are refused) cut
 * into `segments` segments, each with its retire signal (created at 0, owned
 * by the caller, destroyed after rocpy_aql_free).  `wait_ticks` bounds each
 * blocking wait (in timestamp ticks) so that errors are noticed.  NULL when
 * out of memory. */
rocpy_aql_queue *rocpy_aql_create(hsa_queue_t *queue, void *kernarg_base, uint64_t kernarg_bytes,
                                  uint32_t segments, const hsa_signal_t *retire,
                                  uint64_t wait_ticks);
void rocpy_aql_free(rocpy_aql_queue *q);

/* Mark the queue failed (from the queue's error callback): waits for ring
 * space or for a segment end with ROCPY_AQL_FAILED. */
void rocpy_aql_set_error(rocpy_aql_queue *q, int32_t status);
int32_t rocpy_aql_error(const rocpy_aql_queue *q);

/* One packet: `packet` is a 64-byte template; `kernarg_size` bytes of
 * `kernarg` are copied to the ring (0: none); `completion` replaces the
 * template's completion signal unless it is 0.  Rings the doorbell.  Returns
 * the kernarg generation used (>= 0) or a ROCPY_AQL_* error. */
int64_t rocpy_aql_dispatch(rocpy_aql_queue *q, const char *packet, const char *kernarg,
                           uint32_t kernarg_size, uint64_t completion);

/* A batch of `count` records, back to back in `records` (`nbytes` long):
 * each is a 64-byte packet template whose bytes 48..55 (reserved2, zero when
 * published) hold the kernarg size K, followed by K bytes of kernarg padded
 * to a multiple of 16.  Rings the doorbell once (and before any wait).
 * Returns the last kernarg generation used or a ROCPY_AQL_* error (the
 * packets before the failing one stay submitted; *done says how many). */
int64_t rocpy_aql_submit(rocpy_aql_queue *q, const char *records, uint64_t nbytes, uint32_t count,
                         uint32_t *done);

/* The same record `count` times (one packet, one kernarg block): the
 * cheapest way to launch one kernel many times. */
int64_t rocpy_aql_submit_repeat(rocpy_aql_queue *q, const char *packet, const char *kernarg,
                                uint32_t kernarg_size, uint64_t completion, uint32_t count);

/* The kernarg generation in use now, and whether the segments of
 * generation `gen` (< the current one) have retired (their closing barrier
 * completed, or the queue failed: it runs nothing more). */
uint64_t rocpy_aql_generation(const rocpy_aql_queue *q);
/* Packets the last submission call published (all, or those before its error). */
uint32_t rocpy_aql_done(const rocpy_aql_queue *q);
int rocpy_aql_retired(const rocpy_aql_queue *q, uint64_t gen);

/* Close the current segment now (a barrier that completes after everything
 * submitted so far) and move to the next one; returns the new generation or
 * a ROCPY_AQL_* error.  rocpy uses it to synchronize a queue. */
int64_t rocpy_aql_close_segment(rocpy_aql_queue *q);

/* The benchmark's C reference: `n` kernel dispatch packets built from
 * scalars (1-D grid of `grid` work-items, `block` per group) and written
 * exactly as rocpy_aql_dispatch writes them (kernarg copied into the ring,
 * slot reserved, body, header published, doorbell rung after each packet,
 * or once at the end with ring_each = 0).  Returns the elapsed nanoseconds
 * (CLOCK_MONOTONIC), or a ROCPY_AQL_* error. */
int64_t rocpy_bench_dispatch_loop(rocpy_aql_queue *q, uint64_t n, uint64_t kernel_object,
                                  const char *kernarg, uint32_t kernarg_size, uint32_t grid,
                                  uint16_t block, int ring_each);

#endif
