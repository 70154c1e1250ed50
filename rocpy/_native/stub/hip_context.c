/* Contexts (hipamd hip_context.cpp).  HIP has one context per device, the
 * primary context; a hipCtx_t names it.  The deprecated hipCtx* calls keep a
 * per-thread stack of contexts as hipamd does: hipCtxCreate pushes without
 * changing the current device, hipCtxPushCurrent / hipCtxSetCurrent change
 * it, hipCtxPopCurrent only pops.  Where hipamd reads through an unknown
 * handle the stub answers hipErrorInvalidContext instead. */
#include "hip_internal.h"

struct ihipCtx_t {
    int device;
    atomic_int refs;
};

static struct ihipCtx_t ctxs[STUB_MAX_DEVICES];
static pthread_once_t ctxs_once = PTHREAD_ONCE_INIT;

static void ctxs_init(void) {
    for (int i = 0; i < STUB_MAX_DEVICES; i++) {
        ctxs[i].device = i;
        atomic_init(&ctxs[i].refs, 0);
    }
}

static hipCtx_t ctx_of(int device) {
    pthread_once(&ctxs_once, ctxs_init);
    return &ctxs[device];
}

static bool ctx_valid(hipCtx_t ctx) {
    return ctx >= &ctxs[0] && ctx < &ctxs[hip_device_count()];
}

hipError_t hipCtxCreate(hipCtx_t *ctx, unsigned int flags, hipDevice_t device) {
    (void)flags;
    HIP_INIT_API();
    if (device < 0 || device >= hip_device_count() || !ctx) HIP_RETURN(hipErrorInvalidValue);
    *ctx = ctx_of(device);
    atomic_fetch_add(&(*ctx)->refs, 1);
    if (!hip_ptrvec_push(&hip_tls()->ctx_stack, *ctx)) HIP_RETURN(hipErrorOutOfMemory);
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxDestroy(hipCtx_t ctx) {
    HIP_INIT_API();
    if (!ctx) HIP_RETURN(hipErrorInvalidValue);
    hip_ptrvec_t *stack = &hip_tls()->ctx_stack;
    if (stack->n && stack->v[stack->n - 1] == ctx) stack->n--;
    if (ctx_valid(ctx)) atomic_fetch_sub(&ctx->refs, 1);
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxPopCurrent(hipCtx_t *ctx) {
    HIP_INIT_API();
    hip_ptrvec_t *stack = &hip_tls()->ctx_stack;
    if (!stack->n) HIP_RETURN(hipErrorInvalidContext);
    if (ctx) *ctx = stack->v[stack->n - 1];
    stack->n--;
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxPushCurrent(hipCtx_t ctx) {
    HIP_INIT_API();
    if (!ctx || !ctx_valid(ctx)) HIP_RETURN(hipErrorInvalidContext);
    hip_tls()->device = ctx->device;
    if (!hip_ptrvec_push(&hip_tls()->ctx_stack, ctx)) HIP_RETURN(hipErrorOutOfMemory);
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxSetCurrent(hipCtx_t ctx) {
    HIP_INIT_API();
    hip_ptrvec_t *stack = &hip_tls()->ctx_stack;
    if (!ctx) {
        if (stack->n) stack->n--;
        HIP_RETURN(hipSuccess);
    }
    if (!ctx_valid(ctx)) HIP_RETURN(hipErrorInvalidContext);
    hip_tls()->device = ctx->device;
    if (stack->n) stack->n--;
    if (!hip_ptrvec_push(stack, ctx)) HIP_RETURN(hipErrorOutOfMemory);
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxGetCurrent(hipCtx_t *ctx) {
    HIP_INIT_API();
    if (!ctx) HIP_RETURN(hipErrorInvalidValue);
    *ctx = ctx_of(hip_current_dev()->id);
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxGetDevice(hipDevice_t *device) {
    HIP_INIT_API();
    if (!device) HIP_RETURN(hipErrorInvalidValue);
    *device = hip_current_dev()->id;
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxGetSharedMemConfig(hipSharedMemConfig *pConfig) {
    HIP_INIT_API();
    if (!pConfig) HIP_RETURN(hipErrorInvalidValue);
    *pConfig = hipSharedMemBankSizeFourByte;
    HIP_RETURN(hipSuccess);
}

/* hipamd leaves these unimplemented: assert(0) in debug builds,
 * hipErrorNotSupported in release builds. */
hipError_t hipCtxGetApiVersion(hipCtx_t ctx, ROCPY_ARG_hipCtxGetApiVersion__apiVersion apiVersion) {
    (void)ctx;
    (void)apiVersion;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxGetCacheConfig(hipFuncCache_t *cacheConfig) {
    (void)cacheConfig;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxSetCacheConfig(hipFuncCache_t cacheConfig) {
    (void)cacheConfig;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxSetSharedMemConfig(hipSharedMemConfig config) {
    (void)config;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxSynchronize(void) {
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxGetFlags(unsigned int *flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipCtxEnablePeerAccess(hipCtx_t peerCtx, unsigned int flags) {
    (void)peerCtx;
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

hipError_t hipCtxDisablePeerAccess(hipCtx_t peerCtx) {
    (void)peerCtx;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

/* ---- the primary context --------------------------------------------- */

hipError_t hipDevicePrimaryCtxGetState(hipDevice_t dev, unsigned int *flags, int *active) {
    HIP_INIT_API();
    hip_dev_t *d = hip_dev(dev);
    if (!d) HIP_RETURN(hipErrorInvalidDevice);
    if (flags) *flags = 0;
    if (active) *active = atomic_load(&d->active) ? 1 : 0;
    HIP_RETURN(hipSuccess);
}

hipError_t hipDevicePrimaryCtxRelease(hipDevice_t dev) {
    HIP_INIT_API();
    if (!hip_dev(dev)) HIP_RETURN(hipErrorInvalidDevice);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDevicePrimaryCtxRetain(hipCtx_t *pctx, hipDevice_t dev) {
    HIP_INIT_API();
    if (!hip_dev(dev)) HIP_RETURN(hipErrorInvalidDevice);
    if (!pctx) HIP_RETURN(hipErrorInvalidValue);
    *pctx = ctx_of(dev);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDevicePrimaryCtxReset(hipDevice_t dev) {
    (void)dev;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

/* hipamd: the primary context is always in use, so its flags cannot change */
hipError_t hipDevicePrimaryCtxSetFlags(hipDevice_t dev, unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    if (!hip_dev(dev)) HIP_RETURN(hipErrorInvalidDevice);
    HIP_RETURN(hipErrorContextAlreadyInUse);
}
