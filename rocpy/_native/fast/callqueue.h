/* Callbacks from runtime threads to Python, without touching Python there.
 *
 * A runtime thread calls rocpy_callqueue_push() (directly or through one of
 * the trampolines below, whose userData is the token); rocpy's dispatcher
 * thread blocks in rocpy_callqueue_pop() with the GIL released and runs the
 * Python callable registered for each token.  Push takes a mutex for a few
 * stores (and, rarely, a realloc); it never waits for Python.
 */
#ifndef ROCPY_CALLQUEUE_H
#define ROCPY_CALLQUEUE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint64_t token;
    int64_t a;
    int64_t b;
} rocpy_callqueue_item;

/* 0 when queued; -1 when dropped (shut down, or out of memory or capacity). */
int rocpy_callqueue_push(uint64_t token, int64_t a, int64_t b);
/* Blocks until items are queued; copies up to max into out, oldest first.
 * Returns how many, or 0 once shut down and drained. */
int rocpy_callqueue_pop(rocpy_callqueue_item *out, int max);
/* Refuse further pushes and wake the popper once the queue is drained. */
void rocpy_callqueue_shutdown(void);
/* Accept pushes again after a shutdown. */
void rocpy_callqueue_reopen(void);
/* How many pushes were dropped since the process started. */
uint64_t rocpy_callqueue_dropped(void);

/* Trampolines, ABI-compatible with the runtimes' callback types; cast their
 * addresses (ffi.addressof(lib, name)) to the runtime's function type. */
/* hipHostFn_t: push(user, 0, 0) */
void rocpy_callqueue_host_fn(void *user);
/* hipStreamCallback_t: push(user, status, stream) */
void rocpy_callqueue_stream_cb(void *stream, int status, void *user);
/* hsa_amd_signal_handler: push(user, value, 0); false: fire once */
bool rocpy_callqueue_signal_handler(int64_t value, void *user);
/* hsa_queue_create's error callback: push(user, status, queue) */
void rocpy_callqueue_queue_error(int status, void *queue, void *user);

#endif
