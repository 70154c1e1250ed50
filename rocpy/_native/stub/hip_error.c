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
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(hipSuccess);
}

/* hipamd 5.2: hipGetLastError does not go through HIP_RETURN; it returns the
 * error and resets it.  hipPeekAtLastError returns it through HIP_RETURN,
 * which leaves it unchanged. */
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

#undef NAME

const char *hipGetErrorName(hipError_t hip_error) { return error_name(hip_error); }

/* hipamd 5.2 returns the name here too (descriptions came with ROCm 5.3). */
const char *hipGetErrorString(hipError_t hip_error) { return error_name(hip_error); }
