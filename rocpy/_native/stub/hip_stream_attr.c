/* Stream attributes and ids, declared from the 7.x headers (hipamd
 * hip_stream.cpp: hipStreamSetAttribute, hipStreamGetAttribute,
 * hipStreamCopyAttributes, hipStreamGetId_common).
 *
 * What hipamd stores: the synchronization policy is the one attribute
 * settable at run time (hipSyncPolicyAuto..BlockingSync); Get answers it and
 * the priority given at creation; every other attribute (the access policy
 * window, memory sync domains) is hipErrorInvalidValue for Get and Set.  A
 * stream's id is hip::Stream's stream_id_: unique over the process and
 * increasing with creation; the null stream of a device has its own. */
#include "hip_internal.h"

#if defined(ROCPY_HAVE_hipStreamGetAttribute) || defined(ROCPY_HAVE_hipStreamGetId)
/* hip::isValid, then the stream (null: the device's null stream) */
static hipError_t valid_stream(hipStream_t stream, hip_stream_t **out) {
    if (!hip_stream_valid(stream)) return hipErrorInvalidHandle;
    return hip_stream_resolve(stream, out) == hipSuccess ? hipSuccess : hipErrorInvalidHandle;
}
#endif

#ifdef ROCPY_HAVE_hipStreamGetAttribute

static int policy(const hip_stream_t *s) {
    return s->sync_policy ? s->sync_policy : hipSyncPolicyAuto;
}

hipError_t hipStreamSetAttribute(hipStream_t stream, hipLaunchAttributeID attr,
                                 const hipLaunchAttributeValue *value) {
    HIP_INIT_API();
    if (!value) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(valid_stream(stream, &s));
    /* hip::Stream::StreamCaptureOngoing: a capturing stream is invalidated */
    if (!s->is_null && hip_capture_ongoing(s)) HIP_RETURN(hipErrorStreamCaptureUnsupported);
    if (attr != hipLaunchAttributeSynchronizationPolicy) HIP_RETURN(hipErrorInvalidValue);
    if (value->syncPolicy < hipSyncPolicyAuto || value->syncPolicy > hipSyncPolicyBlockingSync)
        HIP_RETURN(hipErrorInvalidValue);
    s->sync_policy = (int)value->syncPolicy;
    HIP_RETURN(hipSuccess);
}

hipError_t hipStreamGetAttribute(hipStream_t stream, hipLaunchAttributeID attr,
                                 hipLaunchAttributeValue *value_out) {
    HIP_INIT_API();
    if (!value_out) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(valid_stream(stream, &s));
    switch (attr) {
    case hipLaunchAttributeSynchronizationPolicy:
        value_out->syncPolicy = (hipSynchronizationPolicy)policy(s);
        HIP_RETURN(hipSuccess);
    case hipLaunchAttributePriority:
        value_out->priority = s->priority;
        HIP_RETURN(hipSuccess);
    default:
        HIP_RETURN(hipErrorInvalidValue);
    }
}

hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src) {
    HIP_INIT_API();
    hip_stream_t *d, *s;
    if (!hip_stream_valid(src) || !hip_stream_valid(dst)) HIP_RETURN(hipErrorInvalidHandle);
    HIP_RETURN_ONFAIL(valid_stream(src, &s));
    HIP_RETURN_ONFAIL(valid_stream(dst, &d));
    d->sync_policy = s->sync_policy;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipStreamGetId
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long *streamId) {
    HIP_INIT_API();
    if (!streamId) HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(valid_stream(stream, &s));
    *streamId = s->id;
    HIP_RETURN(hipSuccess);
}
#endif
