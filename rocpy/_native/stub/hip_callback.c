/* Host callbacks in stream order (hipamd hip_stream.cpp: hipStreamAddCallback,
 * hipLaunchHostFunc).  The callback runs on the stream's worker thread once
 * everything before it completed; the stream continues when it returns, as
 * hipamd's second, blocking marker makes it. */
#include "hip_internal.h"

typedef struct callback_args {
    hipStreamCallback_t callback;
    hipHostFn_t fn;
    hipStream_t stream;
    void *user;
} callback_args_t;

static void run_callback(hip_op_t *op) {
    callback_args_t *a = HIP_OP_DATA(op, callback_args_t);
    if (a->callback)
        a->callback(a->stream, hipSuccess, a->user);
    else
        a->fn(a->user);
}

static hipError_t enqueue(hip_stream_t *s, hipStreamCallback_t callback, hipHostFn_t fn,
                          void *user) {
    hip_op_t *op = hip_op_new(run_callback, sizeof(callback_args_t));
    if (!op) return hipErrorOutOfMemory;
    *HIP_OP_DATA(op, callback_args_t) = (callback_args_t){callback, fn, hip_stream_handle(s), user};
    hip_stream_submit(s, op);
    return hipSuccess;
}

/* CUDA refuses stream callbacks in a capture (hipamd would run it eagerly):
 * the stub refuses and invalidates the capture. */
static hipError_t add_callback(hipStream_t stream, hipStreamCallback_t callback, void *user,
                               unsigned int flags) {
    if (!callback || flags != 0) return hipErrorInvalidValue;
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) {
        hip_capture_invalidate(s);
        return hipErrorStreamCaptureUnsupported;
    }
    return enqueue(s, callback, NULL, user);
}

hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void *userData,
                                unsigned int flags) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(add_callback(stream, callback, userData, flags));
}

static hipError_t launch_host_func(hipStream_t stream, hipHostFn_t fn, void *user) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    if (!fn) return hipErrorInvalidValue;
    if (capturing) {
        hipHostNodeParams p = {fn, user};
        return hip_capture_node(s, hip_make_host_node, &p);
    }
    return enqueue(s, NULL, fn, user);
}

hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void *userData) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(launch_host_func(stream, fn, userData));
}
