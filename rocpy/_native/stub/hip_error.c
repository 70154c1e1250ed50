/* Per-thread state, the last error and error names (hipamd hip_error.cpp,
 * hip_internal.hpp's HIP_RETURN / HIP_INIT_API). */
#include <stdio.h>

#include "hip_internal.h"

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

/* No _Thread_local: the extension is dlopen'ed, so such variables would live
 * in dynamic TLS, which glibc frees behind the sanitizers' back. */
static void tls_destroy(void *p) {
    hip_tls_t *t = p;
    /* the streams' teardown may call back into the API on this thread */
    pthread_setspecific(tls_key, t);
    hip_capture_thread_exit(t);
    hip_stream_thread_exit(t);
    hip_ptrvec_free(&t->ctx_stack);
    hip_ptrvec_free(&t->captures);
    pthread_setspecific(tls_key, NULL);
    free(t);
}

static void tls_key_init(void) {
    if (pthread_key_create(&tls_key, tls_destroy) != 0) stub_abort("hip", "no thread-local key");
}

hip_tls_t *hip_tls(void) {
    pthread_once(&tls_once, tls_key_init);
    hip_tls_t *t = pthread_getspecific(tls_key);
    if (t) return t;
    t = calloc(1, sizeof *t);
    if (!t) stub_abort("hip", "out of memory for thread state");
    t->device = -1;
    t->last_error = hipSuccess;
    t->capture_mode = hipStreamCaptureModeGlobal;
    pthread_setspecific(tls_key, t);
    return t;
}

void hip_hold(void *obj, void (*unref)(void *obj)) {
    hip_tls_t *t = hip_tls();
    if (t->nheld < (int)(sizeof t->held / sizeof t->held[0])) {
        t->held[t->nheld++] = (struct hip_held){obj, unref};
    } else {
        unref(obj);   /* no call resolves this many handles; never the last reference here */
    }
}

void hip_release_held(hip_tls_t *t) {
    while (t->nheld > 0) {
        struct hip_held h = t->held[--t->nheld];
        h.unref(h.obj);
    }
}

hipError_t hip_set_error(hipError_t status) {
    hip_tls_t *t = hip_tls();
    if (!stub_rule(STUB_RULE_LAST_ERROR_KEEPS_ERRORS) ||
        (status != hipSuccess && status != hipErrorNotReady))
        t->last_error = status;
    if (t->nheld) hip_release_held(t);
    return status;
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

void hip_init_quiet(void) {
    pthread_once(&init_once, hip_device_init);
    hip_tls_t *t = hip_tls();
    if (t->device < 0 && hip_device_count() > 0) t->device = 0;
}

hipError_t hip_init_api(void) {
    hip_init_quiet();
    return hip_device_count() > 0 ? hipSuccess : hipErrorNoDevice;
}

hipError_t hipInit(unsigned int flags) {
    HIP_INIT_API();
    if (flags != 0 && stub_rule(STUB_RULE_INIT_FLAGS_MUST_BE_ZERO)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hipSuccess);
}

/* hipamd: hipGetLastError does not go through HIP_RETURN; it returns the
 * error and resets it.  hipPeekAtLastError returns it through HIP_RETURN,
 * which leaves it unchanged (what HIP_RETURN records is release-dependent:
 * hip_set_error). */
hipError_t hipGetLastError(void) {
    HIP_INIT_API();
    hip_tls_t *t = hip_tls();
    hipError_t err = t->last_error;
    t->last_error = hipSuccess;
    return err;
}

hipError_t hipPeekAtLastError(void) {
    HIP_INIT_API();
    HIP_RETURN(hip_tls()->last_error);
}

#define NAME(x) case x: return #x;

static const char *error_name(hipError_t e) {
    switch (e) {
    NAME(hipSuccess) NAME(hipErrorInvalidValue) NAME(hipErrorOutOfMemory)
    NAME(hipErrorNotInitialized) NAME(hipErrorDeinitialized) NAME(hipErrorProfilerDisabled)
    NAME(hipErrorProfilerNotInitialized) NAME(hipErrorProfilerAlreadyStarted)
    NAME(hipErrorProfilerAlreadyStopped) NAME(hipErrorInvalidConfiguration)
    NAME(hipErrorInvalidSymbol) NAME(hipErrorInvalidDevicePointer)
    NAME(hipErrorInvalidMemcpyDirection) NAME(hipErrorInsufficientDriver)
    NAME(hipErrorMissingConfiguration) NAME(hipErrorPriorLaunchFailure)
    NAME(hipErrorInvalidDeviceFunction) NAME(hipErrorNoDevice) NAME(hipErrorInvalidDevice)
    NAME(hipErrorInvalidPitchValue) NAME(hipErrorInvalidImage) NAME(hipErrorInvalidContext)
    NAME(hipErrorContextAlreadyCurrent) NAME(hipErrorMapFailed) NAME(hipErrorUnmapFailed)
    NAME(hipErrorArrayIsMapped) NAME(hipErrorAlreadyMapped) NAME(hipErrorNoBinaryForGpu)
    NAME(hipErrorAlreadyAcquired) NAME(hipErrorNotMapped) NAME(hipErrorNotMappedAsArray)
    NAME(hipErrorNotMappedAsPointer) NAME(hipErrorECCNotCorrectable)
    NAME(hipErrorUnsupportedLimit) NAME(hipErrorContextAlreadyInUse)
    NAME(hipErrorPeerAccessUnsupported) NAME(hipErrorInvalidKernelFile)
    NAME(hipErrorInvalidGraphicsContext) NAME(hipErrorInvalidSource)
    NAME(hipErrorFileNotFound) NAME(hipErrorSharedObjectSymbolNotFound)
    NAME(hipErrorSharedObjectInitFailed) NAME(hipErrorOperatingSystem)
    NAME(hipErrorInvalidHandle) NAME(hipErrorIllegalState) NAME(hipErrorNotFound)
    NAME(hipErrorNotReady) NAME(hipErrorIllegalAddress) NAME(hipErrorLaunchOutOfResources)
    NAME(hipErrorLaunchTimeOut) NAME(hipErrorPeerAccessAlreadyEnabled)
    NAME(hipErrorPeerAccessNotEnabled) NAME(hipErrorSetOnActiveProcess)
    NAME(hipErrorContextIsDestroyed) NAME(hipErrorAssert)
    NAME(hipErrorHostMemoryAlreadyRegistered) NAME(hipErrorHostMemoryNotRegistered)
    NAME(hipErrorLaunchFailure) NAME(hipErrorNotSupported) NAME(hipErrorUnknown)
    NAME(hipErrorRuntimeMemory) NAME(hipErrorRuntimeOther)
    NAME(hipErrorCooperativeLaunchTooLarge) NAME(hipErrorStreamCaptureUnsupported)
    NAME(hipErrorStreamCaptureInvalidated) NAME(hipErrorStreamCaptureMerge)
    NAME(hipErrorStreamCaptureUnmatched) NAME(hipErrorStreamCaptureUnjoined)
    NAME(hipErrorStreamCaptureIsolation) NAME(hipErrorStreamCaptureImplicit)
    NAME(hipErrorCapturedEvent) NAME(hipErrorStreamCaptureWrongThread)
    NAME(hipErrorGraphExecUpdateFailure) NAME(hipErrorTbd)
    default: return "hipErrorUnknown";
    }
}

/* ihipGetErrorString's text (hipamd/clr hip_error.cpp, the same from 5.3 to
 * 6.3 but for hipErrorRuntimeMemory/RuntimeOther, which 5.3 lacks and 6.2 has);
 * hipGetErrorString returns it where STUB_RULE_ERROR_STRING_DESCRIPTIVE holds. */
#define TEXT(x, text) case x: return text;

static const char *error_text(hipError_t e) {
    switch (e) {
    TEXT(hipSuccess, "no error")
    TEXT(hipErrorInvalidValue, "invalid argument")
    TEXT(hipErrorOutOfMemory, "out of memory")
    TEXT(hipErrorNotInitialized, "initialization error")
    TEXT(hipErrorDeinitialized, "driver shutting down")
    TEXT(hipErrorProfilerDisabled, "profiler disabled while using external profiling tool")
    TEXT(hipErrorProfilerNotInitialized, "profiler is not initialized")
    TEXT(hipErrorProfilerAlreadyStarted, "profiler already started")
    TEXT(hipErrorProfilerAlreadyStopped, "profiler already stopped")
    TEXT(hipErrorInvalidConfiguration, "invalid configuration argument")
    TEXT(hipErrorInvalidPitchValue, "invalid pitch argument")
    TEXT(hipErrorInvalidSymbol, "invalid device symbol")
    TEXT(hipErrorInvalidDevicePointer, "invalid device pointer")
    TEXT(hipErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")
    TEXT(hipErrorInsufficientDriver, "driver version is insufficient for runtime version")
    TEXT(hipErrorMissingConfiguration, "__global__ function call is not configured")
    TEXT(hipErrorPriorLaunchFailure, "unspecified launch failure in prior launch")
    TEXT(hipErrorInvalidDeviceFunction, "invalid device function")
    TEXT(hipErrorNoDevice, "no ROCm-capable device is detected")
    TEXT(hipErrorInvalidDevice, "invalid device ordinal")
    TEXT(hipErrorInvalidImage, "device kernel image is invalid")
    TEXT(hipErrorInvalidContext, "invalid device context")
    TEXT(hipErrorContextAlreadyCurrent, "context is already current context")
    TEXT(hipErrorMapFailed, "mapping of buffer object failed")
    TEXT(hipErrorUnmapFailed, "unmapping of buffer object failed")
    TEXT(hipErrorArrayIsMapped, "array is mapped")
    TEXT(hipErrorAlreadyMapped, "resource already mapped")
    TEXT(hipErrorNoBinaryForGpu, "no kernel image is available for execution on the device")
    TEXT(hipErrorAlreadyAcquired, "resource already acquired")
    TEXT(hipErrorNotMapped, "resource not mapped")
    TEXT(hipErrorNotMappedAsArray, "resource not mapped as array")
    TEXT(hipErrorNotMappedAsPointer, "resource not mapped as pointer")
    TEXT(hipErrorECCNotCorrectable, "uncorrectable ECC error encountered")
    TEXT(hipErrorUnsupportedLimit, "limit is not supported on this architecture")
    TEXT(hipErrorContextAlreadyInUse, "exclusive-thread device already in use by a different thread")
    TEXT(hipErrorPeerAccessUnsupported, "peer access is not supported between these two devices")
    TEXT(hipErrorInvalidKernelFile, "invalid kernel file")
    TEXT(hipErrorInvalidGraphicsContext, "invalid OpenGL or DirectX context")
    TEXT(hipErrorInvalidSource, "device kernel image is invalid")
    TEXT(hipErrorFileNotFound, "file not found")
    TEXT(hipErrorSharedObjectSymbolNotFound, "shared object symbol not found")
    TEXT(hipErrorSharedObjectInitFailed, "shared object initialization failed")
    TEXT(hipErrorOperatingSystem, "OS call failed or operation not supported on this OS")
    TEXT(hipErrorInvalidHandle, "invalid resource handle")
    TEXT(hipErrorIllegalState, "the operation cannot be performed in the present state")
    TEXT(hipErrorNotFound, "named symbol not found")
    TEXT(hipErrorNotReady, "device not ready")
    TEXT(hipErrorIllegalAddress, "an illegal memory access was encountered")
    TEXT(hipErrorLaunchOutOfResources, "too many resources requested for launch")
    TEXT(hipErrorLaunchTimeOut, "the launch timed out and was terminated")
    TEXT(hipErrorPeerAccessAlreadyEnabled, "peer access is already enabled")
    TEXT(hipErrorPeerAccessNotEnabled, "peer access has not been enabled")
    TEXT(hipErrorSetOnActiveProcess, "cannot set while device is active in this process")
    TEXT(hipErrorContextIsDestroyed, "context is destroyed")
    TEXT(hipErrorAssert, "device-side assert triggered")
    TEXT(hipErrorHostMemoryAlreadyRegistered, "part or all of the requested memory range is already mapped")
    TEXT(hipErrorHostMemoryNotRegistered, "pointer does not correspond to a registered memory region")
    TEXT(hipErrorLaunchFailure, "unspecified launch failure")
    TEXT(hipErrorCooperativeLaunchTooLarge, "too many blocks in cooperative launch")
    TEXT(hipErrorNotSupported, "operation not supported")
    TEXT(hipErrorStreamCaptureUnsupported, "operation not permitted when stream is capturing")
    TEXT(hipErrorStreamCaptureInvalidated, "operation failed due to a previous error during capture")
    TEXT(hipErrorStreamCaptureMerge, "operation would result in a merge of separate capture sequences")
    TEXT(hipErrorStreamCaptureUnmatched, "capture was not ended in the same stream as it began")
    TEXT(hipErrorStreamCaptureUnjoined, "capturing stream has unjoined work")
    TEXT(hipErrorStreamCaptureIsolation, "dependency created on uncaptured work in another stream")
    TEXT(hipErrorStreamCaptureImplicit, "operation would make the legacy stream depend on a capturing blocking stream")
    TEXT(hipErrorCapturedEvent, "operation not permitted on an event last recorded in a capturing stream")
    TEXT(hipErrorStreamCaptureWrongThread, "attempt to terminate a thread-local capture sequence from another thread")
    TEXT(hipErrorGraphExecUpdateFailure, "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update")
    TEXT(hipErrorRuntimeMemory, "runtime memory call returned error")
    TEXT(hipErrorRuntimeOther, "runtime call other than memory returned error")
    default: return "unknown error";
    }
}

#undef NAME

const char *hipGetErrorName(hipError_t hip_error) { return error_name(hip_error); }

/* hipamd 5.2 returns the name here too (descriptions came with ROCm 5.3). */
const char *hipGetErrorString(hipError_t hip_error) {
    return stub_rule(STUB_RULE_ERROR_STRING_DESCRIPTIVE) ? error_text(hip_error) : error_name(hip_error);
}
