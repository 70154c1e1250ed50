/* Copies declared from the 7.x headers: hipMemcpy3DPeer(+Async) and the
 * batches hipMemcpyBatchAsync / hipMemcpy3DBatchAsync (hipamd hip_memory.cpp:
 * hipMemcpyBatchAsync, ihipMemcpyBatch, hipMemcpy3DBatchAsync).
 *
 * hipMemcpy3DPeer: the peer parameters become hipMemcpy3DParms with
 * hipMemcpyDefault (the devices are named by the memory itself); devices
 * out of range are hipErrorInvalidDevice (the header's documented statuses).
 * Where the stub had to choose: hipamd dereferences failIdx of
 * hipMemcpy3DBatchAsync unchecked (the stub answers hipErrorInvalidValue),
 * and hipMemcpyBatchAsync on a capturing stream (hipamd has no
 * STREAM_CAPTURE there and enqueues outside the graph) is
 * hipErrorStreamCaptureUnsupported. */
#include <stdint.h>
#include <string.h>

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipMemcpy3DPeer
static hipError_t peer_params(const hipMemcpy3DPeerParms *p, hipMemcpy3DParms *out) {
    if (!p) return hipErrorInvalidValue;
    if (!hip_dev(p->srcDevice) || !hip_dev(p->dstDevice)) return hipErrorInvalidDevice;
    memset(out, 0, sizeof *out);
    out->srcArray = p->srcArray;
    out->srcPos = p->srcPos;
    out->srcPtr = p->srcPtr;
    out->dstArray = p->dstArray;
    out->dstPos = p->dstPos;
    out->dstPtr = p->dstPtr;
    out->extent = p->extent;
    out->kind = hipMemcpyDefault;
    return hipSuccess;
}

hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms *p) {
    HIP_INIT_API();
    hipMemcpy3DParms q;
    HIP_RETURN_ONFAIL(peer_params(p, &q));
    HIP_RETURN(hip_memcpy_3d(NULL, &q, true));
}

hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms *p, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    hipMemcpy3DParms q;
    HIP_RETURN_ONFAIL(peer_params(p, &q));
    HIP_RETURN(hip_memcpy_3d(stream, &q, false));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyBatchAsync
/* hipMemcpyBatchAsync's checks of the attributes, in hipamd's order */
static hipError_t check_attrs(const hipMemcpyAttributes *attrs, const size_t *idxs,
                              size_t n, size_t count) {
    if (n == 0) return hipSuccess;
    if (!attrs || !idxs || idxs[0] != 0 || n > count) return hipErrorInvalidValue;
    for (size_t i = 1; i < n; i++)
        if (idxs[i] <= idxs[i - 1] || idxs[i] >= count) return hipErrorInvalidValue;
    for (size_t i = 0; i < n; i++)
        if (attrs[i].srcAccessOrder < hipMemcpySrcAccessOrderStream ||
            attrs[i].srcAccessOrder > hipMemcpySrcAccessOrderAny)
            return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count,
                               hipMemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                               size_t *failIdx, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (!hip_stream_valid(stream)) HIP_RETURN(hipErrorInvalidHandle);
    if (!dsts || !srcs || !sizes || count == 0) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(check_attrs(attrs, attrsIdxs, numAttrs, count));
    for (size_t i = 0; i < count; i++)
        if (sizes[i] == 0) {
            if (failIdx) *failIdx = i;
            HIP_RETURN(hipErrorInvalidValue);
        }
    if (failIdx) *failIdx = SIZE_MAX;
    hip_stream_t *s;
    bool capturing;
    HIP_RETURN_ONFAIL(hip_stream_begin_op(stream, &s, &capturing));
    if (capturing) HIP_RETURN(hipErrorStreamCaptureUnsupported);
    /* ihipMemcpyBatch: every copy validated before any is enqueued; the
     * attributes only hint at engines and ordering, which the stub's one
     * worker per stream already keeps */
    for (size_t i = 0; i < count; i++)
        HIP_RETURN_ONFAIL(hip_memcpy_validate(dsts[i], srcs[i], sizes[i]));
    for (size_t i = 0; i < count; i++)
        HIP_RETURN_ONFAIL(hip_memcpy_on(s, dsts[i], srcs[i], sizes[i], hipMemcpyDefault, true));
    HIP_RETURN(hipSuccess);
}

/* One hipMemcpy3DBatchOp as hipMemcpy3DParms: a pointer operand's row length
 * and layer height (0: the extent's, packed) make its pitched pointer, an
 * array operand's offset its position. */
static hipError_t operand(const hipMemcpy3DOperand *o, const hipExtent *e, hipArray_t *array,
                          hipPos *pos, hipPitchedPtr *ptr) {
    switch (o->type) {
    case hipMemcpyOperandTypePointer: {
        size_t row = o->op.ptr.rowLength ? o->op.ptr.rowLength : e->width;
        size_t layer = o->op.ptr.layerHeight ? o->op.ptr.layerHeight : e->height;
        *ptr = (hipPitchedPtr){o->op.ptr.ptr, row, row, layer};
        return hipSuccess;
    }
    case hipMemcpyOperandTypeArray:
        *array = o->op.array.array;
        *pos = (hipPos){o->op.array.offset.x, o->op.array.offset.y, o->op.array.offset.z};
        return hipSuccess;
    default:
        return hipErrorInvalidValue;
    }
}

hipError_t hipMemcpy3DBatchAsync(size_t numOps, struct hipMemcpy3DBatchOp *opList,
                                 size_t *failIdx, unsigned long long flags, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (flags != 0 || !opList || numOps == 0) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_stream_valid(stream)) HIP_RETURN(hipErrorInvalidHandle);
    if (!failIdx) HIP_RETURN(hipErrorInvalidValue);
    *failIdx = SIZE_MAX;
    for (size_t i = 0; i < numOps; i++) {
        hipMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.extent = opList[i].extent;
        p.kind = hipMemcpyDefault;
        hipError_t status = operand(&opList[i].src, &p.extent, &p.srcArray, &p.srcPos, &p.srcPtr);
        if (status == hipSuccess)
            status = operand(&opList[i].dst, &p.extent, &p.dstArray, &p.dstPos, &p.dstPtr);
        if (status == hipSuccess) status = hip_memcpy_3d(stream, &p, false);
        if (status != hipSuccess) {
            *failIdx = i;
            HIP_RETURN(status);
        }
    }
    HIP_RETURN(hipSuccess);
}
#endif
