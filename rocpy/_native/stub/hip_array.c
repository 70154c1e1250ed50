/* Arrays (hipamd hip_memory.cpp at rocm-5.2.3: ihipArrayCreate,
 * ihipArrayDestroy, ihipMemcpyParam2D / HtoA / AtoH for arrays).
 *
 * hipamd makes an array a ROCclr image; the stub has no image hardware and
 * stores an array as tightly packed device memory (rows of width elements),
 * which is what every copy to or from it sees.  Textures that would sample
 * one are refused (hip_unsupported.c).  The handle is the stub's own struct,
 * whose leading fields have the layout of HIP 5.2's public `hipArray` (data,
 * desc, type, width, height, depth, Format, NumChannels, ...), so code that
 * reads them as hipamd fills them sees the same values; handles are checked
 * against a registry (hipamd's is_valid on the memory object). */
#include <string.h>

#include "hip_internal.h"

typedef struct stub_array {
    void *data;                       /* the packed storage */
    struct hipChannelFormatDesc desc;
    unsigned int type;
    unsigned int width, height, depth;
    hipArray_Format Format;
    unsigned int NumChannels;
    bool isDrv;
    unsigned int textureType;
    /* the stub's own */
    size_t elem;                      /* bytes per element */
    size_t row;                       /* bytes per row */
} stub_array_t;

static hip_registry_t arrays = HIP_REGISTRY_INIT;

static stub_array_t *array_of(const void *handle) {
    return handle && hip_registry_contains(&arrays, handle) ? (stub_array_t *)handle : NULL;
}

bool hip_array_storage(const void *array, char **data, size_t *row, size_t *rows, size_t *elem) {
    stub_array_t *a = array_of(array);
    if (!a) return false;
    *data = a->data;
    *row = a->row;
    *rows = a->height ? a->height : 1;
    *elem = a->elem;
    return true;
}

static size_t format_bytes(hipArray_Format f) {
    switch (f) {
    case HIP_AD_FORMAT_UNSIGNED_INT8: case HIP_AD_FORMAT_SIGNED_INT8: return 1;
    case HIP_AD_FORMAT_UNSIGNED_INT16: case HIP_AD_FORMAT_SIGNED_INT16: case HIP_AD_FORMAT_HALF:
        return 2;
    case HIP_AD_FORMAT_UNSIGNED_INT32: case HIP_AD_FORMAT_SIGNED_INT32: case HIP_AD_FORMAT_FLOAT:
        return 4;
    default: return 0;
    }
}

static hipChannelFormatKind format_kind(hipArray_Format f) {
    switch (f) {
    case HIP_AD_FORMAT_SIGNED_INT8: case HIP_AD_FORMAT_SIGNED_INT16:
    case HIP_AD_FORMAT_SIGNED_INT32: return hipChannelFormatKindSigned;
    case HIP_AD_FORMAT_HALF: case HIP_AD_FORMAT_FLOAT: return hipChannelFormatKindFloat;
    default: return hipChannelFormatKindUnsigned;
    }
}

/* hip::getArrayFormat: 0 (no format) where hipamd reaches ShouldNotReachHere */
static hipArray_Format desc_format(const hipChannelFormatDesc *d) {
    switch (d->f) {
    case hipChannelFormatKindUnsigned:
        return d->x == 8 ? HIP_AD_FORMAT_UNSIGNED_INT8 : d->x == 16 ? HIP_AD_FORMAT_UNSIGNED_INT16
             : d->x == 32 ? HIP_AD_FORMAT_UNSIGNED_INT32 : (hipArray_Format)0;
    case hipChannelFormatKindSigned:
        return d->x == 8 ? HIP_AD_FORMAT_SIGNED_INT8 : d->x == 16 ? HIP_AD_FORMAT_SIGNED_INT16
             : d->x == 32 ? HIP_AD_FORMAT_SIGNED_INT32 : (hipArray_Format)0;
    case hipChannelFormatKindFloat:
        return d->x == 16 ? HIP_AD_FORMAT_HALF : d->x == 32 ? HIP_AD_FORMAT_FLOAT
             : (hipArray_Format)0;
    default: return (hipArray_Format)0;
    }
}

static unsigned desc_channels(const hipChannelFormatDesc *d) {
    return (d->x != 0) + (d->y != 0) + (d->z != 0) + (d->w != 0);
}

/* ihipArrayCreate; ihipImageCreate's failures (format, dimensions beyond the
 * device's image limits: amd::Image::validateDimensions) are
 * hipErrorInvalidValue. */
static hipError_t array_create(hipArray_t *out, const HIP_ARRAY3D_DESCRIPTOR *d) {
    if (!out || !d) return hipErrorInvalidValue;
    if (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4)
        return hipErrorInvalidValue;
    if ((d->Flags & hipArrayCubemap) && stub_rule(STUB_RULE_ARRAY_CUBEMAP_INVALID_VALUE))
        return hipErrorInvalidValue;
    unsigned refused = hipArrayCubemap;
    if (!stub_rule(STUB_RULE_ARRAY_SURFACE_GATHER_ACCEPTED))
        refused |= hipArraySurfaceLoadStore | hipArrayTextureGather;
    if (d->Flags & refused) return hipErrorNotSupported;
    size_t fb = format_bytes(d->Format);
    if (!fb) return hipErrorInvalidValue;
    hipDeviceProp_t p;
    hip_get_properties(&p, hip_current_dev()->id);
    bool layered = d->Flags & hipArrayLayered;
    if (d->Width == 0) return hipErrorInvalidValue;
    if (d->Depth && !layered) {                        /* 3-D image */
        if (d->Height == 0 || d->Width > (size_t)p.maxTexture3D[0] ||
            d->Height > (size_t)p.maxTexture3D[1] || d->Depth > (size_t)p.maxTexture3D[2])
            return hipErrorInvalidValue;
    } else if (d->Height) {                            /* 2-D */
        if (d->Width > (size_t)p.maxTexture2D[0] || d->Height > (size_t)p.maxTexture2D[1])
            return hipErrorInvalidValue;
    } else if (d->Width > (size_t)p.maxTexture1D) {    /* 1-D */
        return hipErrorInvalidValue;
    }
    stub_array_t *a = calloc(1, sizeof *a);
    if (!a) return hipErrorOutOfMemory;
    a->elem = fb * d->NumChannels;
    a->row = a->elem * d->Width;
    size_t rows = (d->Height ? d->Height : 1) * (d->Depth ? d->Depth : 1);
    if (stub_mem_alloc(a->row * rows, 4096, STUB_MEM_DEVICE, hip_current_dev()->id, 0,
                       &a->data) != 0) {
        free(a);
        return hipErrorOutOfMemory;
    }
    /* tagged: neither hipFree nor hipDeviceReset take an array's storage */
    stub_mem_set_tag(a->data, a);
    int bits = (int)(fb * 8);
    a->desc = (struct hipChannelFormatDesc){bits, d->NumChannels > 1 ? bits : 0,
                                            d->NumChannels > 2 ? bits : 0,
                                            d->NumChannels > 2 ? bits : 0, format_kind(d->Format)};
    a->width = (unsigned)d->Width;
    a->height = (unsigned)d->Height;
    a->depth = (unsigned)d->Depth;
    a->Format = d->Format;
    a->NumChannels = d->NumChannels;
    a->type = d->Flags;
    if (!hip_registry_add(&arrays, a)) {
        stub_mem_release(a->data, STUB_MEM_DEVICE, NULL);
        free(a);
        return hipErrorOutOfMemory;
    }
    *out = (hipArray_t)(void *)a;
    return hipSuccess;
}

hipError_t hipArrayCreate(hipArray_t *pHandle, const HIP_ARRAY_DESCRIPTOR *pAllocateArray) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!pAllocateArray) HIP_RETURN(hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d = {pAllocateArray->Width, pAllocateArray->Height, 0,
                                pAllocateArray->Format, pAllocateArray->NumChannels,
                                hipArrayDefault};
    HIP_RETURN(array_create(pHandle, &d));
}

hipError_t hipArray3DCreate(hipArray_t *array, const HIP_ARRAY3D_DESCRIPTOR *pAllocateArray) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(array_create(array, pAllocateArray));
}

/* a null desc is hipErrorInvalidValue (hipamd dereferences it) */
hipError_t hipMallocArray(hipArray_t *array, const hipChannelFormatDesc *desc, size_t width,
                          size_t height, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!desc) HIP_RETURN(hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d = {width, height, 0, desc_format(desc), desc_channels(desc), flags};
    HIP_RETURN(array_create(array, &d));
}

hipError_t hipMalloc3DArray(hipArray_t *array, const struct hipChannelFormatDesc *desc,
                            struct hipExtent extent, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!desc) HIP_RETURN(hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d = {extent.width, extent.height, extent.depth, desc_format(desc),
                                desc_channels(desc), flags};
    HIP_RETURN(array_create(array, &d));
}

/* ihipArrayDestroy: null or not an array is hipErrorInvalidValue; the null
 * streams of every device finish first */
static hipError_t array_destroy(hipArray_t array) {
    if (!array || !hip_registry_remove(&arrays, array)) return hipErrorInvalidValue;
    stub_array_t *a = (stub_array_t *)(void *)array;
    hip_device_sync(-1);
    stub_mem_release(a->data, STUB_MEM_DEVICE, NULL);
    free(a);
    return hipSuccess;
}

hipError_t hipFreeArray(hipArray_t array) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(array_destroy(array));
}

hipError_t hipArrayDestroy(hipArray_t array) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(array_destroy(array));
}

hipError_t hipGetChannelDesc(hipChannelFormatDesc *desc, hipArray_const_t array) {
    HIP_INIT_API();
    stub_array_t *a = array_of(array);
    if (!desc || !a) HIP_RETURN(hipErrorInvalidValue);
    *desc = a->desc;
    HIP_RETURN(hipSuccess);
}

struct hipChannelFormatDesc hipCreateChannelDesc(int x, int y, int z, int w,
                                                 enum hipChannelFormatKind f) {
    return (struct hipChannelFormatDesc){x, y, z, w, f};
}

/* The array side of a 2-D copy: x in bytes, y in rows; the region (width
 * bytes by height rows) must lie inside the array (Image::validateRegion,
 * after hipamd divides the byte offsets by the element size). */
static hipError_t array_region(stub_array_t *a, size_t x, size_t y, size_t width, size_t height,
                               char **at) {
    size_t rows = a->height ? a->height : 1;
    if (x % a->elem || width % a->elem) return hipErrorInvalidValue;
    if (x > a->row || width > a->row - x || y > rows || height > rows - y)
        return hipErrorInvalidValue;
    *at = (char *)a->data + y * a->row + x;
    return hipSuccess;
}

static hipError_t to_array(hipStream_t stream, hipArray_t dst, size_t x, size_t y, const void *src,
                           size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                           bool sync_api) {
    stub_array_t *a = array_of(dst);
    if (!dst) return hipErrorInvalidResourceHandle;   /* ihipMemcpy2DToArray */
    if (!a || !src) return hipErrorInvalidValue;
    if (width == 0 || height == 0) return hipSuccess;
    char *at;
    HIP_RETURN_ONFAIL(array_region(a, x, y, width, height, &at));
    return hip_memcpy_2d(stream, at, a->row, src, spitch ? spitch : width, width, height, kind,
                         sync_api);
}

static hipError_t from_array(hipStream_t stream, void *dst, size_t dpitch, hipArray_const_t src,
                             size_t x, size_t y, size_t width, size_t height, hipMemcpyKind kind,
                             bool sync_api) {
    stub_array_t *a = array_of(src);
    if (!src) return hipErrorInvalidResourceHandle;   /* ihipMemcpy2DFromArray */
    if (!a || !dst) return hipErrorInvalidValue;
    if (width == 0 || height == 0) return hipSuccess;
    char *at;
    HIP_RETURN_ONFAIL(array_region(a, x, y, width, height, &at));
    return hip_memcpy_2d(stream, dst, dpitch ? dpitch : width, at, a->row, width, height, kind,
                         sync_api);
}

/* hipMemcpy2DToArray_common: a zero source pitch is hipErrorInvalidPitchValue */
hipError_t hipMemcpy2DToArray(hipArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                              size_t spitch, size_t width, size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (spitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(to_array(NULL, dst, wOffset, hOffset, src, spitch, width, height, kind, true));
}

hipError_t hipMemcpy2DToArray_spt(hipArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                  size_t spitch, size_t width, size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (spitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(to_array(hipStreamPerThread, dst, wOffset, hOffset, src, spitch, width, height,
                        kind, true));
}

hipError_t hipMemcpy2DToArrayAsync(hipArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                                   size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                                   hipStream_t stream) {
    HIP_INIT_API();
    if (spitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(to_array(stream, dst, wOffset, hOffset, src, spitch, width, height, kind, false));
}

hipError_t hipMemcpy2DFromArray(void *dst, size_t dpitch, hipArray_const_t src, size_t wOffset,
                                size_t hOffset, size_t width, size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (dpitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(from_array(NULL, dst, dpitch, src, wOffset, hOffset, width, height, kind, true));
}

hipError_t hipMemcpy2DFromArray_spt(void *dst, size_t dpitch, hipArray_const_t src,
                                    size_t wOffset, size_t hOffset, size_t width, size_t height,
                                    hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (dpitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(from_array(hipStreamPerThread, dst, dpitch, src, wOffset, hOffset, width, height,
                          kind, true));
}

hipError_t hipMemcpy2DFromArrayAsync(void *dst, size_t dpitch, hipArray_const_t src,
                                     size_t wOffset, size_t hOffset, size_t width, size_t height,
                                     hipMemcpyKind kind, hipStream_t stream) {
    HIP_INIT_API();
    if (dpitch == 0) HIP_RETURN(hipErrorInvalidPitchValue);
    HIP_RETURN(from_array(stream, dst, dpitch, src, wOffset, hOffset, width, height, kind, false));
}

/* deprecated: count bytes as rows of count / height bytes (hipamd's split) */
hipError_t hipMemcpyToArray(hipArray_t dst, size_t wOffset, size_t hOffset, const void *src,
                            size_t count, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    stub_array_t *a = array_of(dst);
    if (!dst || !a) HIP_RETURN(hipErrorInvalidValue);
    size_t rows = a->height ? a->height : 1;
    size_t width = count / rows, height = count / a->width / a->elem;
    HIP_RETURN(to_array(NULL, dst, wOffset, hOffset, src, width, width, height, kind, true));
}

static hipError_t from_array_count(hipStream_t stream, void *dst, hipArray_const_t srcArray,
                                   size_t wOffset, size_t hOffset, size_t count,
                                   hipMemcpyKind kind) {
    stub_array_t *a = array_of(srcArray);
    if (!srcArray || !a) return hipErrorInvalidValue;
    size_t rows = a->height ? a->height : 1;
    size_t width = count / rows, height = count / a->width / a->elem;
    return from_array(stream, dst, width, srcArray, wOffset, hOffset, width, height, kind, true);
}

hipError_t hipMemcpyFromArray(void *dst, hipArray_const_t srcArray, size_t wOffset,
                              size_t hOffset, size_t count, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    HIP_RETURN(from_array_count(NULL, dst, srcArray, wOffset, hOffset, count, kind));
}

#ifdef ROCPY_HAVE_hipMemcpyFromArray_spt
/* hipamd hip_memory.cpp hipMemcpyFromArray_spt: the common form on the
 * thread's default stream (no capture check: it has none) */
hipError_t hipMemcpyFromArray_spt(void *dst, hipArray_const_t srcArray, size_t wOffset,
                                  size_t hOffset, size_t count, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(from_array_count(hipStreamPerThread, dst, srcArray, wOffset, hOffset, count, kind));
}
#endif

bool hip_array_describe(const void *array, HIP_ARRAY3D_DESCRIPTOR *d, hipChannelFormatDesc *cd) {
    stub_array_t *a = array_of(array);
    if (!a) return false;
    *cd = a->desc;
    *d = (HIP_ARRAY3D_DESCRIPTOR){a->width, a->height, a->depth, a->Format, a->NumChannels,
                                  a->type};
    return true;
}

/* ihipMemcpyHtoAValidate: host and array must be given; offset and count in bytes */
hipError_t hipMemcpyHtoA(hipArray_t dstArray, size_t dstOffset, const void *srcHost, size_t count) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (!srcHost || !array_of(dstArray)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(to_array(NULL, dstArray, dstOffset, 0, srcHost, count, count, 1, hipMemcpyHostToDevice,
                        true));
}

hipError_t hipMemcpyAtoH(void *dst, hipArray_t srcArray, size_t srcOffset, size_t count) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (!dst || !array_of(srcArray)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(from_array(NULL, dst, count, srcArray, srcOffset, 0, count, 1, hipMemcpyDeviceToHost,
                          true));
}
