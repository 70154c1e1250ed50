/* Device queries the headers of 5.7 on add (clr hipamd/src/
 * hip_device_runtime.cpp, amd-staging): hipDeviceGetTexture1DLinearMaxWidth
 * (the device's maxTexture1DLinear over the element size the channel
 * format gives; no format bits is hipErrorInvalidValue) and
 * hipSetValidDevices, which hipamd leaves unimplemented
 * (hipErrorNotSupported after an assert that release builds drop). */
#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipDeviceGetTexture1DLinearMaxWidth
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
#endif

#ifdef ROCPY_HAVE_hipSetValidDevices
hipError_t hipSetValidDevices(int *device_arr, int len) {
    (void)device_arr, (void)len;
    HIP_INIT_API();
    HIP_RETURN(hipErrorNotSupported);
}
#endif
