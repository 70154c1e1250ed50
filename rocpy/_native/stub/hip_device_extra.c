/* Device queries the headers of 5.7 on add (clr hipamd/src/
 * hip_device_runtime.cpp, amd-staging): hipDeviceGetTexture1DLinearMaxWidth
 * (the device's maxTexture1DLinear over the element size the channel
 * format gives; no format bits is hipErrorInvalidValue) and
 * hipSetValidDevices, which hipamd leaves unimplemented
 * (hipErrorNotSupported after an assert that release builds drop). */
#include "hip_internal.h"

#if defined(ROCPY_HAVE_hipDeviceGetTexture1DLinearMaxWidth) && \
    ROCPY_NPARAMS_hipDeviceGetTexture1DLinearMaxWidth == 3
hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t *maxWidthInElements,
                                               const hipChannelFormatDesc *fmtDesc, int device) {
    HIP_INIT_API();
    if (!maxWidthInElements || !fmtDesc) HIP_RETURN(hipErrorInvalidValue);
    hipDeviceProp_t prop;
    HIP_RETURN_ONFAIL(hip_get_properties(&prop, device));
    size_t elem = (size_t)(fmtDesc->x + fmtDesc->y + fmtDesc->z + fmtDesc->w) / 8;
    if (elem == 0) HIP_RETURN(hipErrorInvalidValue);
    *maxWidthInElements = (size_t)prop.maxTexture1DLinear / elem;
    HIP_RETURN(hipSuccess);
}
#elif defined(ROCPY_HAVE_hipDeviceGetTexture1DLinearMaxWidth)
/* HIP 6.4's hip_runtime_api.h declares it as (hipMemPool_t *mem_pool, int
 * device), while hipamd defines (size_t *, const hipChannelFormatDesc *, int):
 * a call through this declaration leaves hipamd's third argument undefined,
 * so no call can be right.  The stub refuses it instead of guessing. */
hipError_t hipDeviceGetTexture1DLinearMaxWidth(hipMemPool_t *mem_pool, int device) {
    (void)mem_pool, (void)device;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}
#endif

#ifdef ROCPY_HAVE_hipSetValidDevices
hipError_t hipSetValidDevices(int *device_arr, int len) {
    (void)device_arr, (void)len;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}
#endif
