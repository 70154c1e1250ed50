/* hipMemAdvise_v2 / hipMemPrefetchAsync_v2 (7.x headers): a hipMemLocation
 * instead of a device (hipamd hip_hmm.cpp).  hipamd's v1 entry points build
 * the location from the device (hipCpuDeviceId: hipMemLocationTypeHost, else
 * hipMemLocationTypeDevice with the id) and both reach ihipMemAdvise /
 * ihipMemPrefetchAsync; the stub maps back the other way and reuses
 * hip_managed.c.  Where the stub had to choose: another location type
 * (invalid, host NUMA node) is hipErrorInvalidValue. */
#include "hip_internal.h"

#if defined(ROCPY_HAVE_hipMemAdvise_v2) || defined(ROCPY_HAVE_hipMemPrefetchAsync_v2)
static bool location_device(hipMemLocation loc, int *device) {
    switch (loc.type) {
    case hipMemLocationTypeDevice: *device = loc.id; return true;
    case hipMemLocationTypeHost: *device = hipCpuDeviceId; return true;
    default: return false;
    }
}
#endif

#ifdef ROCPY_HAVE_hipMemAdvise_v2
hipError_t hipMemAdvise_v2(const void *dev_ptr, size_t count, hipMemoryAdvise advice,
                           hipMemLocation location) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    int device;
    if (!location_device(location, &device)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hipMemAdvise(dev_ptr, count, advice, device));
}
#endif

#ifdef ROCPY_HAVE_hipMemPrefetchAsync_v2
hipError_t hipMemPrefetchAsync_v2(const void *dev_ptr, size_t count, hipMemLocation location,
                                  unsigned int flags, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (flags != 0) HIP_RETURN(hipErrorInvalidValue);
    int device;
    if (!location_device(location, &device)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hipMemPrefetchAsync(dev_ptr, count, device, stream));
}
#endif
