/* Stream capture (hipamd hip_graph.cpp, hip_stream.cpp; the rules of
 * ROCm/clr, as 5.2's capture has no invalidation).
 *
 * A capture session belongs to its origin stream; streams that wait on an
 * event recorded in it join it and share its status, so invalidating the
 * session invalidates every stream in it.  Modes: Global captures forbid
 * unsafe calls (allocations, frees, synchronisation) in every thread whose
 * exchange mode is not Relaxed; ThreadLocal captures forbid them in the
 * thread that began them; Relaxed captures forbid none.  An unsafe call
 * fails with hipErrorStreamCaptureUnsupported and invalidates the captures
 * that forbid it; hipStreamEndCapture then returns
 * hipErrorStreamCaptureInvalidated.  One lock guards all capture state. */
#include "hip_internal.h"

typedef struct hip_capture {
    hipGraph_t graph;
    hipStreamCaptureMode mode;
    hipStreamCaptureStatus status;
    hip_stream_t *origin;
    unsigned long long id;
    hip_ptrvec_t streams;             /* origin and joined streams */
    hip_ptrvec_t events;              /* events recorded in the capture */
    hip_tls_t *owner;                 /* thread that began it (NULL once it exited) */
    bool user_graph;                  /* hipStreamBeginCaptureToGraph's: not freed with the stream */
    hip_ptrvec_t captured;            /* nodes the capture made (others never count as unjoined) */
} hip_capture_t;

static pthread_mutex_t hip_capture_lock = PTHREAD_MUTEX_INITIALIZER;
static hip_ptrvec_t global_captures, all_captures;
static unsigned long long next_id;

static void invalidate_all(const hip_ptrvec_t *v) {
    for (size_t i = 0; i < v->n; i++)
        ((hip_capture_t *)v->v[i])->status = hipStreamCaptureStatusInvalidated;
}

/* Detach every stream and event and forget the session; the graph is the
 * caller's.  Called with the lock held. */
static void end_session(hip_capture_t *c) {
    for (size_t i = 0; i < c->streams.n; i++) {
        hip_stream_t *s = c->streams.v[i];
        s->capture = NULL;
        s->capture_deps.n = 0;
    }
    for (size_t i = 0; i < c->events.n; i++) {
        struct ihipEvent_t *e = c->events.v[i];
        e->capture = NULL;
        e->capture_nodes.n = 0;
    }
    hip_ptrvec_remove(&global_captures, c);
    hip_ptrvec_remove(&all_captures, c);
    if (c->owner) hip_ptrvec_remove(&c->owner->captures, c);
    hip_ptrvec_free(&c->streams);
    hip_ptrvec_free(&c->events);
    hip_ptrvec_free(&c->captured);
    free(c);
}

void hip_capture_thread_exit(hip_tls_t *t) {
    pthread_mutex_lock(&hip_capture_lock);
    for (size_t i = 0; i < t->captures.n; i++) ((hip_capture_t *)t->captures.v[i])->owner = NULL;
    pthread_mutex_unlock(&hip_capture_lock);
}

void hip_capture_invalidate(hip_stream_t *s) {
    pthread_mutex_lock(&hip_capture_lock);
    if (s->capture) s->capture->status = hipStreamCaptureStatusInvalidated;
    pthread_mutex_unlock(&hip_capture_lock);
}

/* A blocking stream of the device (-1: any) capturing: the legacy null
 * stream would depend on it implicitly. */
static bool blocking_locked(int device, bool invalidate) {
    bool found = false;
    for (size_t i = 0; i < all_captures.n; i++) {
        hip_capture_t *c = all_captures.v[i];
        if (c->status != hipStreamCaptureStatusActive) continue;
        for (size_t j = 0; j < c->streams.n; j++) {
            hip_stream_t *s = c->streams.v[j];
            if ((s->flags & hipStreamNonBlocking) || (device >= 0 && s->device != device)) continue;
            found = true;
            if (invalidate) c->status = hipStreamCaptureStatusInvalidated;
            break;
        }
    }
    return found;
}

bool hip_capture_blocking(void) {
    pthread_mutex_lock(&hip_capture_lock);
    bool found = blocking_locked(-1, false);
    pthread_mutex_unlock(&hip_capture_lock);
    return found;
}

hipError_t hip_stream_begin_op(hipStream_t handle, hip_stream_t **out, bool *capturing) {
    *capturing = false;
    hipError_t status = hip_stream_resolve(handle, out);
    if (status != hipSuccess) return status;
    hip_stream_t *s = *out;
    pthread_mutex_lock(&hip_capture_lock);
    if (s->capture && s->capture->status == hipStreamCaptureStatusActive)
        *capturing = true;
    else if (s->capture)
        status = hipErrorStreamCaptureInvalidated;
    else if (s->is_null && blocking_locked(s->device, true))
        status = hipErrorStreamCaptureImplicit;
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

hipError_t hip_stream_begin_transfer(hipStream_t handle, bool sync_api, hip_stream_t **out,
                                     bool *capturing) {
    if (!sync_api) return hip_stream_begin_op(handle, out, capturing);
    *capturing = false;
    hipError_t status = hip_capture_check_sync();
    return status == hipSuccess ? hip_stream_resolve(handle, out) : status;
}

hipError_t hip_capture_node(hip_stream_t *s, hip_node_maker make, void *arg) {
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = s->capture;
    hipError_t status = hipErrorStreamCaptureInvalidated;
    if (c && c->status == hipStreamCaptureStatusActive) {
        hipGraphNode_t node;
        status = make(c->graph, (const hipGraphNode_t *)s->capture_deps.v, s->capture_deps.n,
                      arg, &node);
        if (status == hipSuccess) {
            s->capture_deps.n = 0;
            if (!hip_ptrvec_push(&s->capture_deps, node) || !hip_ptrvec_push(&c->captured, node))
                status = hipErrorOutOfMemory;
        }
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

hipError_t hip_capture_check_supported(void) {
    hip_tls_t *t = hip_tls();
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&hip_capture_lock);
    if (t->capture_mode != hipStreamCaptureModeRelaxed) {
        if (t->captures.n) {
            invalidate_all(&t->captures);
            status = hipErrorStreamCaptureUnsupported;
        } else if (t->capture_mode == hipStreamCaptureModeGlobal && global_captures.n) {
            invalidate_all(&global_captures);
            status = hipErrorStreamCaptureUnsupported;
        }
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

static hipError_t any_capture(hipError_t status) {
    pthread_mutex_lock(&hip_capture_lock);
    bool any = all_captures.n > 0;
    invalidate_all(&all_captures);
    pthread_mutex_unlock(&hip_capture_lock);
    return any ? status : hipSuccess;
}

hipError_t hip_capture_check_sync(void) { return any_capture(hipErrorStreamCaptureImplicit); }

hipError_t hip_capture_check_device_sync(void) {
    return any_capture(hipErrorStreamCaptureUnsupported);
}

bool hip_capture_ongoing(hip_stream_t *s) {
    hip_tls_t *t = hip_tls();
    bool ongoing = false;
    pthread_mutex_lock(&hip_capture_lock);
    if (s && s->capture) {
        s->capture->status = hipStreamCaptureStatusInvalidated;
        ongoing = true;
    } else if (t->capture_mode != hipStreamCaptureModeRelaxed) {
        if (global_captures.n) {
            invalidate_all(&global_captures);
            ongoing = true;
        } else if (t->captures.n) {
            invalidate_all(&t->captures);
            ongoing = true;
        }
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return ongoing;
}

void hip_capture_stream_gone(hip_stream_t *s) {
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = s->capture;
    if (c && c->origin == s) {
        hipGraph_t g = c->user_graph ? NULL : c->graph;
        end_session(c);
        hip_graph_free(g);
    } else if (c) {
        hip_ptrvec_remove(&c->streams, s);
        s->capture = NULL;
    }
    pthread_mutex_unlock(&hip_capture_lock);
}

/* ---- events ----------------------------------------------------------- */

hipError_t hip_capture_event_record(struct ihipEvent_t *e, hip_stream_t *s) {
    hipError_t status = hipErrorStreamCaptureInvalidated;
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = s->capture;
    if (c && c->status == hipStreamCaptureStatusActive) {
        if (e->capture && e->capture != c) hip_ptrvec_remove(&e->capture->events, e);
        status = hip_ptrvec_copy(&e->capture_nodes, &s->capture_deps) &&
                 (e->capture == c || hip_ptrvec_push(&c->events, e))
                     ? hipSuccess
                     : hipErrorOutOfMemory;
        e->capture = c;
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

bool hip_capture_event_wait(struct ihipEvent_t *e, hip_stream_t *s, hipError_t *status) {
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = e->capture;
    bool handled = c && c->status == hipStreamCaptureStatusActive;
    *status = hipSuccess;
    if (handled) {
        if (s->is_null) {
            *status = hipErrorStreamCaptureImplicit;
        } else if (s->capture && s->capture != c) {
            *status = hipErrorStreamCaptureMerge;
        } else {
            bool ok = true;
            if (!s->capture) {
                /* the stream forks from the capture: it joins the session */
                s->capture = c;
                s->capture_deps.n = 0;
                ok = hip_ptrvec_push(&c->streams, s);
            }
            for (size_t i = 0; ok && i < e->capture_nodes.n; i++)
                if (!hip_ptrvec_contains(&s->capture_deps, e->capture_nodes.v[i]))
                    ok = hip_ptrvec_push(&s->capture_deps, e->capture_nodes.v[i]);
            if (!ok) *status = hipErrorOutOfMemory;
        }
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return handled;
}

hipError_t hip_capture_event_check(struct ihipEvent_t *e) {
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&hip_capture_lock);
    if (e->capture && e->capture->status == hipStreamCaptureStatusActive) {
        e->capture->status = hipStreamCaptureStatusInvalidated;
        status = hipErrorCapturedEvent;
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

void hip_capture_event_gone(struct ihipEvent_t *e) {
    pthread_mutex_lock(&hip_capture_lock);
    if (e->capture) hip_ptrvec_remove(&e->capture->events, e);
    e->capture = NULL;
    e->capture_nodes.n = 0;
    pthread_mutex_unlock(&hip_capture_lock);
}

/* ---- API ------------------------------------------------------------- */

/* graph: hipStreamBeginCaptureToGraph's (the caller's), else a new one */
static hipError_t begin_capture(hipStream_t stream, hipStreamCaptureMode mode, hipGraph_t graph) {
    hip_stream_t *s;
    hipError_t status = hip_stream_resolve(stream, &s);
    if (status != hipSuccess) return status;
    if (s->is_null) return hipErrorStreamCaptureUnsupported;
    if (mode < hipStreamCaptureModeGlobal || mode > hipStreamCaptureModeRelaxed)
        return hipErrorInvalidValue;
    hip_capture_t *c = calloc(1, sizeof *c);
    if (!c) return hipErrorOutOfMemory;
    hip_tls_t *t = hip_tls();
    pthread_mutex_lock(&hip_capture_lock);
    if (s->capture) {
        status = hipErrorIllegalState;
    } else if ((status = graph ? hipSuccess : hip_graph_new(&c->graph)) == hipSuccess) {
        if (graph) c->graph = graph;
        c->user_graph = graph != NULL;
        c->mode = mode;
        c->status = hipStreamCaptureStatusActive;
        c->origin = s;
        c->id = ++next_id;
        c->owner = mode == hipStreamCaptureModeRelaxed ? NULL : t;
        bool ok = hip_ptrvec_push(&c->streams, s) && hip_ptrvec_push(&all_captures, c);
        if (ok && mode == hipStreamCaptureModeGlobal) ok = hip_ptrvec_push(&global_captures, c);
        if (ok && c->owner) ok = hip_ptrvec_push(&t->captures, c);
        if (ok) {
            s->capture = c;
            s->capture_deps.n = 0;
            c = NULL;
        } else {
            status = hipErrorOutOfMemory;
            if (!graph) hip_graph_free(c->graph);
            c->graph = NULL;
            c->streams.n = 0;
            end_session(c);
            c = NULL;
        }
    }
    pthread_mutex_unlock(&hip_capture_lock);
    free(c);
    return status;
}

hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(begin_capture(stream, mode, NULL));
}

/* A node the capture made that no later capture depends on, other than the
 * origin's last nodes: a branch that never joined back.  Nodes added by hand
 * (hipGraphAdd*Node into the capture's graph, or those of the graph given to
 * hipStreamBeginCaptureToGraph) never count (hipamd hipStreamEndCapture_common
 * removes GetManualNodesDuringCapture from the leaves). */
static bool unjoined_locked(hip_capture_t *c) {
    hipGraphNode_t *leaves;
    size_t n = hip_graph_leaves(c->graph, &leaves);
    bool unjoined = false;
    for (size_t i = 0; i < n; i++)
        if (hip_ptrvec_contains(&c->captured, leaves[i]) &&
            !hip_ptrvec_contains(&c->origin->capture_deps, leaves[i]))
            unjoined = true;
    free(leaves);
    return unjoined;
}

static hipError_t end_capture(hipStream_t stream, hipGraph_t *pGraph) {
    if (!pGraph) return hipErrorInvalidValue;
    if (!stream) return hipErrorIllegalState;
    hip_stream_t *s;
    hipError_t status = hip_stream_resolve(stream, &s);
    if (status != hipSuccess) return status;
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = s->capture;
    if (!c) {
        status = hipErrorIllegalState;
    } else if (c->origin != s) {
        status = hipErrorStreamCaptureUnmatched;
    } else if (c->mode != hipStreamCaptureModeRelaxed && c->owner != hip_tls()) {
        status = hipErrorStreamCaptureWrongThread;
    } else {
        hipGraph_t g = c->graph;
        bool keep = c->user_graph;   /* hipamd deletes it only when invalidated */
        if (c->status == hipStreamCaptureStatusInvalidated) {
            status = hipErrorStreamCaptureInvalidated;
            keep = false;
        } else if (unjoined_locked(c)) {
            status = hipErrorStreamCaptureUnjoined;
        }
        end_session(c);
        if (status != hipSuccess) {
            if (!keep) hip_graph_free(g);
            g = NULL;
        }
        *pGraph = g;
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return status;
}

hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *pGraph) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(end_capture(stream, pGraph));
}

#ifdef ROCPY_HAVE_hipStreamBeginCaptureToGraph
/* hipamd hip_graph.cpp hipStreamBeginCaptureToGraph: its own checks (edge
 * data is not supported), hipStreamBeginCapture_common's, then the stream's
 * dependencies set to the given nodes.  These checks return without
 * HIP_RETURN in hipamd (the last error is not set).  When the capture ends
 * the graph comes back through hipStreamEndCapture; an invalidated capture
 * frees it there, the caller's graph included (hipamd deletes the capture
 * graph), so the caller's handle is then no graph. */
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
                                        const hipGraphNode_t *dependencies,
                                        const hipGraphEdgeData *dependencyData,
                                        size_t numDependencies, hipStreamCaptureMode mode) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (dependencyData) return hipErrorNotSupported;
    if (!graph || (!dependencies && numDependencies) || (dependencies && !numDependencies))
        return hipErrorInvalidValue;
    /* hipamd casts the graph and reads its nodes: a handle that is no graph
     * is refused here */
    if (!hip_graph_valid(graph)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(begin_capture(stream, mode, graph));
    if (!dependencies) HIP_RETURN(hipSuccess);
    HIP_RETURN(hipStreamUpdateCaptureDependencies(stream, (hipGraphNode_t *)dependencies,
                                                  numDependencies, hipStreamSetCaptureDependencies));
}
#endif

static hipError_t capture_info(hipStream_t stream, hipStreamCaptureStatus *status_out,
                               unsigned long long *id, hipGraph_t *graph,
                               const hipGraphNode_t **deps, size_t *ndeps) {
    if (!status_out) return hipErrorInvalidValue;
    hip_stream_t *s;
    hipError_t status = hip_stream_resolve(stream, &s);
    if (status != hipSuccess) return status;
    if (s->is_null) {
        if (hip_capture_blocking()) return hipErrorStreamCaptureImplicit;
        *status_out = hipStreamCaptureStatusNone;
        return hipSuccess;
    }
    pthread_mutex_lock(&hip_capture_lock);
    hip_capture_t *c = s->capture;
    *status_out = c ? c->status : hipStreamCaptureStatusNone;
    if (c && c->status == hipStreamCaptureStatusActive) {
        if (id) *id = c->id;
        if (graph) *graph = c->graph;
        if (deps) *deps = (const hipGraphNode_t *)s->capture_deps.v;
        if (ndeps) *ndeps = s->capture_deps.n;
    }
    pthread_mutex_unlock(&hip_capture_lock);
    return hipSuccess;
}

hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus) {
    HIP_INIT_API();
    HIP_RETURN(capture_info(stream, pCaptureStatus, NULL, NULL, NULL, NULL));
}

hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus *pCaptureStatus,
                                   unsigned long long *pId) {
    HIP_INIT_API();
    HIP_RETURN(capture_info(stream, pCaptureStatus, pId, NULL, NULL, NULL));
}

hipError_t hipStreamGetCaptureInfo_v2(hipStream_t stream, hipStreamCaptureStatus *captureStatus_out,
                                      unsigned long long *id_out, hipGraph_t *graph_out,
                                      const hipGraphNode_t **dependencies_out,
                                      size_t *numDependencies_out) {
    HIP_INIT_API();
    HIP_RETURN(capture_info(stream, captureStatus_out, id_out, graph_out, dependencies_out,
                            numDependencies_out));
}

hipError_t hipStreamUpdateCaptureDependencies(hipStream_t stream, hipGraphNode_t *dependencies,
                                              size_t numDependencies, unsigned int flags) {
    HIP_INIT_API();
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    if (numDependencies > 0 && !dependencies) HIP_RETURN(hipErrorInvalidValue);
    if (flags != hipStreamAddCaptureDependencies && flags != hipStreamSetCaptureDependencies)
        HIP_RETURN(hipErrorInvalidValue);
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&hip_capture_lock);
    if (!s->capture) {
        status = hipErrorIllegalState;
    } else {
        if (flags == hipStreamSetCaptureDependencies) s->capture_deps.n = 0;
        for (size_t i = 0; i < numDependencies && status == hipSuccess; i++)
            if (!hip_ptrvec_contains(&s->capture_deps, dependencies[i]) &&
                !hip_ptrvec_push(&s->capture_deps, dependencies[i]))
                status = hipErrorOutOfMemory;
    }
    pthread_mutex_unlock(&hip_capture_lock);
    HIP_RETURN(status);
}

hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode) {
    HIP_INIT_API();
    if (!mode || *mode < hipStreamCaptureModeGlobal || *mode > hipStreamCaptureModeRelaxed)
        HIP_RETURN(hipErrorInvalidValue);
    hip_tls_t *t = hip_tls();
    hipStreamCaptureMode old = t->capture_mode;
    t->capture_mode = *mode;
    *mode = old;
    HIP_RETURN(hipSuccess);
}
