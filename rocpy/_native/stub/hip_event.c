/* Events (hipamd hip_event.cpp, hip_event.hpp).  A record is a marker op on
 * the stream; its completion time is the event's timestamp.  An event never
 * recorded is complete (query and synchronize succeed) but has no time
 * (hipEventElapsedTime: hipErrorInvalidHandle).  Destroyed handles are
 * refused with hipErrorContextIsDestroyed, as ROCm/clr's event set does for
 * hipEventDestroy (5.2 dereferenced them). */
#include "hip_internal.h"

static hip_registry_t events = HIP_REGISTRY_INIT;

static void event_free(struct ihipEvent_t *e) {
    hip_capture_event_gone(e);
    if (e->ipc) hip_ipc_event_close(e->ipc);
    hip_op_unref(e->rec);   /* a pending record still completes */
    hip_ptrvec_free(&e->capture_nodes);
    pthread_mutex_destroy(&e->lock);
    e->magic = 0;
    free(e);
}

/* The last reference (the registry's, or that of a call which resolved the
 * event before another thread destroyed it) frees the event. */
static void event_unref(void *e) {
    if (atomic_fetch_sub(&((struct ihipEvent_t *)e)->refs, 1) == 1) event_free(e);
}

/* under the registry's lock: the event cannot be removed and freed meanwhile */
static bool retain(void *h, void *ctx) {
    (void)ctx;
    atomic_fetch_add(&((struct ihipEvent_t *)h)->refs, 1);
    return true;
}

hipError_t hip_event_resolve(hipEvent_t handle, struct ihipEvent_t **out) {
    if (!handle) return hipErrorInvalidHandle;
    if (!hip_registry_contains_if(&events, handle, retain, NULL)) return hipErrorContextIsDestroyed;
    hip_hold(handle, event_unref);   /* until the calling API call returns */
    *out = handle;
    return hipSuccess;
}

/* hipEventInterprocess only together with hipEventDisableTiming (ROCm/clr;
 * 5.2 accepted it alone), at most one release flag. */
hipError_t hip_event_create(hipEvent_t *event, unsigned flags) {
    const unsigned release = hipEventReleaseToDevice | hipEventReleaseToSystem;
    const unsigned supported = hipEventDefault | hipEventBlockingSync | hipEventDisableTiming |
                               hipEventInterprocess | release;
    if ((flags & ~supported) || (flags & release) == release ||
        ((flags & hipEventInterprocess) && !(flags & hipEventDisableTiming)))
        return hipErrorInvalidValue;
    struct ihipEvent_t *e = calloc(1, sizeof *e);
    if (!e) return hipErrorOutOfMemory;
    e->magic = HIP_MAGIC_EVENT;
    atomic_init(&e->refs, 1);   /* the registry's */
    e->flags = flags;
    e->device = hip_current_dev()->id;
    pthread_mutex_init(&e->lock, NULL);
    if (!hip_registry_add(&events, e)) {
        free(e);
        return hipErrorOutOfMemory;
    }
    *event = e;
    return hipSuccess;
}

hipError_t hipEventCreateWithFlags(hipEvent_t *event, unsigned flags) {
    HIP_INIT_API();
    if (!event) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_event_create(event, flags));
}

hipError_t hipEventCreate(hipEvent_t *event) {
    HIP_INIT_API();
    if (!event) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_event_create(event, hipEventDefault));
}

hipError_t hipEventDestroy(hipEvent_t event) {
    HIP_INIT_API();
    if (!event) HIP_RETURN(hipErrorInvalidHandle);
    if (!hip_registry_remove(&events, event)) HIP_RETURN(hipErrorContextIsDestroyed);
    event_unref(event);   /* freed now, or when the calls still using it return */
    HIP_RETURN(hipSuccess);
}

static hip_op_t *last_record(struct ihipEvent_t *e, uint64_t *stream_id, bool *on_null) {
    pthread_mutex_lock(&e->lock);
    hip_op_t *rec = hip_op_ref(e->rec);
    if (stream_id) *stream_id = e->rec_stream;
    if (on_null) *on_null = e->rec_on_null;
    pthread_mutex_unlock(&e->lock);
    return rec;
}

hipError_t hip_event_record_on(struct ihipEvent_t *e, hip_stream_t *s) {
    hip_op_t *op = hip_op_new(NULL, 0);
    if (!op) return hipErrorOutOfMemory;
    hip_capture_event_gone(e);
    pthread_mutex_lock(&e->lock);
    hip_op_unref(e->rec);
    e->rec = hip_op_ref(op);
    e->rec_stream = s->id;
    e->rec_on_null = s->is_null;
    pthread_mutex_unlock(&e->lock);
    hip_stream_submit(s, op);
    return hipSuccess;
}

/* hipamd's Event::streamWait: nothing to do for an event never recorded,
 * already complete, or recorded on the same stream. */
void hip_event_wait_on(struct ihipEvent_t *e, hip_stream_t *s) {
    uint64_t on;
    hip_op_t *rec = last_record(e, &on, NULL);
    if (rec && !hip_op_done(rec) && on != s->id) {
        hip_op_t *op = hip_op_new(NULL, 0);
        if (!op || !hip_op_add_dep(op, rec)) stub_abort("hipStreamWaitEvent", "out of memory");
        hip_stream_submit(s, op);
    }
    hip_op_unref(rec);
}

#ifdef ROCPY_HAVE_hipEventRecordWithFlags
/* hipEventRecordExternal in a capture: an event record node besides the
 * capture's own bookkeeping (hipamd hipEventRecord_common) */
static hipError_t make_record_node(hipGraph_t g, const hipGraphNode_t *deps, size_t n, void *arg,
                                   hipGraphNode_t *node) {
    return hipGraphAddEventRecordNode(node, g, deps, n, (hipEvent_t)arg);
}
#endif

static hipError_t record(hipEvent_t event, hipStream_t stream, bool external) {
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    bool capturing;
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(hip_stream_begin_op(stream, &s, &capturing));
    HIP_RETURN_ONFAIL(hip_event_resolve(event, &e));
    if (capturing) {
        hipError_t status = hip_capture_event_record(e, s);
#ifdef ROCPY_HAVE_hipEventRecordWithFlags
        if (status == hipSuccess && external)
            status = hip_capture_node(s, make_record_node, event);
#endif
        return status;
    }
    if (e->device != s->device) return hipErrorInvalidHandle;
    if (e->flags & hipEventInterprocess) return hip_ipc_event_record(e, s);
    return hip_event_record_on(e, s);
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
    HIP_INIT_API();
    HIP_RETURN(record(event, stream, false));
}

#ifdef ROCPY_HAVE_hipEventRecordWithFlags
/* hipamd hipEventRecord_common: the flags first, then a null event
 * (hipErrorInvalidHandle), then the stream */
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags) {
    HIP_INIT_API();
    if (flags != hipEventRecordDefault && flags != hipEventRecordExternal)
        HIP_RETURN(hipErrorInvalidValue);
    if (!event) HIP_RETURN(hipErrorInvalidHandle);
    HIP_RETURN(record(event, stream, flags == hipEventRecordExternal));
}
#endif

hipError_t hipEventQuery(hipEvent_t event) {
    HIP_INIT_API();
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(hip_event_resolve(event, &e));
    HIP_RETURN_ONFAIL(hip_capture_event_check(e));
    hip_op_t *rec = last_record(e, NULL, NULL);
    hipError_t status = !rec || hip_op_done(rec) ? hipSuccess : hipErrorNotReady;
    if (hip_ipc_event_pending(e)) status = hipErrorNotReady;
    hip_op_unref(rec);
    HIP_RETURN(status);
}

hipError_t hipEventSynchronize(hipEvent_t event) {
    HIP_INIT_API();
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(hip_event_resolve(event, &e));
    HIP_RETURN_ONFAIL(hip_capture_event_check(e));
    bool on_null;
    hip_op_t *rec = last_record(e, NULL, &on_null);
    /* ROCm/clr: waiting on an event of a user stream is unsafe while the
     * capture rules of this thread forbid synchronisation */
    if (rec && !on_null && hip_capture_ongoing(NULL)) {
        hip_op_unref(rec);
        HIP_RETURN(hipErrorStreamCaptureUnsupported);
    }
    if (rec) hip_op_wait(rec);
    hip_op_unref(rec);
    hip_ipc_event_wait(e);
    hip_mempool_release_freed(e->device);
    HIP_RETURN(hipSuccess);
}

static hipError_t elapsed(float *ms, struct ihipEvent_t *a, struct ihipEvent_t *b) {
    hip_op_t *ra = last_record(a, NULL, NULL), *rb = last_record(b, NULL, NULL);
    hipError_t status = hipSuccess;
    if (!ra || !rb || ((a->flags | b->flags) & hipEventDisableTiming))
        status = hipErrorInvalidHandle;
    else if (!hip_op_done(ra) || !hip_op_done(rb))
        status = hipErrorNotReady;
    else
        *ms = (float)((double)((int64_t)rb->end_ns - (int64_t)ra->end_ns) / 1e6);
    hip_op_unref(ra);
    hip_op_unref(rb);
    return status;
}

hipError_t hipEventElapsedTime(float *ms, hipEvent_t start, hipEvent_t stop) {
    HIP_INIT_API();
    if (!ms) HIP_RETURN(hipErrorInvalidValue);
    if (!start || !stop) HIP_RETURN(hipErrorInvalidHandle);
    struct ihipEvent_t *a, *b;
    HIP_RETURN_ONFAIL(hip_event_resolve(start, &a));
    HIP_RETURN_ONFAIL(hip_event_resolve(stop, &b));
    if (a->device != b->device) HIP_RETURN(hipErrorInvalidHandle);
    HIP_RETURN(elapsed(ms, a, b));
}

/* hipStreamWaitEvent_common: a captured event joins the capture; then the
 * handle, the flags and the stream are checked and the wait is enqueued.  An
 * unknown stream is hipErrorContextIsDestroyed after the flags (5.2-5.5),
 * hipErrorInvalidValue with them (5.6), hipErrorInvalidHandle before them
 * (5.7 on). */
static hipError_t stream_wait_event(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    struct ihipEvent_t *e;
    hipError_t status = hip_event_resolve(event, &e);
    if (status != hipSuccess) return status;
    hip_stream_t *s;
    status = hip_stream_resolve(stream, &s);
    hipError_t joined;
    if (status == hipSuccess && hip_capture_event_wait(e, s, &joined)) return joined;
    bool unknown = status == hipErrorContextIsDestroyed;
    if (unknown && stub_rule(STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_HANDLE)) return hipErrorInvalidHandle;
    if (flags != 0) return hipErrorInvalidValue;
    if (unknown && stub_rule(STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_VALUE)) return hipErrorInvalidValue;
    bool capturing;
    status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    hip_ipc_event_wait(e);      /* hipamd's IPCEvent::streamWait waits on the host */
    hip_event_wait_on(e, s);
    return hipSuccess;
}

hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(stream_wait_event(stream, event, flags));
}

hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN(stream_wait_event(stream ? stream : hipStreamPerThread, event, flags));
}
