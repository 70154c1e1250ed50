/* The driver-API forms of the error queries, declared from the 5.7/6.x
 * headers (clr hipamd/src/hip_error.cpp, rocm-6.2.0 and amd-staging):
 * hipExtGetLastError is hipGetLastError (returns the thread's last error and
 * resets it; its own return is not recorded); hipDrvGetErrorName/String
 * answer through an output, hipErrorInvalidValue for a null one and for a
 * value they have no name (text) for. */
#include <string.h>

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipExtGetLastError
hipError_t hipExtGetLastError(void) {
    HIP_INIT_API();
    hip_tls_t *t = hip_tls();
    hipError_t err = t->last_error;
    t->last_error = hipSuccess;
    return err;
}
#endif

#ifdef ROCPY_HAVE_hipDrvGetErrorName
hipError_t hipDrvGetErrorName(hipError_t hip_error, const char **errStr) {
    if (!errStr) return hipErrorInvalidValue;
    *errStr = hipGetErrorName(hip_error);
    return hip_error == hipErrorUnknown || strcmp(*errStr, "hipErrorUnknown") != 0
               ? hipSuccess : hipErrorInvalidValue;
}
#endif

#ifdef ROCPY_HAVE_hipDrvGetErrorString
/* where hipGetErrorString gives names (STUB_RULE_ERROR_STRING_DESCRIPTIVE
 * not in force) the comparison with "unknown error" never matches */
hipError_t hipDrvGetErrorString(hipError_t hip_error, const char **errStr) {
    if (!errStr) return hipErrorInvalidValue;
    *errStr = hipGetErrorString(hip_error);
    return hip_error == hipErrorUnknown || strcmp(*errStr, "unknown error") != 0
               ? hipSuccess : hipErrorInvalidValue;
}
#endif
