/* Interruptible waits for HIP streams, events and devices.
 *
 * HIP's synchronize calls block in C for as long as the work takes, with no
 * way back to Python: a Ctrl-C waits for the kernel.  rocpy_wait() turns one
 * such wait into short slices that Python calls in a loop (rocpy.hip._wait),
 * so signal handlers run between slices (KeyboardInterrupt within one slice),
 * the GIL released all the while (cffi releases it around every call):
 *
 *   1. spin: the query (hipStreamQuery / hipEventQuery) for up to spin_ns, so a
 *      short wait costs what a plain synchronize costs; a query error (a
 *      destroyed handle, a capture rule) is returned as the wait's.  Work that ends within
 *      the spin returns 0 there (the legacy null stream's query covers the
 *      blocking streams it waits for: hipamd makes the null stream wait for
 *      them, the stub's wait set includes them).  A device has no query: it
 *      goes to step 2 at once (a hand-off costs a few microseconds).
 *   2. hand-off: the blocking call itself (hipStreamSynchronize,
 *      hipEventSynchronize, hipDeviceSynchronize, with the device made current
 *      on that thread) runs on a helper thread of a small pool; the caller
 *      waits on the job's condition variable for slice_ns and returns.  Its
 *      status is the blocking call's own, so errors are the runtime's.
 *   3. later calls with the same job wait one more slice each (slice 0: a
 *      poll).  A caller that stops (KeyboardInterrupt) keeps polling the job
 *      later; the helper finishes the call whenever the work ends.
 *
 * The job holds the raw handle: the caller keeps the stream or event from
 * being destroyed until the job reports done (rocpy pins the handle).
 * The helper's calls set the helper thread's HIP "last error", not the
 * caller's: rocpy raises the status itself.
 */
#ifndef ROCPY_FAST_WAIT_H
#define ROCPY_FAST_WAIT_H

#include <stdint.h>

enum { ROCPY_WAIT_STREAM = 0, ROCPY_WAIT_EVENT = 1, ROCPY_WAIT_DEVICE = 2,
       /* hipStreamPerThread means the calling thread's stream: no helper can wait
        * for it, so this kind polls hipStreamQuery on the caller's thread (the
        * spin, then sleeps of 10 us doubling to 1 ms), slice by slice, never a job */
       ROCPY_WAIT_STREAM_POLL = 3 };

typedef struct rocpy_wait_job rocpy_wait_job;

/* One slice of a wait.
 *   *job == NULL, spin_ns > 0: spin on the query; 0 if done (status set),
 *       else 1 with *job still NULL: call again with spin_ns = 0 (after pinning).
 *   *job == NULL, spin_ns == 0: start the blocking call on a helper, wait slice_ns.
 *   *job != NULL: wait up to slice_ns more.
 * Returns 0 when the wait is over (*status: the call's status, *job freed and
 * NULL), 1 while it is not, -1 when no helper thread could be started
 * (*status untouched; the caller may block in the call itself). */
int rocpy_wait(rocpy_wait_job **job, int kind, void *handle, int device,
               uint64_t spin_ns, uint64_t slice_ns, int *status);

/* The device fast path: 1 when the legacy null stream and each of `streams`
 * (the streams the caller knows on the current device) report idle within
 * spin_ns; then hipDeviceSynchronize has nothing of theirs to wait for and the
 * caller makes it directly (only work on streams it does not know could still
 * block it).  0 otherwise: wait through ROCPY_WAIT_DEVICE. */
int rocpy_wait_streams_idle(void *const *streams, int n, uint64_t spin_ns);

/* Helper threads started so far, and how many are blocked in a call now. */
int rocpy_wait_helpers(int *busy);

#endif
