/* Linear copies (hipamd hip_memory.cpp ihipMemcpy, hip_peer.cpp).
 *
 * hipamd finds both pointers in its memory map and ignores the kind, except
 * when neither is known: then only hipMemcpyHostToHost / Default copy (after
 * the stream drains), any other kind is hipErrorInvalidValue.  A copy from
 * or to pageable (untracked) host memory is synchronous even through an
 * Async API, as ROCclr reads/writes the user buffer at enqueue time.
 * Synchronous APIs run on the legacy null stream, so they wait for the
 * device's blocking streams first. */
#include <stdatomic.h>
#include <string.h>

#include "hip_internal.h"

static _Atomic int last_kind = -1;   /* rocpy_stub_last_memcpy_kind */

int rocpy_stub_last_memcpy_kind(void) { return atomic_load(&last_kind); }

typedef struct copy_args {
    void *dst;
    const void *src;
    size_t size;
} copy_args_t;

static void run_copy(hip_op_t *op) {
    copy_args_t *a = HIP_OP_DATA(op, copy_args_t);
    memmove(a->dst, a->src, a->size);
}

hip_op_t *hip_copy_op(void *dst, const void *src, size_t size) {
    hip_op_t *op = hip_op_new(run_copy, sizeof(copy_args_t));
    if (op) *HIP_OP_DATA(op, copy_args_t) = (copy_args_t){dst, src, size};
    return op;
}

typedef struct rect_args {
    void *dst;
    const void *src;
    hip_rect_t r;
} rect_args_t;

static void run_rect(hip_op_t *op) {
    rect_args_t *a = HIP_OP_DATA(op, rect_args_t);
    for (size_t z = 0; z < a->r.depth; z++)
        for (size_t y = 0; y < a->r.height; y++)
            memmove((char *)a->dst + z * a->r.dst_slice + y * a->r.dst_pitch,
                    (const char *)a->src + z * a->r.src_slice + y * a->r.src_pitch, a->r.width);
}

hip_op_t *hip_copy_rect_op(void *dst, const void *src, const hip_rect_t *r) {
    hip_op_t *op = hip_op_new(run_rect, sizeof(rect_args_t));
    if (op) *HIP_OP_DATA(op, rect_args_t) = (rect_args_t){dst, src, *r};
    return op;
}

/* hipamd's ihipMemcpy_validate: a size past the end of a known allocation */
hipError_t hip_memcpy_validate(void *dst, const void *src, size_t size) {
    if (!dst || !src) return hipErrorInvalidValue;
    stub_alloc_t a;
    if (stub_mem_find(src, &a) && size > a.size - ((uintptr_t)src - a.base))
        return hipErrorInvalidValue;
    if (stub_mem_find(dst, &a) && size > a.size - ((uintptr_t)dst - a.base))
        return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hip_memcpy_on(hip_stream_t *s, void *dst, const void *src, size_t size,
                         hipMemcpyKind kind, bool async) {
    if (size == 0) return hipSuccess;
    hipError_t status = hip_memcpy_validate(dst, src, size);
    if (status != hipSuccess) return status;
    bool src_known = stub_mem_find(src, NULL), dst_known = stub_mem_find(dst, NULL);
    if (!src_known && !dst_known) {
        if (kind != hipMemcpyHostToHost && kind != hipMemcpyDefault) return hipErrorInvalidValue;
        hip_stream_sync(s);
        memmove(dst, src, size);
        return hipSuccess;
    }
    if (!src_known || !dst_known) async = false;
    hip_op_t *op = hip_copy_op(dst, src, size);
    if (!op) return hipErrorOutOfMemory;
    if (async)
        hip_stream_submit(s, op);
    else
        hip_stream_submit_wait(s, op);
    return hipSuccess;
}

static hipError_t capture_copy(hip_stream_t *s, void *dst, const void *src, size_t size,
                               hipMemcpyKind kind) {
    hip_memcpy1d_params_t p = {dst, src, size, kind};
    return hip_capture_node(s, hip_make_memcpy1d_node, &p);
}

/* the synchronous copies: refused while anything captures, run on the
 * current device's null stream (or the per-thread stream for _spt) */
static hipError_t sync_copy(hipStream_t stream, void *dst, const void *src, size_t size,
                            hipMemcpyKind kind) {
    atomic_store(&last_kind, (int)kind);
    hipError_t status = hip_capture_check_sync();
    if (status != hipSuccess) return status;
    hip_stream_t *s;
    status = hip_stream_resolve(stream, &s);
    if (status != hipSuccess) return status;
    return hip_memcpy_on(s, dst, src, size, kind, false);
}

static hipError_t async_copy(hipStream_t stream, void *dst, const void *src, size_t size,
                             hipMemcpyKind kind, bool async) {
    atomic_store(&last_kind, (int)kind);
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) return capture_copy(s, dst, src, size, kind);
    return hip_memcpy_on(s, dst, src, size, kind, async);
}

hipError_t hipMemcpy(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(sync_copy(NULL, dst, src, sizeBytes, kind));
}

hipError_t hipMemcpy_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(sync_copy(hipStreamPerThread, dst, src, sizeBytes, kind));
}

hipError_t hipMemcpyWithStream(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                               hipStream_t stream) {
    HIP_INIT_API();
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, kind, false));
}

hipError_t hipMemcpyAsync(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                          hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, kind, true));
}

hipError_t hipMemcpyAsync_spt(void *dst, const void *src, size_t sizeBytes, hipMemcpyKind kind,
                              hipStream_t stream) {
    HIP_INIT_API();
    HIP_RETURN(async_copy(stream ? stream : hipStreamPerThread, dst, src, sizeBytes, kind, true));
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, ROCPY_ARG_hipMemcpyHtoD__src src, size_t sizeBytes) {
    HIP_INIT_API();
    HIP_RETURN(sync_copy(NULL, dst, src, sizeBytes, hipMemcpyHostToDevice));
}

hipError_t hipMemcpyDtoH(void *dst, hipDeviceptr_t src, size_t sizeBytes) {
    HIP_INIT_API();
    HIP_RETURN(sync_copy(NULL, dst, src, sizeBytes, hipMemcpyDeviceToHost));
}

hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes) {
    HIP_INIT_API();
    HIP_RETURN(sync_copy(NULL, dst, src, sizeBytes, hipMemcpyDeviceToDevice));
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, ROCPY_ARG_hipMemcpyHtoDAsync__src src, size_t sizeBytes,
                              hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, hipMemcpyHostToDevice, true));
}

hipError_t hipMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t sizeBytes, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, hipMemcpyDeviceToHost, true));
}

hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t sizeBytes,
                              hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, hipMemcpyDeviceToDevice, true));
}

/* hipamd 5.2: check the ordinals, then an ordinary device-to-device copy */
static bool peer_ok(int a, int b) { return hip_dev(a) && hip_dev(b); }

hipError_t hipMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice,
                         size_t sizeBytes) {
    HIP_INIT_API();
    if (!peer_ok(dstDevice, srcDevice)) HIP_RETURN(hipErrorInvalidDevice);
    HIP_RETURN(sync_copy(NULL, dst, src, sizeBytes, hipMemcpyDeviceToDevice));
}

hipError_t hipMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice,
                              size_t sizeBytes, hipStream_t stream) {
    HIP_INIT_API();
    if (!peer_ok(dstDevice, srcDevice)) HIP_RETURN(hipErrorInvalidDevice);
    HIP_RETURN(async_copy(stream, dst, src, sizeBytes, hipMemcpyDeviceToDevice, true));
}
