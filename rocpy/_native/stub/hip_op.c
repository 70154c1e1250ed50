/* Stream operations: reference-counted units of work a stream's worker runs
 * in FIFO order.  An op may depend on ops of other streams (the legacy null
 * stream's implicit synchronisation, hipStreamWaitEvent); it waits for them
 * on the worker before it runs.  A dependency is always an op submitted
 * before the dependent one, so the waits never form a cycle. */
#include "hip_internal.h"

/* one lock and condition for every completion wait: completions only take it
 * when someone waits */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;

hip_op_t *hip_op_new(hip_op_fn run, size_t payload) {
    hip_op_t *op = calloc(1, sizeof *op + payload);
    if (!op) return NULL;
    atomic_init(&op->refs, 1);
    atomic_init(&op->done, 0);
    atomic_init(&op->waiters, 0);
    op->run = run;
    return op;
}

hip_op_t *hip_op_ref(hip_op_t *op) {
    if (op) atomic_fetch_add(&op->refs, 1);
    return op;
}

void hip_op_unref(hip_op_t *op) {
    if (!op || atomic_fetch_sub(&op->refs, 1) != 1) return;
    for (size_t i = 0; i < op->ndeps; i++) hip_op_unref(op->deps[i]);
    free(op->deps);
    if (op->fini) op->fini(op);
    free(op);
}

bool hip_op_add_dep(hip_op_t *op, hip_op_t *dep) {
    if (!dep || hip_op_done(dep)) return true;
    hip_op_t **d = realloc(op->deps, (op->ndeps + 1) * sizeof *d);
    if (!d) return false;
    op->deps = d;
    op->deps[op->ndeps++] = hip_op_ref(dep);
    return true;
}

bool hip_op_done(const hip_op_t *op) { return atomic_load(&op->done) != 0; }

void hip_op_wait(hip_op_t *op) {
    if (hip_op_done(op)) return;
    pthread_mutex_lock(&done_lock);
    atomic_fetch_add(&op->waiters, 1);
    while (!hip_op_done(op)) pthread_cond_wait(&done_cond, &done_lock);
    atomic_fetch_sub(&op->waiters, 1);
    pthread_mutex_unlock(&done_lock);
}

static void complete(hip_op_t *op) {
    op->end_ns = stub_now_ns();
    atomic_store(&op->done, 1);
    /* a waiter registers before it checks done, so one of us sees the other */
    if (atomic_load(&op->waiters) > 0) {
        pthread_mutex_lock(&done_lock);
        pthread_cond_broadcast(&done_cond);
        pthread_mutex_unlock(&done_lock);
    }
}

void hip_op_execute(void *p) {
    hip_op_t *op = p;
    for (size_t i = 0; i < op->ndeps; i++) hip_op_wait(op->deps[i]);
    if (op->run) op->run(op);
    complete(op);
    hip_op_unref(op);
}
