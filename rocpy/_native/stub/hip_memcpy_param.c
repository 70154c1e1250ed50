/* Driver-style strided copies (hipamd hip_memory.cpp at rocm-5.2.3:
 * hipMemcpyParam2D[Async], hipDrvMemcpy2DUnaligned, hipDrvMemcpy3D[Async]
 * through ihipMemcpyParam3D): each side names its memory type; host and
 * device sides are pointers with a pitch, an array side is the array's
 * packed storage (hip_array.c) with its x offset in bytes and the region
 * inside the array (Image::validateRegion).  The copy itself is
 * hipMemcpy3D's (hip_memcpy_rect.c). */
#include <string.h>

#include "hip_internal.h"

typedef struct drv_side {
    hipMemoryType type;
    const void *host;
    void *device;
    const void *array;
    size_t x, y, z, pitch, height;
} drv_side_t;

static hipError_t to_pitched(const drv_side_t *d, size_t width, size_t height, size_t depth,
                             hipPitchedPtr *out, hipPos *pos) {
    *pos = (hipPos){d->x, d->y, d->z};
    switch (d->type) {
    case hipMemoryTypeHost:
        *out = (hipPitchedPtr){(void *)d->host, d->pitch, width, d->height};
        return d->host ? hipSuccess : hipErrorInvalidValue;
    case hipMemoryTypeDevice:
    case hipMemoryTypeUnified:
        *out = (hipPitchedPtr){d->device, d->pitch, width, d->height};
        return d->device ? hipSuccess : hipErrorInvalidValue;
    case hipMemoryTypeArray: {
        char *data;
        size_t row, rows, elem;
        if (!hip_array_storage(d->array, &data, &row, &rows, &elem)) return hipErrorInvalidValue;
        if (d->x % elem || width % elem || d->x + width > row || d->y + height > rows ||
            depth > 1 || d->z)
            return hipErrorInvalidValue;
        *out = (hipPitchedPtr){data, row, width, rows};
        return hipSuccess;
    }
    default: return hipErrorInvalidValue;
    }
}

static hipError_t drv_parms(const drv_side_t *src, const drv_side_t *dst, size_t width,
                            size_t height, size_t depth, hipMemcpy3DParms *p) {
    memset(p, 0, sizeof *p);
    HIP_RETURN_ONFAIL(to_pitched(src, width, height, depth, &p->srcPtr, &p->srcPos));
    HIP_RETURN_ONFAIL(to_pitched(dst, width, height, depth, &p->dstPtr, &p->dstPos));
    p->extent = (hipExtent){width, height, depth};
    p->kind = hipMemcpyDefault;
    return hipSuccess;
}

static hipError_t drv_copy(hipStream_t stream, const drv_side_t *src, const drv_side_t *dst,
                           size_t width, size_t height, size_t depth, bool sync_api) {
    hipMemcpy3DParms p;
    HIP_RETURN_ONFAIL(drv_parms(src, dst, width, height, depth, &p));
    return hip_memcpy_3d(stream, &p, sync_api);
}

static hipError_t param_2d(const hip_Memcpy2D *c, hipStream_t stream, bool sync_api) {
    if (!c) return hipErrorInvalidValue;
    drv_side_t src = {c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
                      c->srcXInBytes, c->srcY, 0, c->srcPitch, 0};
    drv_side_t dst = {c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray,
                      c->dstXInBytes, c->dstY, 0, c->dstPitch, 0};
    return drv_copy(stream, &src, &dst, c->WidthInBytes, c->Height, 1, sync_api);
}

hipError_t hipMemcpyParam2D(const hip_Memcpy2D *pCopy) {
    HIP_INIT_API();
    HIP_RETURN(param_2d(pCopy, NULL, true));
}

hipError_t hipMemcpyParam2DAsync(const hip_Memcpy2D *pCopy, hipStream_t stream) {
    HIP_INIT_API();
    HIP_RETURN(param_2d(pCopy, stream, false));
}

/* hipamd: the same as hipMemcpyParam2D */
hipError_t hipDrvMemcpy2DUnaligned(const hip_Memcpy2D *pCopy) {
    HIP_INIT_API();
    HIP_RETURN(param_2d(pCopy, NULL, true));
}

static void drv_3d_sides(const HIP_MEMCPY3D *c, drv_side_t *src, drv_side_t *dst) {
    *src = (drv_side_t){c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray,
                        c->srcXInBytes, c->srcY, c->srcZ, c->srcPitch, c->srcHeight};
    *dst = (drv_side_t){c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray,
                        c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch, c->dstHeight};
}

hipError_t hip_drv_memcpy3d_parms(const HIP_MEMCPY3D *c, hipMemcpy3DParms *out) {
    if (!c) return hipErrorInvalidValue;
    drv_side_t src, dst;
    drv_3d_sides(c, &src, &dst);
    return drv_parms(&src, &dst, c->WidthInBytes, c->Height, c->Depth, out);
}

static hipError_t drv_3d(const HIP_MEMCPY3D *c, hipStream_t stream, bool sync_api) {
    hipMemcpy3DParms p;
    HIP_RETURN_ONFAIL(hip_drv_memcpy3d_parms(c, &p));
    return hip_memcpy_3d(stream, &p, sync_api);
}

hipError_t hipDrvMemcpy3D(const HIP_MEMCPY3D *pCopy) {
    HIP_INIT_API();
    HIP_RETURN(drv_3d(pCopy, NULL, true));
}

hipError_t hipDrvMemcpy3DAsync(const HIP_MEMCPY3D *pCopy, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(drv_3d(pCopy, stream, false));
}
