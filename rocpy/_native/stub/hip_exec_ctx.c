/* Execution contexts (green contexts) and stream detach: hipGreenCtxCreate,
 * hipExecutionCtxDestroy, hipDeviceGetExecutionCtx, hipExecutionCtxStreamCreate,
 * hipExecutionCtxGetDevResource, hipExecutionCtxGetDevice, hipExecutionCtxGetId,
 * hipStreamGetDevResource, hipExecutionCtxRecordEvent, hipExecutionCtxSynchronize,
 * hipExecutionCtxWaitEvent (clr hipamd/src/hip_executionctx.cpp, ROCm 7.2).
 *
 * A context is a set of CUs (the CU mask of its resources) and the streams
 * made on it, each of which it holds a reference to.  Destroying a context
 * detaches its streams (hip::Stream::Detach): an active capture on one is
 * invalidated, with every stream of that capture, and from then on every
 * entry point clr guards with CHECK_STREAM_DETACHED returns
 * hipErrorStreamDetached (hip_stream_check_detached), while hipStreamDestroy
 * and the getters keep working.  clr dereferences any non-null context
 * handle; the stub keeps a registry of live ones and refuses others with the
 * status clr gives a null one (hipErrorInvalidValue). */
#include <string.h>

#include "hip_exec_ctx.h"

#ifdef ROCPY_HAVE_hipGreenCtxCreate

#define HIP_MAGIC_EXEC_CTX 0x45584543u

typedef struct hip_exec_ctx {
    uint32_t magic;
    int device;
    unsigned long long id;
    bool primary;
    hip_res_desc_t *desc;             /* NULL for a device's primary context */
    hipDevResource whole;             /* the primary context's resource */
    uint32_t *cu_mask;
    uint32_t cu_mask_words;
    pthread_mutex_t lock;             /* guards streams */
    hip_ptrvec_t streams;             /* hip_stream_t *, one reference each */
} hip_exec_ctx_t;

static hip_registry_t ctxs = HIP_REGISTRY_INIT;
static atomic_ullong next_ctx_id = 1;   /* ExecutionCtx::nextCtxId_ */
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static hip_exec_ctx_t *primary[STUB_MAX_DEVICES];

static const hipDevResource *ctx_resources(const hip_exec_ctx_t *c, unsigned *n) {
    *n = c->desc ? c->desc->count : 1;
    return c->desc ? c->desc->res : &c->whole;
}

/* ExecutionCtx::buildCuMask: one bit per scheduling granule (alignment CUs)
 * from each SM resource's first CU. */
static hipError_t build_mask(hip_exec_ctx_t *c) {
    unsigned total = hip_res_total_cus(c->device), alignment = hip_res_sm_alignment(c->device);
    if (total == 0) return hipErrorInvalidConfiguration;
    unsigned granules = alignment > 1 ? total / alignment : total;
    c->cu_mask_words = (granules + 31) / 32;
    c->cu_mask = calloc(c->cu_mask_words, sizeof *c->cu_mask);
    if (!c->cu_mask) return hipErrorOutOfMemory;
    unsigned n;
    const hipDevResource *res = ctx_resources(c, &n);
    for (unsigned r = 0; r < n; r++) {
        if (res[r].type != hipDevResourceTypeSm) continue;
        unsigned first = hip_res_start_cu(&res[r]) / alignment;
        unsigned count = res[r].sm.smCount / alignment;
        for (unsigned i = first; i < first + count && i < granules; i++)
            c->cu_mask[i / 32] |= 1u << (i % 32);
    }
    return hipSuccess;
}

static void ctx_free(hip_exec_ctx_t *c) {
    if (c->desc) hip_res_desc_release(c->desc);
    hip_ptrvec_free(&c->streams);
    pthread_mutex_destroy(&c->lock);
    free(c->cu_mask);
    c->magic = 0;
    free(c);
}

static hipError_t ctx_new(int device, hip_res_desc_t *desc, hip_exec_ctx_t **out) {
    hip_exec_ctx_t *c = calloc(1, sizeof *c);
    if (!c) return hipErrorOutOfMemory;
    c->magic = HIP_MAGIC_EXEC_CTX;
    c->device = device;
    c->id = atomic_fetch_add(&next_ctx_id, 1);
    c->primary = desc == NULL;
    pthread_mutex_init(&c->lock, NULL);
    if (desc) {
        hip_res_desc_retain(desc);
        c->desc = desc;
    } else {
        hip_res_of_device(device, &c->whole, hipDevResourceTypeSm);
    }
    hipError_t status = build_mask(c);
    if (status == hipSuccess && !hip_registry_add(&ctxs, c)) status = hipErrorOutOfMemory;
    if (status != hipSuccess) {
        ctx_free(c);
        return status;
    }
    *out = c;
    return hipSuccess;
}

/* A live context, or NULL (clr: the handle is dereferenced as it is). */
static hip_exec_ctx_t *ctx_resolve(hipExecutionCtx_t handle) {
    return handle && hip_registry_contains(&ctxs, handle) ? (hip_exec_ctx_t *)handle : NULL;
}

/* The context's streams still alive (not hipStreamDestroy'ed), each with a
 * new reference the caller releases (ExecutionCtx's snapshot of streams_). */
static bool snapshot(hip_exec_ctx_t *c, hip_ptrvec_t *out) {
    bool ok = true;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->streams.n && ok; i++) {
        hip_stream_t *s = c->streams.v[i];
        if (!hip_stream_valid(s)) continue;
        ok = hip_ptrvec_push(out, s);
        if (ok) hip_stream_retain(s);
    }
    pthread_mutex_unlock(&c->lock);
    return ok;
}

static void release_all(hip_ptrvec_t *v) {
    for (size_t i = 0; i < v->n; i++) hip_stream_release(v->v[i]);
    hip_ptrvec_free(v);
}

hipError_t hipGreenCtxCreate(hipExecutionCtx_t *phCtx, hipDevResourceDesc_t desc, int device,
                             unsigned int flags) {
    HIP_INIT_API();
    if (!phCtx || !desc || flags != 0) HIP_RETURN(hipErrorInvalidValue);
    if (device < 0 || device >= hip_device_count()) HIP_RETURN(hipErrorInvalidDevice);
    hip_res_desc_t *d = hip_res_desc_resolve(desc);
    if (!d) HIP_RETURN(hipErrorInvalidValue);   /* clr: used as it is */
    if (d->device < 0 || d->device != device) HIP_RETURN(hipErrorInvalidDevice);
    if (d->count == 0) HIP_RETURN(hipErrorInvalidValue);
    hip_exec_ctx_t *c;
    HIP_RETURN_ONFAIL(ctx_new(device, d, &c));
    *phCtx = (hipExecutionCtx_t)c;
    HIP_RETURN(hipSuccess);
}

/* ExecutionCtx::~ExecutionCtx and hip::Stream::Detach. */
hipError_t hipExecutionCtxDestroy(hipExecutionCtx_t ctx) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c) HIP_RETURN(hipErrorInvalidValue);
    if (c->primary) HIP_RETURN(hipErrorInvalidValue);   /* the device's, not the user's */
    if (!hip_registry_remove(&ctxs, c)) HIP_RETURN(hipErrorInvalidValue);
    for (size_t i = 0; i < c->streams.n; i++) {
        hip_stream_t *s = c->streams.v[i];
        hip_stream_detach(s);
        hip_stream_release(s);
    }
    c->streams.n = 0;
    ctx_free(c);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceGetExecutionCtx(hipExecutionCtx_t *ctx, int device) {
    HIP_INIT_API();
    if (!ctx) HIP_RETURN(hipErrorInvalidValue);
    if (device < 0 || device >= hip_device_count()) HIP_RETURN(hipErrorInvalidDevice);
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&primary_lock);
    if (!primary[device]) status = ctx_new(device, NULL, &primary[device]);
    if (status == hipSuccess) *ctx = (hipExecutionCtx_t)primary[device];
    pthread_mutex_unlock(&primary_lock);
    HIP_RETURN(status == hipSuccess ? hipSuccess : hipErrorOutOfMemory);
}

/* Priorities clamp to High (-1) .. Low (1), as hipStreamCreateWithPriority's. */
hipError_t hipExecutionCtxStreamCreate(hipStream_t *stream, hipExecutionCtx_t ctx,
                                       unsigned int flags, int priority) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!stream || !c) HIP_RETURN(hipErrorInvalidValue);
    if (flags != hipStreamDefault && flags != hipStreamNonBlocking) HIP_RETURN(hipErrorInvalidValue);
    int p = priority <= -1 ? -1 : priority >= 1 ? 1 : 0;
    hipStream_t made;
    HIP_RETURN_ONFAIL(hip_stream_create_on(&made, c->device, flags, p, c->cu_mask, c->cu_mask_words));
    pthread_mutex_lock(&c->lock);
    bool ok = hip_ptrvec_push(&c->streams, made);
    if (ok) hip_stream_retain(made);                       /* ExecutionCtx::addStream */
    pthread_mutex_unlock(&c->lock);
    if (!ok) {
        (void)hipStreamDestroy(made);
        HIP_RETURN(hipErrorOutOfMemory);
    }
    *stream = made;
    HIP_RETURN(hipSuccess);
}

/* ExecutionCtx::getDevResource: the context's resources of that type, as a
 * list (nextResource) in the caller's array, which must hold them all. */
hipError_t hipExecutionCtxGetDevResource(hipExecutionCtx_t ctx, hipDevResource *resource,
                                         hipDevResourceType type) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c || !resource) HIP_RETURN(hipErrorInvalidValue);
    unsigned n, count = 0;
    const hipDevResource *res = ctx_resources(c, &n);
    for (unsigned i = 0; i < n; i++) {
        if (res[i].type != type) continue;
        resource[count] = res[i];
        resource[count].nextResource = NULL;
        if (count > 0) resource[count - 1].nextResource = &resource[count];
        count++;
    }
    HIP_RETURN(count ? hipSuccess : hipErrorInvalidResourceType);
}

hipError_t hipExecutionCtxGetDevice(int *device, hipExecutionCtx_t ctx) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!device || !c) HIP_RETURN(hipErrorInvalidValue);
    *device = c->device;
    HIP_RETURN(hipSuccess);
}

hipError_t hipExecutionCtxGetId(hipExecutionCtx_t ctx, unsigned long long *ctxId) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c || !ctxId) HIP_RETURN(hipErrorInvalidValue);
    *ctxId = c->id;
    HIP_RETURN(hipSuccess);
}

/* The CUs a stream may use: its CU mask's granules times the alignment (all
 * of the device's for a stream without a mask; the null stream: the current
 * device's resource).  Not guarded by the detach check. */
hipError_t hipStreamGetDevResource(hipStream_t hStream, hipDevResource *resource,
                                   hipDevResourceType type) {
    HIP_INIT_API();
    if (!resource) HIP_RETURN(hipErrorInvalidValue);
    if (type == hipDevResourceTypeWorkqueueConfig || type == hipDevResourceTypeWorkqueue)
        HIP_RETURN(hipErrorInvalidResourceType);
    if (!hip_stream_valid(hStream)) HIP_RETURN(hipErrorInvalidHandle);
    memset(resource, 0, sizeof *resource);
    if (hStream == NULL) HIP_RETURN(hip_res_of_device(hip_current_dev()->id, resource, type));
    if (type != hipDevResourceTypeSm) HIP_RETURN(hipErrorInvalidResourceType);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(hStream, &s));
    unsigned alignment = hip_res_sm_alignment(s->device), count = 0;
    if (s->cu_mask_size == 0) {
        count = hip_res_total_cus(s->device) / alignment;
    } else {
        for (uint32_t i = 0; i < s->cu_mask_size; i++) count += (unsigned)__builtin_popcount(s->cu_mask[i]);
    }
    resource->type = hipDevResourceTypeSm;
    resource->sm.smCount = count * alignment;
    resource->sm.smCoscheduledAlignment = alignment;
    resource->sm.minSmPartitionSize = alignment;
    HIP_RETURN(hipSuccess);
}

/* clr's isValid(event) first; the stub also refuses a null event, which clr
 * would dereference. */
static hipError_t ctx_event(hipEvent_t event, struct ihipEvent_t **out) {
    return hip_event_resolve(event, out) == hipSuccess ? hipSuccess : hipErrorInvalidHandle;
}

/* ExecutionCtx::recordEvent: on its one stream, or on every stream joined by
 * a marker on the first that the record follows (nothing when it has none). */
hipError_t hipExecutionCtxRecordEvent(hipExecutionCtx_t ctx, hipEvent_t event) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c) HIP_RETURN(hipErrorInvalidValue);
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(ctx_event(event, &e));
    hip_ptrvec_t v = {0};
    if (!snapshot(c, &v)) {
        release_all(&v);
        HIP_RETURN(hipErrorOutOfMemory);
    }
    hipError_t status = hipSuccess;
    if (v.n > 1) {
        hip_op_t *fan_in = hip_op_new(NULL, 0);
        bool ok = fan_in != NULL;
        for (size_t i = 1; i < v.n && ok; i++) {
            hip_op_t *last = hip_stream_last(v.v[i]);
            if (last) ok = hip_op_add_dep(fan_in, last);
            hip_op_unref(last);
        }
        if (ok) hip_stream_submit(v.v[0], fan_in);
        else hip_op_unref(fan_in);
        if (!ok) status = hipErrorOutOfMemory;
    }
    if (status == hipSuccess && v.n > 0) status = hip_event_record_on(e, v.v[0]);
    release_all(&v);
    HIP_RETURN(status);
}

hipError_t hipExecutionCtxSynchronize(hipExecutionCtx_t ctx) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c) HIP_RETURN(hipErrorInvalidValue);
    hip_ptrvec_t v = {0};
    bool ok = snapshot(c, &v);
    for (size_t i = 0; ok && i < v.n; i++) hip_stream_sync(v.v[i]);
    release_all(&v);
    HIP_RETURN(ok ? hipSuccess : hipErrorOutOfMemory);
}

/* ExecutionCtx::waitEvent: every stream of the context waits for it. */
hipError_t hipExecutionCtxWaitEvent(hipExecutionCtx_t ctx, hipEvent_t event) {
    HIP_INIT_API();
    hip_exec_ctx_t *c = ctx_resolve(ctx);
    if (!c) HIP_RETURN(hipErrorInvalidValue);
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(ctx_event(event, &e));
    hip_ptrvec_t v = {0};
    bool ok = snapshot(c, &v);
    for (size_t i = 0; ok && i < v.n; i++) hip_event_wait_on(e, v.v[i]);
    release_all(&v);
    HIP_RETURN(ok ? hipSuccess : hipErrorOutOfMemory);
}

#endif
