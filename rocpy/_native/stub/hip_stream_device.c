/* hipStreamGetDevice (headers of 5.7 on; clr hipamd/src/hip_stream.cpp at
 * rocm-6.2.0 and amd-staging 2024-10): a NULL output is hipErrorInvalidValue
 * before the stream is looked at; a stream that is not valid (hip::isValid)
 * hipErrorContextIsDestroyed; the null stream answers the current device,
 * hipStreamPerThread the thread's default stream's (the current device's). */
#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipStreamGetDevice
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device) {
    HIP_INIT_API();
    if (!device) HIP_RETURN(hipErrorInvalidValue);
    if (stream == NULL) {
        *device = hip_current_dev()->id;
        HIP_RETURN(hipSuccess);
    }
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    *device = s->device;
    HIP_RETURN(hipSuccess);
}
#endif
