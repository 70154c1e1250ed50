/* The runtime's one async-handler thread (ROCr Runtime::AsyncEventsLoop):
 * hsa_amd_signal_async_handler callbacks, hsa_amd_async_function, and the
 * runtime's own deferred work (queue error callbacks, GPU memory faults and
 * the system event handlers).  Started on first use, stopped by the last
 * hsa_shut_down. */
#include "hsa_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct handler {
    stub_signal_t *sig;              /* retained */
    hsa_signal_condition_t cond;
    hsa_signal_value_t value;
    hsa_amd_signal_handler fn;
    void *arg;
} handler_t;

typedef struct work {
    void (*fn)(void *);
    void *arg;
    struct work *next;
} work_t;

typedef struct instance {
    pthread_t thread;
    stub_signal_t *control;          /* stored non-zero to wake the thread */
    bool stop;                       /* under lock */
    handler_t *pending;              /* new registrations, under lock */
    size_t npending, cap_pending;
    work_t *work_head, *work_tail;   /* under lock */
} instance_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static instance_t *current;
static pthread_t current_thread;
static bool has_thread;

typedef struct sys_handler {
    hsa_amd_system_event_callback_t fn;
    void *data;
} sys_handler_t;

static pthread_mutex_t sys_lock = PTHREAD_MUTEX_INITIALIZER;
static sys_handler_t *sys_handlers;
static size_t nsys;

bool stub_hsa_async_is_current(void) {
    pthread_mutex_lock(&lock);
    bool me = has_thread && pthread_equal(current_thread, pthread_self());
    pthread_mutex_unlock(&lock);
    return me;
}

static void remove_at(handler_t *list, size_t *n, size_t i) {
    stub_sig_release(list[i].sig);
    list[i] = list[--*n];
}

/* Call every handler whose condition holds now; drop those that return
 * false and those whose signal was destroyed. */
static void run_ready(handler_t *active, size_t *n) {
    for (size_t i = 0; i < *n;) {
        if (!stub_sig_alive(active[i].sig)) {
            remove_at(active, n, i);
            continue;
        }
        hsa_signal_value_t v;
        stub_signal_t *s = active[i].sig;
        if (stub_sig_wait_any(1, &s, &active[i].cond, &active[i].value, 0, &v) == 0 &&
            !active[i].fn(v, active[i].arg)) {
            remove_at(active, n, i);
            continue;
        }
        i++;
    }
}

static void *loop(void *p) {
    instance_t *in = p;
    handler_t *active = NULL;
    size_t nactive = 0, cap = 0;
    stub_signal_t **sigs = NULL;
    hsa_signal_condition_t *conds = NULL;
    hsa_signal_value_t *values = NULL;
    for (;;) {
        pthread_mutex_lock(&lock);
        if (!sigs || nactive + in->npending > cap) {
            cap = (nactive + in->npending) * 2 + 16;
            active = realloc(active, cap * sizeof *active);
            sigs = realloc(sigs, (cap + 1) * sizeof *sigs);
            conds = realloc(conds, (cap + 1) * sizeof *conds);
            values = realloc(values, (cap + 1) * sizeof *values);
            if (!active || !sigs || !conds || !values) stub_abort("async handler thread", "out of memory");
        }
        memcpy(active + nactive, in->pending, in->npending * sizeof *active);
        nactive += in->npending;
        in->npending = 0;
        work_t *work = in->work_head;
        in->work_head = in->work_tail = NULL;
        bool stop = in->stop;
        pthread_mutex_unlock(&lock);
        while (work) {
            work_t *next = work->next;
            work->fn(work->arg);
            free(work);
            work = next;
        }
        if (stop) break;
        run_ready(active, &nactive);
        sigs[0] = in->control;
        conds[0] = HSA_SIGNAL_CONDITION_NE;
        values[0] = 0;
        for (size_t i = 0; i < nactive; i++) {
            sigs[1 + i] = active[i].sig;
            conds[1 + i] = active[i].cond;
            values[1 + i] = active[i].value;
        }
        int r = stub_sig_wait_any((uint32_t)(1 + nactive), sigs, conds, values, UINT64_MAX, NULL);
        if (r == 0) stub_sig_store(in->control, 0);
        /* r > 0 or STUB_WAIT_DEAD: run_ready at the top handles both */
    }
    for (size_t i = 0; i < nactive; i++) stub_sig_release(active[i].sig);
    for (size_t i = 0; i < in->npending; i++) stub_sig_release(in->pending[i].sig);
    free(active);
    free(sigs);
    free(conds);
    free(values);
    free(in->pending);
    stub_sig_destroy_internal(in->control);
    free(in);
    return NULL;
}

/* caller holds lock */
static instance_t *instance(void) {
    if (current) return current;
    instance_t *in = calloc(1, sizeof *in);
    if (!in) return NULL;
    if (!(in->control = stub_sig_create_internal(0))) {
        free(in);
        return NULL;
    }
    if (pthread_create(&in->thread, NULL, loop, in) != 0) {
        stub_sig_destroy_internal(in->control);
        free(in);
        return NULL;
    }
    current = in;
    current_thread = in->thread;
    has_thread = true;
    return in;
}

hsa_status_t stub_hsa_async_post(void (*fn)(void *), void *arg) {
    work_t *w = malloc(sizeof *w);
    if (!w) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *w = (work_t){fn, arg, NULL};
    pthread_mutex_lock(&lock);
    instance_t *in = instance();
    if (!in) {
        pthread_mutex_unlock(&lock);
        free(w);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    if (in->work_tail) in->work_tail->next = w; else in->work_head = w;
    in->work_tail = w;
    stub_sig_store(in->control, 1);
    pthread_mutex_unlock(&lock);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t signal, hsa_signal_condition_t cond,
                                          hsa_signal_value_t value, hsa_amd_signal_handler handler, void *arg) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(handler);
    hsa_status_t st = stub_sig_check(signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    stub_signal_t *s = stub_sig_retain(signal);
    if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
    pthread_mutex_lock(&lock);
    instance_t *in = instance();
    if (in && in->npending == in->cap_pending) {
        size_t cap = in->cap_pending ? in->cap_pending * 2 : 16;
        handler_t *n = realloc(in->pending, cap * sizeof *n);
        if (n) {
            in->pending = n;
            in->cap_pending = cap;
        }
    }
    if (!in || in->npending == in->cap_pending) {
        pthread_mutex_unlock(&lock);
        stub_sig_release(s);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    in->pending[in->npending++] = (handler_t){s, cond, value, handler, arg};
    stub_sig_store(in->control, 1);
    pthread_mutex_unlock(&lock);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_async_function(void (*callback)(void *arg), void *arg) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    return stub_hsa_async_post(callback, arg);
}

void stub_hsa_async_shutdown(void) {
    pthread_mutex_lock(&lock);
    instance_t *in = current;
    pthread_t thread = current_thread;   /* the instance frees itself when its thread ends */
    current = NULL;
    bool self = has_thread && pthread_equal(current_thread, pthread_self());
    has_thread = false;
    if (in) {
        in->stop = true;
        stub_sig_store(in->control, 1);
    }
    pthread_mutex_unlock(&lock);
    /* from a handler on the thread itself: it ends when the handler returns */
    if (in && self) pthread_detach(thread);
    else if (in) pthread_join(thread, NULL);
    pthread_mutex_lock(&sys_lock);
    free(sys_handlers);
    sys_handlers = NULL;
    nsys = 0;
    pthread_mutex_unlock(&sys_lock);
}

/* ---- system events ---------------------------------------------------------- */

hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t callback, void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    pthread_mutex_lock(&sys_lock);
    sys_handler_t *n = realloc(sys_handlers, (nsys + 1) * sizeof *n);
    if (n) {
        sys_handlers = n;
        sys_handlers[nsys++] = (sys_handler_t){callback, data};
    }
    pthread_mutex_unlock(&sys_lock);
    return n ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

typedef struct fault {
    const stub_hsa_agent_t *agent;
    uint64_t address;
    uint32_t reason;
} fault_t;

static void deliver_fault(void *p) {
    fault_t f = *(fault_t *)p;
    free(p);
    pthread_mutex_lock(&sys_lock);
    size_t n = nsys;
    sys_handler_t *copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy) memcpy(copy, sys_handlers, n * sizeof *copy);
    pthread_mutex_unlock(&sys_lock);
    hsa_amd_event_t event;
    memset(&event, 0, sizeof event);
    event.event_type = HSA_AMD_GPU_MEMORY_FAULT_EVENT;
    event.memory_fault.agent = stub_hsa_agent_handle(f.agent);
    event.memory_fault.virtual_address = f.address;
    event.memory_fault.fault_reason_mask = f.reason;
    bool handled = false;
    for (size_t i = 0; copy && i < n; i++)
        if (copy[i].fn(&event, copy[i].data) == HSA_STATUS_SUCCESS) handled = true;
    free(copy);
    if (handled) return;
    stub_abort("GPU memory fault",
               "Memory access fault by GPU node-%u (Agent handle: %p) on address %p. Reason: %s.", f.agent->node,
               (void *)f.agent, (void *)(uintptr_t)f.address,
               f.reason & HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT ? "Page not present or supervisor privilege"
                                                                 : "Unknown");
}

void stub_hsa_memory_fault(const stub_hsa_agent_t *agent, uint64_t address, uint32_t reason) {
    fault_t *f = malloc(sizeof *f);
    if (f) *f = (fault_t){agent, address, reason};
    if (!f || stub_hsa_async_post(deliver_fault, f) != HSA_STATUS_SUCCESS)
        stub_abort("GPU memory fault", "Memory access fault by GPU node-%u on address %p", agent->node,
                   (void *)(uintptr_t)address);
}
