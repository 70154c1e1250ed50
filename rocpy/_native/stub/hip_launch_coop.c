/* Cooperative launches of module functions and the extensible launch of one
 * (clr hipamd/src/hip_module.cpp at rocm-6.2.0 and rocm-systems 2025:
 * hipModuleLaunchCooperativeKernel, ihipModuleLaunchCooperativeKernelMultiDevice,
 * hipDrvLaunchKernelEx; the cooperative check of ihipLaunchKernel_validate).
 *
 * A cooperative grid must be resident at once: ihipLaunchKernel_validate
 * asks the occupancy code for the most blocks of this size the device holds
 * (numBlocksPerGrid) and refuses a bigger grid with
 * hipErrorCooperativeLaunchTooLarge.  The stub's devices report
 * cooperativeLaunch and cooperativeMultiDeviceLaunch, so neither check
 * refuses for the device (hipErrorLaunchFailure in hipamd). */
#include "hip_launch_ex.h"
#include "stub_codeobject.h"

static bool grid_items(const uint32_t grid[3], const uint32_t block[3], uint32_t global[3]) {
    for (int i = 0; i < 3; i++) {
        uint64_t g = (uint64_t)grid[i] * block[i];
        if (g > UINT32_MAX) return false;
        global[i] = (uint32_t)g;
    }
    return true;
}

/* ihipModuleLaunchKernel + ihipLaunchKernel_validate for a cooperative
 * launch (the same from 5.7 to 7.x where not said): a null f
 * hipErrorInvalidResourceHandle; a zero dimension, more than 1024 threads
 * or more dynamic LDS than the CU has hipErrorInvalidValue (6.2's validate
 * says hipErrorInvalidConfiguration for a zero dimension: not modelled);
 * then the plain launch's checks (an unknown function, launch bounds) and
 * the grid against the resident limit.  What fails before the grid check is
 * left to the plain launch path, which reports it. */
hipError_t hip_launch_cooperative(hipFunction_t f, const uint32_t grid[3], const uint32_t block[3],
                                  unsigned shared, hipStream_t stream, void **params, void **extra) {
    uint32_t global[3];
    if (!grid_items(grid, block, global)) return hipErrorInvalidConfiguration;
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    if (!f) return hipErrorInvalidResourceHandle;
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
    if (!threads || !blocks || threads > 1024 || shared > hip_dev(s->device)->info->lds_size)
        return hipErrorInvalidValue;
    struct ihipModuleSymbol_t *sym;
    if (hip_function_resolve(f, &sym) == hipSuccess &&
        !(sym->kernel->max_flat_workgroup_size && threads > sym->kernel->max_flat_workgroup_size)) {
        int limit;
        HIP_RETURN_ONFAIL(hip_occupancy_grid_limit(sym, s->device, (int)threads, shared, &limit));
        if (blocks > (uint64_t)(limit > 0 ? limit : 0)) return hipErrorCooperativeLaunchTooLarge;
    }
    return hip_launch_module(f, global, block, shared, stream, params, extra);
}

#ifdef ROCPY_HAVE_hipModuleLaunchCooperativeKernel
/* A stream hipamd does not know: hipErrorInvalidValue to 6.x,
 * hipErrorContextIsDestroyed in 7.x (STUB_RULE_COOPERATIVE_BAD_STREAM_CONTEXT_DESTROYED) */
static hipError_t bad_stream(void) {
    return stub_rule(STUB_RULE_COOPERATIVE_BAD_STREAM_CONTEXT_DESTROYED)
               ? hipErrorContextIsDestroyed : hipErrorInvalidValue;
}

hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gridDimX,
                                            unsigned int gridDimY, unsigned int gridDimZ,
                                            unsigned int blockDimX, unsigned int blockDimY,
                                            unsigned int blockDimZ, unsigned int sharedMemBytes,
                                            hipStream_t stream, void **kernelParams) {
    HIP_INIT_API();
    if (!hip_stream_valid(stream)) HIP_RETURN(bad_stream());
    HIP_CHECK_STREAM_DETACHED(stream);
    const uint32_t grid[3] = {gridDimX, gridDimY, gridDimZ};
    const uint32_t block[3] = {blockDimX, blockDimY, blockDimZ};
    HIP_RETURN(hip_launch_cooperative(f, grid, block, sharedMemBytes, stream, kernelParams, NULL));
}
#endif

#ifdef ROCPY_HAVE_hipModuleLaunchCooperativeKernelMultiDevice
static void sync_all(const hipFunctionLaunchParams *list, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        hip_stream_t *s;
        if (hip_stream_resolve(list[i].hStream, &s) == hipSuccess) hip_stream_sync(s);
    }
}

static bool same_shape(const hipFunctionLaunchParams *a, const hipFunctionLaunchParams *b) {
    return a->gridDimX == b->gridDimX && a->gridDimY == b->gridDimY && a->gridDimZ == b->gridDimZ &&
           a->blockDimX == b->blockDimX && a->blockDimY == b->blockDimY &&
           a->blockDimZ == b->blockDimZ && a->sharedMemBytes == b->sharedMemBytes;
}

/* ihipModuleLaunchCooperativeKernelMultiDevice's checks in its order; the
 * stub checks the count before reading the list (hipamd reads numDevices
 * entries first).  Unless hipCooperativeLaunchMultiDeviceNoPreSync /
 * NoPostSync, every stream is waited for before and after the launches. */
static hipError_t multi_device(hipFunctionLaunchParams *list, unsigned n, unsigned flags) {
    if (!list) return hipErrorInvalidValue;
    if (n == 0 || n > (unsigned)hip_device_count()) return hipErrorInvalidValue;
    for (unsigned i = 0; i < n; i++)
        if (!hip_stream_valid(list[i].hStream)) return hipErrorInvalidValue;
    if (flags > (hipCooperativeLaunchMultiDeviceNoPostSync | hipCooperativeLaunchMultiDeviceNoPreSync))
        return hipErrorInvalidValue;
    uint64_t seen = 0;
    for (unsigned i = 0; i < n; i++) {
        const hipFunctionLaunchParams *l = &list[i];
        if ((uint64_t)l->blockDimX * l->blockDimY * l->blockDimZ == 0) return hipErrorInvalidConfiguration;
        if (!l->hStream) return hipErrorInvalidResourceHandle;
        hip_stream_t *s;
        HIP_RETURN_ONFAIL(hip_stream_resolve(l->hStream, &s));
        if (seen & (1ull << s->device)) return hipErrorInvalidDevice;
        seen |= 1ull << s->device;
    }
    if (!(flags & hipCooperativeLaunchMultiDeviceNoPreSync)) sync_all(list, n);
    if (stub_rule(STUB_RULE_COOPERATIVE_MULTI_DEVICE_SAME_SHAPE))
        for (unsigned i = 1; i < n; i++)
            if (!same_shape(&list[i - 1], &list[i])) return hipErrorInvalidValue;
    hipError_t status = hipSuccess;
    for (unsigned i = 0; i < n && status == hipSuccess; i++) {
        const hipFunctionLaunchParams *l = &list[i];
        const uint32_t grid[3] = {l->gridDimX, l->gridDimY, l->gridDimZ};
        const uint32_t block[3] = {l->blockDimX, l->blockDimY, l->blockDimZ};
        status = hip_launch_cooperative(l->function, grid, block, l->sharedMemBytes, l->hStream,
                                        l->kernelParams, NULL);
    }
    if (!(flags & hipCooperativeLaunchMultiDeviceNoPostSync)) sync_all(list, n);
    return status;
}

hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams *launchParamsList,
                                                       unsigned int numDevices, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN(multi_device(launchParamsList, numDevices, flags));
}
#endif

#ifdef ROCPY_HAVE_hipDrvLaunchKernelEx
/* hipDrvLaunchKernelEx (7.x): f, config, the stream (hipamd's isValid:
 * hipErrorContextIsDestroyed), the grid in work-items, then the attributes
 * in order: hipLaunchAttributeCooperative with a nonzero value launches
 * cooperatively at once (later attributes unread), with 0 it is skipped;
 * any other attribute is hipErrorInvalidValue (clr's "Attribute %u not
 * supported"; cluster dimensions and data prefetch, which newer clr
 * accepts, are not in the 7.2 headers).  A null attrs with numAttrs > 0:
 * hipErrorInvalidValue (hipamd reads it). */
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG *config, hipFunction_t f, void **params,
                                void **extra) {
    HIP_INIT_API();
    if (!f) HIP_RETURN(hipErrorInvalidResourceHandle);
    if (!config) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_stream_valid(config->hStream)) HIP_RETURN(hipErrorContextIsDestroyed);
    const uint32_t grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    const uint32_t block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    uint32_t global[3];
    if (!grid_items(grid, block, global)) HIP_RETURN(hipErrorInvalidConfiguration);
    if (config->numAttrs && !config->attrs) HIP_RETURN(hipErrorInvalidValue);
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const hipLaunchAttribute *a = &config->attrs[i];
        if (a->id != hipLaunchAttributeCooperative) HIP_RETURN(hipErrorInvalidValue);
        if (a->value.cooperative)
            HIP_RETURN(hip_launch_cooperative(f, grid, block, config->sharedMemBytes,
                                              config->hStream, params, extra));
    }
    HIP_RETURN(hip_launch_module(f, global, block, config->sharedMemBytes, config->hStream,
                                 params, extra));
}
#endif
