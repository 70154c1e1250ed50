/* Launches by host function pointer and the rest of the launch surface
 * (hipamd hip_module.cpp, hip_platform.cpp at rocm-5.2.3).
 *
 * A host function pointer is what fat-binary registration ties to a kernel
 * (PlatformState::getStatFunc, hip_fatbin.c).  hipLaunchKernel,
 * hipLaunchByPtr and hipLaunchCooperativeKernel launch registered ones; the
 * multi-device cooperative paths still treat every pointer as one nobody
 * registered (hipamd's statuses for that: hipErrorInvalidSymbol where
 * getStatFunc's own status is returned).
 * Kernels of modules launch through hipModuleLaunchKernel (hip_launch.c). */
#include <string.h>

#include "hip_fatbin.h"
#include "hip_internal.h"
#include "hip_launch_ex.h"
#include "stub_codeobject.h"

#define UNREGISTERED_LOOKUP hipErrorInvalidSymbol

/* the per-thread stack of hipConfigureCall configurations, each with the
 * arguments hipSetupArgument placed (PlatformState's execStack_) */
typedef struct exec_config {
    dim3 grid, block;
    size_t shared;
    hipStream_t stream;
    unsigned char *args;
    size_t nargs;
} exec_config_t;

static __thread exec_config_t *exec_stack;
static __thread size_t exec_depth, exec_cap;

hipError_t hipConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem, hipStream_t stream) {
    HIP_INIT_API();
    if (exec_depth == exec_cap) {
        size_t n = exec_cap ? exec_cap * 2 : 4;
        exec_config_t *s = realloc(exec_stack, n * sizeof *s);
        if (!s) HIP_RETURN(hipErrorOutOfMemory);
        exec_stack = s;
        exec_cap = n;
    }
    exec_stack[exec_depth++] = (exec_config_t){gridDim, blockDim, sharedMem, stream, NULL, 0};
    HIP_RETURN(hipSuccess);
}

/* a call without a configuration is hipErrorInvalidConfiguration (hipamd
 * writes into an empty deque's back) */
hipError_t hipSetupArgument(const void *arg, size_t size, size_t offset) {
    HIP_INIT_API();
    if (exec_depth == 0) HIP_RETURN(hipErrorInvalidConfiguration);
    if (!arg && size) HIP_RETURN(hipErrorInvalidValue);
    exec_config_t *c = &exec_stack[exec_depth - 1];
    if (offset + size > c->nargs) {
        unsigned char *a = realloc(c->args, offset + size);
        if (!a) HIP_RETURN(hipErrorOutOfMemory);
        memset(a + c->nargs, 0, offset + size - c->nargs);
        c->args = a;
        c->nargs = offset + size;
    }
    if (size) memcpy(c->args + offset, arg, size);
    HIP_RETURN(hipSuccess);
}

/* hipLaunchByPtr: the top configuration's arguments as the kernarg buffer */
hipError_t hipLaunchByPtr(const void *func) {
    HIP_INIT_API();
    if (exec_depth == 0) HIP_RETURN(hipErrorInvalidConfiguration);
    exec_config_t c = exec_stack[--exec_depth];
    size_t size = c.nargs;
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, c.args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    hipError_t status = hip_launch_by_host(func, c.grid, c.block, NULL, c.args ? extra : NULL,
                                           c.shared, c.stream);
    free(c.args);
    HIP_RETURN(status);
}

/* <<<>>>: hipcc's code pushes the configuration, then its host stub pops it
 * and calls hipLaunchKernel (PlatformState's execStack_, shared with
 * hipConfigureCall).  hipamd pops an empty deque (undefined); the stub
 * refuses with hipErrorInvalidConfiguration. */
hipError_t __hipPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                      hipStream_t stream) {
    return hipConfigureCall(gridDim, blockDim, sharedMem, stream);
}

hipError_t __hipPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
                                     hipStream_t *stream) {
    HIP_INIT_API();
    if (exec_depth == 0) HIP_RETURN(hipErrorInvalidConfiguration);
    exec_config_t c = exec_stack[--exec_depth];
    free(c.args);
    if (gridDim) *gridDim = c.grid;
    if (blockDim) *blockDim = c.block;
    if (sharedMem) *sharedMem = c.shared;
    if (stream) *stream = c.stream;
    HIP_RETURN(hipSuccess);
}

/* hipamd 5.2 (hip_code_object.cpp): no precompiled header in this build */
void __hipGetPCH(const char **pch, unsigned int *size) {
    if (pch) *pch = NULL;
    if (size) *size = 0;
}

hipError_t hipLaunchKernel_spt(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                               void **args, size_t sharedMemBytes, hipStream_t stream) {
    return hipLaunchKernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes,
                           stream ? stream : hipStreamPerThread);
}

hipError_t hipExtLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                              void **args, size_t sharedMemBytes, hipStream_t stream,
                              hipEvent_t startEvent, hipEvent_t stopEvent, int flags) {
    (void)startEvent;
    (void)stopEvent;
    (void)flags;
    return hipLaunchKernel(function_address, numBlocks, dimBlocks, args, sharedMemBytes, stream);
}

/* hipLaunchCooperativeKernel_common: the stream first (hipErrorInvalidValue),
 * then getStatFunc's status (a pointer nobody registered:
 * UNREGISTERED_LOOKUP), then the cooperative launch of the kernel
 * registered for it on the stream's device (hip_launch_coop.c) */
hipError_t hip_launch_cooperative_by_host(const void *f, dim3 grid, dim3 block, void **params,
                                          unsigned shared, hipStream_t stream) {
    hip_stream_t *s;
    if (hip_stream_resolve(stream, &s) != hipSuccess) return hipErrorInvalidValue;
    if (!f || !hip_fatbin_function_name(f)) return UNREGISTERED_LOOKUP;
    hipFunction_t fn;
    HIP_RETURN_ONFAIL(hip_fatbin_function(f, s->device, &fn));
    const uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
    return hip_launch_cooperative(fn, g, b, shared, stream, params, NULL);
}

hipError_t hipLaunchCooperativeKernel(const void *f, dim3 gridDim, dim3 blockDimX,
                                      void **kernelParams, unsigned int sharedMemBytes,
                                      hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(hip_launch_cooperative_by_host(f, gridDim, blockDimX, kernelParams, sharedMemBytes,
                                              stream));
}

hipError_t hipLaunchCooperativeKernel_spt(const void *f, dim3 gridDim, dim3 blockDim,
                                          void **kernelParams, uint32_t sharedMemBytes,
                                          hipStream_t hStream) {
    HIP_INIT_API();
    HIP_RETURN(hip_launch_cooperative_by_host(f, gridDim, blockDim, kernelParams, sharedMemBytes,
                                              hStream ? hStream : hipStreamPerThread));
}

/* ihipLaunchCooperativeKernelMultiDevice's checks in its order: the count
 * and list, every stream, block sizes, a null stream
 * (hipErrorInvalidResourceHandle), two launches on one device; then the
 * functions are looked up */
static hipError_t multi_device(hipLaunchParams *list, int n) {
    if (n > hip_device_count() || !list) return hipErrorInvalidValue;
    for (int i = 0; i < n; i++)
        if (!hip_stream_valid(list[i].stream)) return hipErrorInvalidValue;
    uint64_t seen = 0;
    for (int i = 0; i < n; i++) {
        if ((uint64_t)list[i].blockDim.x * list[i].blockDim.y * list[i].blockDim.z == 0)
            return hipErrorInvalidConfiguration;
        if (!list[i].stream) return hipErrorInvalidResourceHandle;
        hip_stream_t *s;
        HIP_RETURN_ONFAIL(hip_stream_resolve(list[i].stream, &s));
        if (seen & (1ull << s->device)) return hipErrorInvalidDevice;
        seen |= 1ull << s->device;
    }
    return n > 0 ? UNREGISTERED_LOOKUP : hipSuccess;
}

hipError_t hipLaunchCooperativeKernelMultiDevice(hipLaunchParams *launchParamsList, int numDevices,
                                                 unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(multi_device(launchParamsList, numDevices));
}

hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams *launchParamsList, int numDevices,
                                              unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(multi_device(launchParamsList, numDevices));
}

/* "No way to set function attribute yet": hipamd accepts and ignores these */
hipError_t hipFuncSetAttribute(const void *func, hipFuncAttribute attr, int value) {
    (void)func, (void)attr, (void)value;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

hipError_t hipFuncSetCacheConfig(const void *func, hipFuncCache_t config) {
    (void)func, (void)config;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

hipError_t hipFuncSetSharedMemConfig(const void *func, hipSharedMemConfig config) {
    (void)func, (void)config;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

/* the kernel's name (NULL for a handle that is no kernel of a loaded module,
 * where hipamd would dereference it) */
const char *hipKernelNameRef(const hipFunction_t f) {
    struct ihipModuleSymbol_t *sym;
    if (hip_function_resolve(f, &sym) != hipSuccess) return NULL;
    return sym->kernel->full_name ? sym->kernel->full_name : sym->kernel->name;
}

/* NULL for a null pointer or an invalid stream, as hipamd; otherwise the
 * registered function's name */
const char *hipKernelNameRefByPtr(const void *hostFunction, hipStream_t stream) {
    hip_stream_t *s;
    if (!hostFunction || hip_stream_resolve(stream, &s) != hipSuccess) return NULL;
    return hip_fatbin_function_name(hostFunction);
}

/* hipamd: assert(0 && "Unimplemented"), then hipErrorNotSupported */
hipError_t hipProfilerStart(void) {
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

hipError_t hipProfilerStop(void) {
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}

/* hipamd: arguments checked, then hipErrorNotSupported (sparse arrays) */
hipError_t hipMemMapArrayAsync(hipArrayMapInfo *mapInfoList, unsigned int count,
                               hipStream_t stream) {
    (void)stream;
    HIP_INIT_API();
    if (!mapInfoList || count == 0) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hipErrorNotSupported);
}
