/* Newer calls taking a host function pointer (a __global__ symbol that
 * hipcc's constructor registered, hip_fatbin.c): hipGetFuncBySymbol,
 * hipOccupancyAvailableDynamicSMemPerBlock, hipLaunchKernelExC
 * (clr hipamd/src/hip_module.cpp, hip_platform.cpp; 6.2 and rocm-systems 2025). */
#include "hip_fatbin.h"
#include "hip_launch_ex.h"
#include "stub_codeobject.h"

#ifdef ROCPY_HAVE_hipGetFuncBySymbol
/* ihipGetFuncBySymbol: StatCO::GetFunc on the current device; any failure,
 * or a null functionPtr, is hipErrorInvalidDeviceFunction (hipamd writes
 * through functionPtr before it tests it; the stub tests first) */
hipError_t hipGetFuncBySymbol(hipFunction_t *functionPtr, const void *symbolPtr) {
    HIP_INIT_API();
    hipFunction_t f;
    if (!functionPtr || hip_fatbin_function(symbolPtr, hip_current_dev()->id, &f) != hipSuccess)
        HIP_RETURN(hipErrorInvalidDeviceFunction);
    *functionPtr = f;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipOccupancyAvailableDynamicSMemPerBlock
#define MAX_THREADS_PER_CU 2048   /* hipDeviceProp_t.maxThreadsPerMultiProcessor (hip_device.c) */
#define LDS_ALIGNMENT 16          /* ROCclr Isa::ldsAlignment: not in any clr the stub has read */

/* hipOccupancyAvailableDynamicSMemPerBlock (clr hip_platform.cpp): the
 * dynamic LDS each of numBlocks blocks may have, from the CU's LDS less the
 * kernel's static LDS per resident block, capped by the kernel's maximum
 * dynamic LDS and aligned down.  Statuses in hipamd's order: null out,
 * numBlocks or blockSize <= 0 hipErrorInvalidValue, an unregistered f
 * hipErrorInvalidDeviceFunction, blockSize above the CU's threads
 * hipErrorInvalidValue (rocm-systems; 7.1 divided by zero there). */
hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *f,
                                                    int numBlocks, int blockSize) {
    HIP_INIT_API();
    if (!dynamicSmemSize || numBlocks <= 0 || blockSize <= 0) HIP_RETURN(hipErrorInvalidValue);
    hip_dev_t *dev = hip_current_dev();
    hipFunction_t fn;
    struct ihipModuleSymbol_t *sym;
    if (hip_fatbin_function(f, dev->id, &fn) != hipSuccess) HIP_RETURN(hipErrorInvalidDeviceFunction);
    if (hip_function_resolve(fn, &sym) != hipSuccess) HIP_RETURN(hipErrorInvalidHandle);
    if (blockSize > MAX_THREADS_PER_CU) HIP_RETURN(hipErrorInvalidValue);
    int lds = (int)dev->info->lds_size;   /* maxSharedMemoryPerMultiProcessor */
    int fixed = (int)sym->kernel->group_segment_fixed_size;
    int max_dynamic = lds - fixed;        /* WorkGroupInfo maxDynamicSharedSizeBytes_ */
    int max_blocks = MAX_THREADS_PER_CU / blockSize;
    int resident = numBlocks < max_blocks ? numBlocks : max_blocks;
    int per_cu = lds - fixed * resident;
    int at_most = per_cu / max_blocks < max_dynamic ? per_cu / max_blocks : max_dynamic;
    int asked = per_cu / numBlocks < max_dynamic ? per_cu / numBlocks : max_dynamic;
    int size = asked > at_most ? asked : at_most;
    if (size < 0) size = 0;
    *dynamicSmemSize = (size_t)(size / LDS_ALIGNMENT * LDS_ALIGNMENT);
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipLaunchKernelExC
/* hipLaunchKernelExC (7.x): a null fPtr hipErrorInvalidDeviceFunction, a
 * null config hipErrorInvalidConfiguration; without attributes
 * hipLaunchKernel_common; hipLaunchAttributeCooperative with a nonzero
 * value is hipLaunchCooperativeKernel_common at once (later attributes
 * unread), with 0 it is skipped; any other attribute is
 * hipErrorInvalidValue (cluster dimensions and data prefetch, which newer
 * clr accepts, are not in the 7.2 headers).  A null attrs with
 * numAttrs > 0: hipErrorInvalidValue (hipamd reads it). */
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t *config, const void *fPtr, void **args) {
    HIP_INIT_API();
    if (!fPtr) HIP_RETURN(hipErrorInvalidDeviceFunction);
    if (!config) HIP_RETURN(hipErrorInvalidConfiguration);
    if (config->numAttrs && !config->attrs) HIP_RETURN(hipErrorInvalidValue);
    for (unsigned i = 0; i < config->numAttrs; i++) {
        const hipLaunchAttribute *a = &config->attrs[i];
        if (a->id != hipLaunchAttributeCooperative) HIP_RETURN(hipErrorInvalidValue);
        if (a->val.cooperative)
            HIP_RETURN(hip_launch_cooperative_by_host(fPtr, config->gridDim, config->blockDim, args,
                                                      (unsigned)config->dynamicSmemBytes,
                                                      config->stream));
    }
    /* hipLaunchKernel_common: an unknown stream is hipErrorInvalidValue */
    if (!hip_stream_valid(config->stream)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_launch_by_host(fPtr, config->gridDim, config->blockDim, args, NULL,
                                  config->dynamicSmemBytes, config->stream));
}
#endif
