/* Array descriptors and the array copies beyond host <-> array (hipamd
 * hip_memory.cpp at rocm-6.2.0: hipArrayGetInfo, hipArrayGetDescriptor,
 * hipArray3DGetDescriptor, hipMemcpyAtoA/AtoD/DtoA/AtoHAsync/HtoAAsync,
 * hipMemcpy2DArrayToArray).  Each is compiled where the headers declare it
 * (rocpy_features.h).
 *
 * The 1-D forms (AtoA, AtoD, DtoA, AtoH/HtoA) copy within the array's first
 * row: hipamd divides the byte offset and count by the element size
 * (truncating) and validates {count / elem, 1, 1} at {offset / elem, 0, 0}
 * with Image::validateRegion, which refuses an empty region.  Arrays are
 * stored packed (hip_array.c), so row 0 starts at the storage. */
#include "hip_internal.h"

#if defined(ROCPY_HAVE_hipArrayGetInfo) || defined(ROCPY_HAVE_hipArrayGetDescriptor) || \
    defined(ROCPY_HAVE_hipArray3DGetDescriptor)
#define HAVE_DESCRIPTORS 1
#endif
#if defined(ROCPY_HAVE_hipMemcpyAtoA) || defined(ROCPY_HAVE_hipMemcpyAtoD) || \
    defined(ROCPY_HAVE_hipMemcpyDtoA) || defined(ROCPY_HAVE_hipMemcpyAtoHAsync) || \
    defined(ROCPY_HAVE_hipMemcpyHtoAAsync)
#define HAVE_1D_COPIES 1
#endif

#ifdef HAVE_DESCRIPTORS
/* ihipArray3DGetDescriptor: a handle not in hipArraySet is hipErrorInvalidHandle */
static hipError_t describe(hipArray_const_t array, HIP_ARRAY3D_DESCRIPTOR *d,
                           hipChannelFormatDesc *cd) {
    if (!array) return hipErrorInvalidHandle;
    return hip_array_describe(array, d, cd) ? hipSuccess : hipErrorInvalidHandle;
}
#endif

#ifdef ROCPY_HAVE_hipArrayGetInfo
/* every output may be NULL; all three NULL is hipSuccess without looking at
 * the array (but a NULL array is refused first) */
hipError_t hipArrayGetInfo(hipChannelFormatDesc *desc, hipExtent *extent, unsigned int *flags,
                           hipArray_t array) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!array) HIP_RETURN(hipErrorInvalidHandle);
    if (!desc && !extent && !flags) HIP_RETURN(hipSuccess);
    HIP_ARRAY3D_DESCRIPTOR d;
    hipChannelFormatDesc cd;
    HIP_RETURN_ONFAIL(describe(array, &d, &cd));
    if (desc) *desc = cd;
    if (extent) *extent = (hipExtent){d.Width, d.Height, d.Depth};
    if (flags) *flags = d.Flags;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipArrayGetDescriptor
hipError_t hipArrayGetDescriptor(HIP_ARRAY_DESCRIPTOR *pArrayDescriptor, hipArray_t array) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!array) HIP_RETURN(hipErrorInvalidHandle);
    if (!pArrayDescriptor) HIP_RETURN(hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d;
    hipChannelFormatDesc cd;
    HIP_RETURN_ONFAIL(describe(array, &d, &cd));
    pArrayDescriptor->Width = d.Width;
    pArrayDescriptor->Height = d.Height;
    pArrayDescriptor->Format = d.Format;
    pArrayDescriptor->NumChannels = d.NumChannels;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipArray3DGetDescriptor
hipError_t hipArray3DGetDescriptor(HIP_ARRAY3D_DESCRIPTOR *pArrayDescriptor, hipArray_t array) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!array) HIP_RETURN(hipErrorInvalidHandle);
    if (!pArrayDescriptor) HIP_RETURN(hipErrorInvalidValue);
    hipChannelFormatDesc cd;
    HIP_RETURN(describe(array, pArrayDescriptor, &cd));
}
#endif

#ifdef HAVE_1D_COPIES
/* The address of bytes [offset, offset + count) of an array's first row,
 * after hipamd's truncation to whole elements: *count is the bytes copied. */
static hipError_t row_span(hipArray_const_t array, size_t offset, size_t *count, char **at) {
    char *data;
    size_t row, rows, elem;
    if (!array || !hip_array_storage(array, &data, &row, &rows, &elem))
        return hipErrorInvalidValue;                        /* is_valid(memObj) */
    size_t width = row / elem, x = offset / elem, n = *count / elem;
    if (n == 0 || x >= width || n > width - x) return hipErrorInvalidValue;
    *at = data + x * elem;
    *count = n * elem;
    return hipSuccess;
}

/* A device pointer's allocation must hold count bytes from it (hipamd
 * getMemoryObject: an unknown pointer is hipErrorInvalidValue; its
 * Buffer::validateRegion checks count against the allocation's size only,
 * the stub from the pointer: it would write past the allocation otherwise). */
static hipError_t device_span(const void *ptr, size_t count) {
    stub_alloc_t a;
    if (!ptr || !stub_mem_find(ptr, &a) || count > a.size - ((uintptr_t)ptr - a.base))
        return hipErrorInvalidValue;
    return hipSuccess;
}

static hipError_t copy_1d(hipStream_t stream, void *dst, const void *src, size_t count,
                          hipMemcpyKind kind, bool sync_api) {
    return hip_memcpy_2d(stream, dst, count, src, count, count, 1, kind, sync_api);
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyAtoA
hipError_t hipMemcpyAtoA(hipArray_t dstArray, size_t dstOffset, hipArray_t srcArray,
                         size_t srcOffset, size_t ByteCount) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    char *src, *dst;
    size_t scount = ByteCount, dcount = ByteCount;
    /* ihipMemcpyAtoAValidate: both arrays first, then both regions */
    if (!dstArray || !srcArray) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(row_span(srcArray, srcOffset, &scount, &src));
    HIP_RETURN_ONFAIL(row_span(dstArray, dstOffset, &dcount, &dst));
    HIP_RETURN(copy_1d(NULL, dst, src, scount < dcount ? scount : dcount,
                       hipMemcpyDeviceToDevice, true));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyAtoD
/* hipamd has no capture check here: the stub refuses it as every other
 * synchronous copy during a capture */
hipError_t hipMemcpyAtoD(hipDeviceptr_t dstDevice, hipArray_t srcArray, size_t srcOffset,
                         size_t ByteCount) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (!srcArray || !stub_mem_find(dstDevice, NULL)) HIP_RETURN(hipErrorInvalidValue);
    char *src;
    size_t count = ByteCount;
    HIP_RETURN_ONFAIL(row_span(srcArray, srcOffset, &count, &src));
    HIP_RETURN_ONFAIL(device_span(dstDevice, count));
    HIP_RETURN(copy_1d(NULL, dstDevice, src, count, hipMemcpyDeviceToDevice, true));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyDtoA
hipError_t hipMemcpyDtoA(hipArray_t dstArray, size_t dstOffset, hipDeviceptr_t srcDevice,
                         size_t ByteCount) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if (!dstArray || !stub_mem_find(srcDevice, NULL)) HIP_RETURN(hipErrorInvalidValue);
    char *dst;
    size_t count = ByteCount;
    HIP_RETURN_ONFAIL(row_span(dstArray, dstOffset, &count, &dst));
    HIP_RETURN_ONFAIL(device_span(srcDevice, count));
    HIP_RETURN(copy_1d(NULL, dst, srcDevice, count, hipMemcpyDeviceToDevice, true));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyAtoHAsync
/* ihipMemcpyAtoH on the stream, asynchronous; captured like any async copy */
hipError_t hipMemcpyAtoHAsync(void *dstHost, hipArray_t srcArray, size_t srcOffset,
                              size_t ByteCount, hipStream_t stream) {
    HIP_INIT_API();
    if (!hip_stream_valid(stream)) HIP_RETURN(hipErrorInvalidValue);   /* hip::getStream */
    if (!dstHost || !srcArray) HIP_RETURN(hipErrorInvalidValue);
    char *src;
    size_t count = ByteCount;
    HIP_RETURN_ONFAIL(row_span(srcArray, srcOffset, &count, &src));
    HIP_RETURN(copy_1d(stream, dstHost, src, count, hipMemcpyDeviceToHost, false));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpyHtoAAsync
hipError_t hipMemcpyHtoAAsync(hipArray_t dstArray, size_t dstOffset, const void *srcHost,
                              size_t ByteCount, hipStream_t stream) {
    HIP_INIT_API();
    if (!hip_stream_valid(stream)) HIP_RETURN(hipErrorInvalidValue);
    if (!srcHost || !dstArray) HIP_RETURN(hipErrorInvalidValue);
    char *dst;
    size_t count = ByteCount;
    HIP_RETURN_ONFAIL(row_span(dstArray, dstOffset, &count, &dst));
    HIP_RETURN(copy_1d(stream, dst, srcHost, count, hipMemcpyHostToDevice, false));
}
#endif

#ifdef ROCPY_HAVE_hipMemcpy2DArrayToArray
/* hipMemcpy2DValidateArray: a NULL array is hipErrorInvalidHandle, a region
 * (bytes by rows) past the array hipErrorInvalidValue; then ihipMemcpyParam2D
 * (an empty region is hipSuccess) and Image::validateRegion in elements */
static hipError_t region_2d(hipArray_const_t array, size_t x, size_t y, size_t width,
                            size_t height, char **at, size_t *pitch, size_t *elem_out) {
    if (!array) return hipErrorInvalidHandle;
    char *data;
    size_t row, rows, elem;
    if (!hip_array_storage(array, &data, &row, &rows, &elem)) return hipErrorInvalidValue;
    if (width + x > row || height + y > rows) return hipErrorInvalidValue;
    *at = data + y * row + x / elem * elem;
    *pitch = row;
    *elem_out = elem;
    return hipSuccess;
}

hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t wOffsetDst, size_t hOffsetDst,
                                   hipArray_const_t src, size_t wOffsetSrc, size_t hOffsetSrc,
                                   size_t width, size_t height, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_sync());
    if ((unsigned)kind > hipMemcpyDefault
#ifdef ROCPY_HAVE_hipMemcpyDeviceToDeviceNoCU
        && kind != hipMemcpyDeviceToDeviceNoCU
#endif
    )
        HIP_RETURN(hipErrorInvalidMemcpyDirection);
    char *s, *d;
    size_t spitch, dpitch, elem, delem;
    HIP_RETURN_ONFAIL(region_2d(src, wOffsetSrc, hOffsetSrc, width, height, &s, &spitch, &elem));
    HIP_RETURN_ONFAIL(region_2d(dst, wOffsetDst, hOffsetDst, width, height, &d, &dpitch, &delem));
    if (width == 0 || height == 0) HIP_RETURN(hipSuccess);
    if (width / elem == 0) HIP_RETURN(hipErrorInvalidValue);   /* an empty image region */
    HIP_RETURN(hip_memcpy_2d(NULL, d, dpitch, s, spitch, width / elem * elem, height,
                             hipMemcpyDeviceToDevice, true));
}
#endif
