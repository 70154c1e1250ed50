/* Streams (hipamd hip_stream.cpp, hip_device.cpp): a FIFO of ops run by a
 * stub worker thread, a registry of live streams for handle validation, the
 * legacy null stream of each device and its implicit synchronisation with
 * the device's blocking streams, and the per-thread default streams. */
#include <stdio.h>
#include <string.h>

#include "hip_fatbin.h"     /* hip_launch_take_failure */
#include "hip_internal.h"

static hip_registry_t streams = HIP_REGISTRY_INIT;
static atomic_uint_fast64_t next_id = 1;

static hip_stream_t *stream_alloc(int device, unsigned flags, int priority, bool is_null) {
    hip_stream_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->magic = HIP_MAGIC_STREAM;
    atomic_init(&s->refs, 1);         /* the registry's */
    s->id = atomic_fetch_add(&next_id, 1);
    s->device = device;
    s->flags = flags;
    s->priority = priority;
    s->is_null = is_null;
    pthread_mutex_init(&s->lock, NULL);
    return s;
}

hip_stream_t *hip_stream_new_null(int device) { return stream_alloc(device, 0, 0, true); }

/* Create a user stream on the current device (hipamd's ihipStreamCreate). */
static hipError_t stream_create(hipStream_t *out, unsigned flags, int priority,
                                const uint32_t *cu_mask, uint32_t cu_mask_size) {
    return hip_stream_create_on(out, hip_current_dev()->id, flags, priority, cu_mask,
                                cu_mask_size);
}

hipError_t hip_stream_create_on(hipStream_t *out, int device, unsigned flags, int priority,
                                const uint32_t *cu_mask, uint32_t cu_mask_size) {
    if (flags != hipStreamDefault && flags != hipStreamNonBlocking) return hipErrorInvalidValue;
    hip_dev_t *dev = hip_dev(device);
    hip_stream_t *s = stream_alloc(dev->id, flags, priority, false);
    if (!s) return hipErrorOutOfMemory;
    if (cu_mask_size) {
        s->cu_mask = malloc(cu_mask_size * sizeof *cu_mask);
        if (!s->cu_mask) {
            free(s);
            return hipErrorOutOfMemory;
        }
        memcpy(s->cu_mask, cu_mask, cu_mask_size * sizeof *cu_mask);
        s->cu_mask_size = cu_mask_size;
    }
    char name[32];
    snprintf(name, sizeof name, "hip-stream-%llu", (unsigned long long)s->id);
    s->worker = stub_worker_create(name);
    if (!s->worker || !hip_registry_add(&streams, s)) {
        if (s->worker) stub_worker_destroy(s->worker);
        free(s->cu_mask);
        free(s);
        return hipErrorOutOfMemory;
    }
    atomic_store(&dev->active, true);
    *out = s;
    return hipSuccess;
}

/* The caller removed s from the registry, so nobody else can reach it. */
static void stream_destroy(hip_stream_t *s) {
    hip_capture_stream_gone(s);
    if (s->worker) stub_worker_destroy(s->worker);   /* pending work completes first */
    hip_op_unref(s->last);
    hip_ptrvec_free(&s->capture_deps);
    pthread_mutex_destroy(&s->lock);
    free(s->cu_mask);
    s->magic = 0;
    free(s);
}

/* Drop a reference; the last one (the registry's, or a call's that resolved the
 * stream before another thread destroyed it) frees the stream. */
static void stream_unref(hip_stream_t *s) {
    if (atomic_fetch_sub(&s->refs, 1) == 1) stream_destroy(s);
}

/* under the registry's lock: the stream cannot be removed and freed meanwhile */
static bool retain(void *h, void *ctx) {
    (void)ctx;
    atomic_fetch_add(&((hip_stream_t *)h)->refs, 1);
    return true;
}

static void unref_held(void *s) { stream_unref(s); }

void hip_stream_retain(hip_stream_t *s) { atomic_fetch_add(&s->refs, 1); }

void hip_stream_release(hip_stream_t *s) { stream_unref(s); }

#ifdef ROCPY_HAVE_hipErrorStreamDetached
static atomic_bool any_detached;     /* until one is, no entry point looks a stream up */

static bool is_detached(void *h, void *ctx) {
    (void)ctx;
    return atomic_load(&((hip_stream_t *)h)->detached);
}
#endif

void hip_stream_detach(hip_stream_t *s) {
    hip_capture_invalidate(s);
    atomic_store(&s->detached, true);
#ifdef ROCPY_HAVE_hipErrorStreamDetached
    atomic_store(&any_detached, true);
#endif
}

/* clr hip_internal.hpp CHECK_STREAM_DETACHED(_API): the null, legacy and
 * per-thread streams never detach; a handle that is no live stream is left to
 * the entry point's own validation.  The entry points that check (one line,
 * HIP_CHECK_STREAM_DETACHED, first after HIP_INIT_API; clr's guarded set as
 * hip-tests' hipExecutionCtxStreamDetached tests enumerate it, the _spt forms
 * through these): hipStreamSynchronize, hipStreamQuery, hipStreamWaitEvent,
 * hipStreamAddCallback, hipLaunchHostFunc, hipEventRecord, hipLaunchKernel
 * (hipExtLaunchKernel, triple-chevron), hipModuleLaunchKernel,
 * hipLaunchCooperativeKernel, hipMemcpyAsync, hipMemcpyHtoDAsync,
 * hipMemcpyDtoHAsync, hipMemcpyDtoDAsync, hipMemcpy2DAsync, hipMemcpy3DAsync,
 * hipDrvMemcpy3DAsync, hipMemcpyToSymbolAsync, hipMemcpyFromSymbolAsync,
 * hipMemsetAsync, hipMemsetD8Async, hipMemsetD16Async, hipMemsetD32Async,
 * hipMemset2DAsync, hipMemset3DAsync, hipMallocAsync, hipFreeAsync,
 * hipMallocFromPoolAsync, hipMemPrefetchAsync, hipStreamAttachMemAsync,
 * hipGraphLaunch, hipStreamBeginCapture, hipStreamEndCapture; where the stub
 * has them, also hipEventRecordWithFlags, hipMemPrefetchAsync_v2,
 * hipStreamBeginCaptureToGraph, hipStreamBatchMemOp,
 * hipModuleLaunchCooperativeKernel (after its validity check), and the
 * stream-taking 7.x copies and fills: hipMemcpy3DPeerAsync, hipMemcpyBatchAsync,
 * hipMemcpy3DBatchAsync, hipMemsetD2D{8,16,32}Async.  Not (the stream is inside
 * a launch configuration): hipLaunchKernelExC, hipDrvLaunchKernelEx and the
 * multi-device launches. */
hipError_t hip_stream_check_detached(hipStream_t handle) {
#ifdef ROCPY_HAVE_hipErrorStreamDetached
    if (handle == NULL || handle == hipStreamPerThread || !atomic_load(&any_detached)) return hipSuccess;
#ifdef hipStreamLegacy
    if (handle == hipStreamLegacy) return hipSuccess;
#endif
    if (hip_registry_contains_if(&streams, handle, is_detached, NULL)) return hipErrorStreamDetached;
#else
    (void)handle;
#endif
    return hipSuccess;
}

static bool same_id(void *h, void *ctx) {
    return ((hip_stream_t *)h)->id == *(uint64_t *)ctx;
}

/* under the registry's lock: the same stream (not a reused address), kept alive */
static bool same_id_retain(void *h, void *ctx) {
    if (!same_id(h, ctx)) return false;
    return retain(h, NULL);
}

static hip_stream_t *per_thread_stream(void) {
    hip_tls_t *t = hip_tls();
    int dev = hip_current_dev()->id;
    hip_stream_t *s = t->per_thread[dev];
    /* hipDeviceReset destroys per-thread streams too: recreate as hipamd does */
    if (s && hip_registry_contains_if(&streams, s, same_id, &t->per_thread_id[dev])) return s;
    hipStream_t made = NULL;
    if (stream_create(&made, hipStreamDefault, 0, NULL, 0) != hipSuccess) return NULL;
    t->per_thread[dev] = made;
    t->per_thread_id[dev] = made->id;
    return made;
}

/* A thread's per-thread streams end with it.  hipamd's destructor of the
 * thread's stream table (hip_stream.cpp, stream_per_thread) destroys each, and
 * ROCclr's HostQueue::terminate waits for a marker behind the queue's work:
 * the work completes first.  It is waited for while the stream is still
 * registered, so a concurrent hipDeviceSynchronize (which waits for the
 * registered streams) still waits for it. */
void hip_stream_thread_exit(hip_tls_t *t) {
    hip_release_held(t);
    for (int d = 0; d < STUB_MAX_DEVICES; d++) {
        hip_stream_t *s = t->per_thread[d];
        if (s && hip_registry_contains_if(&streams, s, same_id_retain, &t->per_thread_id[d])) {
            hip_stream_sync(s);
            stream_unref(s);
        }
        if (s && hip_registry_remove_if(&streams, s, same_id, &t->per_thread_id[d]))
            stream_unref(s);
        t->per_thread[d] = NULL;
    }
}

bool hip_stream_valid(hipStream_t handle) {
    return handle == NULL || handle == hipStreamPerThread ||
           hip_registry_contains(&streams, handle);
}

hipError_t hip_stream_resolve(hipStream_t handle, hip_stream_t **out) {
    if (handle == NULL) {
        *out = hip_current_dev()->null_stream;
        return hipSuccess;
    }
    if (handle == hipStreamPerThread) {
        *out = per_thread_stream();
        return *out ? hipSuccess : hipErrorOutOfMemory;
    }
    if (!hip_registry_contains_if(&streams, handle, retain, NULL)) return hipErrorContextIsDestroyed;
    hip_hold(handle, unref_held);
    *out = handle;
    return hipSuccess;
}

hipStream_t hip_stream_handle(hip_stream_t *s) { return s->is_null ? NULL : s; }

hip_op_t *hip_stream_last(hip_stream_t *s) {
    pthread_mutex_lock(&s->lock);
    hip_op_t *op = hip_op_ref(s->last);
    pthread_mutex_unlock(&s->lock);
    return op;
}

typedef struct collect {
    hip_op_t *op;
    int device;
    bool ok;
} collect_t;

static void collect_blocking(void *h, void *ctx) {
    hip_stream_t *t = h;
    collect_t *c = ctx;
    if (t->device != c->device || (t->flags & hipStreamNonBlocking)) return;
    hip_op_t *last = hip_stream_last(t);
    if (last) c->ok &= hip_op_add_dep(c->op, last);
    hip_op_unref(last);
}

/* hipamd's iHipWaitActiveStreams: work on the null stream waits for every
 * blocking stream of the device, work on a blocking stream for the null
 * stream; non-blocking streams do neither. */
static void add_implicit_deps(hip_stream_t *s, hip_op_t *op) {
    bool ok = true;
    if (s->is_null) {
        collect_t c = {op, s->device, true};
        hip_registry_foreach(&streams, collect_blocking, &c);
        ok = c.ok;
    } else if (!(s->flags & hipStreamNonBlocking)) {
        hip_op_t *last = hip_stream_last(hip_dev(s->device)->null_stream);
        if (last) ok = hip_op_add_dep(op, last);
        hip_op_unref(last);
    }
    if (!ok) stub_abort("hipStream", "out of memory for a stream dependency");
}

void hip_stream_submit(hip_stream_t *s, hip_op_t *op) {
    add_implicit_deps(s, op);
    atomic_store(&hip_dev(s->device)->active, true);
    pthread_mutex_lock(&s->lock);
    if (!s->worker) {
        char name[32];
        snprintf(name, sizeof name, "hip-null-%d", s->device);
        s->worker = stub_worker_create(name);
    }
    hip_op_unref(s->last);
    s->last = hip_op_ref(op);
    if (!s->worker || stub_worker_submit(s->worker, hip_op_execute, op) == 0)
        stub_abort("hipStream", "cannot start or feed the stream's worker thread");
    pthread_mutex_unlock(&s->lock);
}

void hip_stream_submit_wait(hip_stream_t *s, hip_op_t *op) {
    hip_op_ref(op);
    hip_stream_submit(s, op);
    hip_op_wait(op);
    hip_op_unref(op);
}

/* An unsubmitted marker depending on what a host wait on s must wait for. */
static hip_op_t *wait_set(hip_stream_t *s) {
    hip_op_t *m = hip_op_new(NULL, 0);
    if (!m) stub_abort("hipStream", "out of memory");
    add_implicit_deps(s, m);
    hip_op_t *last = hip_stream_last(s);
    if (last && !hip_op_add_dep(m, last)) stub_abort("hipStream", "out of memory");
    hip_op_unref(last);
    return m;
}

void hip_stream_sync(hip_stream_t *s) {
    hip_op_t *m = wait_set(s);
    for (size_t i = 0; i < m->ndeps; i++) hip_op_wait(m->deps[i]);
    hip_op_unref(m);
}

bool hip_stream_idle(hip_stream_t *s) {
    hip_op_t *m = wait_set(s);
    bool idle = true;
    for (size_t i = 0; i < m->ndeps; i++) idle &= hip_op_done(m->deps[i]);
    hip_op_unref(m);
    return idle;
}

static void collect_device(void *h, void *ctx) {
    hip_stream_t *t = h;
    collect_t *c = ctx;
    if (c->device >= 0 && t->device != c->device) return;
    hip_op_t *last = hip_stream_last(t);
    if (last) c->ok &= hip_op_add_dep(c->op, last);
    hip_op_unref(last);
}

/* device -1: every device (hipFree of host memory) */
void hip_device_sync(int device) {
    hip_op_t *m = hip_op_new(NULL, 0);
    if (!m) stub_abort("hipDeviceSynchronize", "out of memory");
    collect_t c = {m, device, true};
    hip_registry_foreach(&streams, collect_device, &c);
    for (int d = 0; d < hip_device_count(); d++) {
        if (device >= 0 && d != device) continue;
        hip_op_t *last = hip_stream_last(hip_dev(d)->null_stream);
        if (last) c.ok &= hip_op_add_dep(m, last);
        hip_op_unref(last);
    }
    if (!c.ok) stub_abort("hipDeviceSynchronize", "out of memory");
    for (size_t i = 0; i < m->ndeps; i++) hip_op_wait(m->deps[i]);
    hip_op_unref(m);
}

typedef struct of_device {
    hip_ptrvec_t found;
    int device;
    bool ok;
} of_device_t;

static void collect_streams_of(void *h, void *ctx) {
    of_device_t *c = ctx;
    if (((hip_stream_t *)h)->device == c->device) c->ok &= hip_ptrvec_push(&c->found, h);
}

static bool always(void *h, void *ctx) {
    (void)h;
    (void)ctx;
    return true;
}

void hip_stream_destroy_device(int device) {
    of_device_t c = {{0}, device, true};
    hip_registry_foreach(&streams, collect_streams_of, &c);
    if (!c.ok) stub_abort("hipDeviceReset", "out of memory");
    for (size_t i = 0; i < c.found.n; i++)
        if (hip_registry_remove_if(&streams, c.found.v[i], always, NULL))
            stream_unref(c.found.v[i]);
    hip_ptrvec_free(&c.found);
}

/* ---- API ------------------------------------------------------------- */

hipError_t hipStreamCreate(hipStream_t *stream) {
    HIP_INIT_API();
    if (!stream) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(stream_create(stream, hipStreamDefault, 0, NULL, 0));
}

hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags) {
    HIP_INIT_API();
    if (!stream) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(stream_create(stream, flags, 0, NULL, 0));
}

/* hipamd's priorities: High -1, Normal 0, Low 1; anything else is clamped */
hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority) {
    HIP_INIT_API();
    if (!stream) HIP_RETURN(hipErrorInvalidValue);
    int p = priority <= -1 ? -1 : priority >= 1 ? 1 : 0;
    HIP_RETURN(stream_create(stream, flags, p, NULL, 0));
}

hipError_t hipDeviceGetStreamPriorityRange(int *leastPriority, int *greatestPriority) {
    HIP_INIT_API();
    if (leastPriority) *leastPriority = 1;
    if (greatestPriority) *greatestPriority = -1;
    HIP_RETURN(hipSuccess);
}

hipError_t hipExtStreamCreateWithCUMask(hipStream_t *stream, uint32_t cuMaskSize,
                                        const uint32_t *cuMask) {
    HIP_INIT_API();
    if (!stream) HIP_RETURN(hipErrorInvalidHandle);
    if (cuMaskSize == 0 || !cuMask) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(stream_create(stream, hipStreamDefault, 0, cuMask, cuMaskSize));
}

hipError_t hipExtStreamGetCUMask(hipStream_t stream, uint32_t cuMaskSize, uint32_t *cuMask) {
    HIP_INIT_API();
    if (!cuMask) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    uint32_t cus = hip_dev(s->device)->info->compute_units;
    uint32_t words = (cus + 31) / 32;
    if (cuMaskSize < words) HIP_RETURN(hipErrorInvalidValue);
    for (uint32_t i = 0; i < words; i++) {
        uint32_t bits = cus - i * 32 >= 32 ? 32 : cus - i * 32;
        uint32_t all = bits == 32 ? 0xffffffffu : (1u << bits) - 1;
        /* the stream's mask restricted to existing CUs; all CUs if that is empty */
        cuMask[i] = all;
    }
    if (s->cu_mask_size) {
        bool any = false;
        uint32_t n = s->cu_mask_size < words ? s->cu_mask_size : words;
        for (uint32_t i = 0; i < n; i++) any |= (s->cu_mask[i] & cuMask[i]) != 0;
        if (any) {
            for (uint32_t i = 0; i < words; i++) cuMask[i] = i < n ? s->cu_mask[i] & cuMask[i] : 0;
        }
    }
    HIP_RETURN(hipSuccess);
}

hipError_t hipStreamDestroy(hipStream_t stream) {
    HIP_INIT_API();
    if (stream == NULL) HIP_RETURN(hipErrorInvalidHandle);
    if (stream == hipStreamPerThread) HIP_RETURN(hipErrorInvalidResourceHandle);
    if (!hip_registry_remove(&streams, stream)) HIP_RETURN(hipErrorContextIsDestroyed);
    stream_unref(stream);   /* freed now, or when the calls still using it return */
    HIP_RETURN(hipSuccess);
}

hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int *flags) {
    HIP_INIT_API();
    if (!flags || !stream) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    *flags = s->flags;
    HIP_RETURN(hipSuccess);
}

hipError_t hipStreamGetPriority(hipStream_t stream, int *priority) {
    HIP_INIT_API();
    if (!priority) HIP_RETURN(hipErrorInvalidValue);
    if (!stream) {
        *priority = 0;
        HIP_RETURN(hipSuccess);
    }
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    *priority = s->priority;
    HIP_RETURN(hipSuccess);
}

int hipGetStreamDeviceId(hipStream_t stream) {
    if (hip_init_api() != hipSuccess) return -1;
    hip_stream_t *s;
    if (hip_stream_resolve(stream, &s) != hipSuccess) return -1;
    int device = s->device;
    hip_release_held(hip_tls());   /* not an HIP_RETURN function */
    return device;
}

/* hipStreamSynchronize / hipStreamQuery: a capturing stream, or a stream
 * the capture rules forbid to wait on, invalidates the capture (ROCm/clr). */
static hipError_t capture_rule_for_wait(hipStream_t stream, hip_stream_t *s) {
    if (stream == NULL) return hip_capture_blocking() ? hipErrorStreamCaptureImplicit : hipSuccess;
    return hip_capture_ongoing(s) ? hipErrorStreamCaptureUnsupported : hipSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    HIP_RETURN_ONFAIL(capture_rule_for_wait(stream, s));
    hip_stream_sync(s);
    hip_mempool_release_freed(s->device);
    HIP_RETURN(hip_launch_take_failure(s->device, true));
}

hipError_t hipStreamQuery(hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    HIP_RETURN_ONFAIL(capture_rule_for_wait(stream, s));
    HIP_RETURN(hip_stream_idle(s) ? hip_launch_take_failure(s->device, false) : hipErrorNotReady);
}

/* the _spt entry points: a NULL stream means the per-thread default stream */
#define SPT(stream) ((stream) == NULL ? hipStreamPerThread : (stream))

hipError_t hipStreamSynchronize_spt(hipStream_t stream) {
    return hipStreamSynchronize(SPT(stream));
}

hipError_t hipStreamQuery_spt(hipStream_t stream) { return hipStreamQuery(SPT(stream)); }

hipError_t hipStreamGetFlags_spt(hipStream_t stream, unsigned int *flags) {
    return hipStreamGetFlags(SPT(stream), flags);
}

hipError_t hipStreamGetPriority_spt(hipStream_t stream, int *priority) {
    return hipStreamGetPriority(SPT(stream), priority);
}
