/* Strided copies: hipMemcpy2D/3D and their Async forms (hipamd
 * hip_memory.cpp ihipMemcpyParam3D, ROCclr BufferRect).  Each side has a
 * memory type from the kind; hipMemoryTypeUnified (hipMemcpyDefault) becomes
 * Device for tracked memory and Host otherwise, and Host becomes Device for
 * tracked (pinned) memory.  A Device side must be tracked memory and the
 * region must fit its allocation.  An array is its packed storage
 * (hip_array.c). */
#include <string.h>

#include "hip_internal.h"

typedef struct side {
    hipMemoryType type;
    char *ptr;
    size_t pitch, rows;               /* row pitch, rows per slice (0: height) */
    size_t x, y, z;
    bool array;
} side_t;

typedef struct rect_desc {
    side_t src, dst;
    size_t width, height, depth;
} rect_desc_t;

static bool kind_types(hipMemcpyKind kind, hipMemoryType *src, hipMemoryType *dst) {
    switch (kind) {
    case hipMemcpyHostToHost: *src = hipMemoryTypeHost; *dst = hipMemoryTypeHost; return true;
    case hipMemcpyHostToDevice: *src = hipMemoryTypeHost; *dst = hipMemoryTypeDevice; return true;
    case hipMemcpyDeviceToHost: *src = hipMemoryTypeDevice; *dst = hipMemoryTypeHost; return true;
    case hipMemcpyDeviceToDevice: *src = hipMemoryTypeDevice; *dst = hipMemoryTypeDevice; return true;
    case hipMemcpyDefault: *src = hipMemoryTypeUnified; *dst = hipMemoryTypeUnified; return true;
    default: return false;
    }
}

/* BufferRect::create plus validateRegion for a device side; *start is the
 * byte offset of the region from the side's pointer. */
static hipError_t check_side(side_t *s, const rect_desc_t *d, hip_rect_t *r, bool is_src,
                             size_t *start) {
    if (s->type == hipMemoryTypeUnified || s->type == hipMemoryTypeHost)
        s->type = stub_mem_find(s->ptr, NULL) ? hipMemoryTypeDevice : hipMemoryTypeHost;
    size_t row = s->pitch ? s->pitch : d->width;
    size_t slice = s->rows ? row * s->rows : row * d->height;
    if (row < d->width || slice < d->height * row || slice % row) return hipErrorInvalidValue;
    *start = s->z * slice + s->y * row + s->x;
    size_t end = (d->depth - 1) * slice + (d->height - 1) * row + d->width;
    if (s->type == hipMemoryTypeDevice) {
        stub_alloc_t a;
        if (!s->ptr || !stub_mem_find(s->ptr, &a)) return hipErrorInvalidValue;
        size_t off = (uintptr_t)s->ptr - a.base;
        if (off + *start + end > a.size) return hipErrorInvalidValue;
    } else if (!s->ptr) {
        return hipErrorInvalidValue;
    }
    if (is_src) {
        r->src_pitch = row;
        r->src_slice = slice;
    } else {
        r->dst_pitch = row;
        r->dst_slice = slice;
    }
    return hipSuccess;
}

/* Build the copy; *pageable when a side is untracked host memory. */
static hipError_t rect_op(rect_desc_t *d, hip_op_t **out, bool *pageable) {
    *out = NULL;
    hip_rect_t r = {0};
    r.width = d->width;
    r.height = d->height;
    r.depth = d->depth;
    size_t src_start, dst_start;
    hipError_t status = check_side(&d->src, d, &r, true, &src_start);
    if (status == hipSuccess) status = check_side(&d->dst, d, &r, false, &dst_start);
    if (status != hipSuccess) return status;
    *pageable = d->src.type == hipMemoryTypeHost || d->dst.type == hipMemoryTypeHost;
    *out = hip_copy_rect_op(d->dst.ptr + dst_start, d->src.ptr + src_start, &r);
    return *out ? hipSuccess : hipErrorOutOfMemory;
}

static hipError_t desc_from_3d(const hipMemcpy3DParms *p, rect_desc_t *d) {
    /* exactly one of array / pointer on each side */
    if (!p || (p->srcArray && p->srcPtr.ptr) || (p->dstArray && p->dstPtr.ptr))
        return hipErrorInvalidValue;
    if ((!p->srcArray && !p->srcPtr.ptr) || (!p->dstArray && !p->dstPtr.ptr))
        return hipErrorInvalidValue;
    if (stub_rule(STUB_RULE_MEMCPY3D_PITCH_BELOW_ROW) &&
        (p->srcPtr.pitch < p->srcPtr.xsize || p->dstPtr.pitch < p->dstPtr.xsize))
        return hipErrorInvalidPitchValue;
    memset(d, 0, sizeof *d);
    if (!kind_types(p->kind, &d->src.type, &d->dst.type)) return hipErrorInvalidMemcpyDirection;
    d->src = (side_t){d->src.type, p->srcPtr.ptr, p->srcPtr.pitch, p->srcPtr.ysize,
                      p->srcPos.x, p->srcPos.y, p->srcPos.z, p->srcArray != NULL};
    d->dst = (side_t){d->dst.type, p->dstPtr.ptr, p->dstPtr.pitch, p->dstPtr.ysize,
                      p->dstPos.x, p->dstPos.y, p->dstPos.z, p->dstArray != NULL};
    d->width = p->extent.width;
    d->height = p->extent.height;
    d->depth = p->extent.depth;
    /* an array side is its packed storage; with an array on either side the
     * extent's width and the array positions count elements (ihipMemcpy3D) */
    size_t elem = 0;
    for (int i = 0; i < 2; i++) {
        side_t *sd = i ? &d->dst : &d->src;
        const void *array = i ? (const void *)p->dstArray : (const void *)p->srcArray;
        if (!array) continue;
        size_t row, rows, e;
        char *data;
        if (!hip_array_storage(array, &data, &row, &rows, &e)) return hipErrorInvalidValue;
        if (elem && e != elem) return hipErrorInvalidValue;
        elem = e;
        *sd = (side_t){hipMemoryTypeDevice, data, row, rows, sd->x * e, sd->y, sd->z, false};
        if (sd->x + d->width * e > row || sd->y + d->height > rows) return hipErrorInvalidValue;
    }
    if (elem) d->width *= elem;
    return hipSuccess;
}

hipError_t hip_memcpy3d_op(const hipMemcpy3DParms *p, hip_op_t **out) {
    rect_desc_t d;
    *out = NULL;
    hipError_t status = desc_from_3d(p, &d);
    if (status != hipSuccess || !d.width || !d.height || !d.depth) return status;
    bool pageable;
    return rect_op(&d, out, &pageable);
}

static hipError_t rect_run(hip_stream_t *s, rect_desc_t *d, bool async) {
    if (!d->width || !d->height || !d->depth) return hipSuccess;
    hip_op_t *op;
    bool pageable;
    hipError_t status = rect_op(d, &op, &pageable);
    if (status != hipSuccess) return status;
    if (d->src.type == hipMemoryTypeHost && d->dst.type == hipMemoryTypeHost) {
        hip_op_execute(op);   /* host to host: on the calling thread, as hipamd */
        return hipSuccess;
    }
    if (async && !pageable)
        hip_stream_submit(s, op);
    else
        hip_stream_submit_wait(s, op);
    return hipSuccess;
}

static hipError_t desc_from_2d(rect_desc_t *d, void *dst, size_t dpitch, const void *src,
                               size_t spitch, size_t width, size_t height, hipMemcpyKind kind) {
    memset(d, 0, sizeof *d);
    if (width > dpitch || width > spitch) return hipErrorInvalidPitchValue;
    if (!kind_types(kind, &d->src.type, &d->dst.type)) return hipErrorInvalidMemcpyDirection;
    d->src.ptr = (char *)src;
    d->src.pitch = spitch;
    d->dst.ptr = dst;
    d->dst.pitch = dpitch;
    d->width = width;
    d->height = height;
    d->depth = 1;
    return hipSuccess;
}

hipError_t hip_memcpy_2d(hipStream_t stream, void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                         bool sync_api) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_transfer(stream, sync_api, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) {
        if (!dst || !src) return hipErrorInvalidValue;
        hipMemcpy3DParms p;
        memset(&p, 0, sizeof p);
        p.kind = kind;
        p.srcPtr = (hipPitchedPtr){(void *)src, spitch, 0, 0};
        p.dstPtr = (hipPitchedPtr){dst, dpitch, 0, 0};
        p.extent = (hipExtent){width, height, 1};
        return hip_capture_node(s, hip_make_memcpy_node, &p);
    }
    if (width == 0 || height == 0) return hipSuccess;
    rect_desc_t d;
    status = desc_from_2d(&d, dst, dpitch, src, spitch, width, height, kind);
    if (status != hipSuccess) return status;
    return rect_run(s, &d, !sync_api);
}

hipError_t hipMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                       size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(hip_memcpy_2d(NULL, dst, dpitch, src, spitch, width, height, kind, true));
}

hipError_t hipMemcpy2D_spt(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                           size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(hip_memcpy_2d(hipStreamPerThread, dst, dpitch, src, spitch, width, height, kind, true));
}

hipError_t hipMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                            size_t width, size_t height, hipMemcpyKind kind, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(hip_memcpy_2d(stream, dst, dpitch, src, spitch, width, height, kind, false));
}

hipError_t hip_memcpy_3d(hipStream_t stream, const hipMemcpy3DParms *p, bool sync_api) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_transfer(stream, sync_api, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) return hip_capture_node(s, hip_make_memcpy_node, (void *)p);
    rect_desc_t d;
    status = desc_from_3d(p, &d);
    if (status != hipSuccess) return status;
    return rect_run(s, &d, !sync_api);
}

hipError_t hipMemcpy3D(const hipMemcpy3DParms *p) {
    HIP_INIT_API();
    HIP_RETURN(hip_memcpy_3d(NULL, p, true));
}

hipError_t hipMemcpy3D_spt(const hipMemcpy3DParms *p) {
    HIP_INIT_API();
    HIP_RETURN(hip_memcpy_3d(hipStreamPerThread, p, true));
}

hipError_t hipMemcpy3DAsync(const hipMemcpy3DParms *p, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(hip_memcpy_3d(stream, p, false));
}
