/* Pitched and 3-D allocations and fills (hipamd hip_memory.cpp at rocm-5.2.3:
 * ihipMallocPitch, hipMalloc3D, hipMemAllocPitch, ihipMemset3D).
 *
 * Rows are padded to the device's image pitch alignment (ROCclr's
 * imagePitchAlignment_, hipDeviceProp_t.texturePitchAlignment); the memory is
 * ordinary device memory (hipMalloc's), freed with hipFree.  5.2 requires the
 * device to support images (stub devices do: hipDeviceAttributeImageSupport). */
#include <string.h>

#include "hip_internal.h"

static size_t pitch_alignment(void) {
    hipDeviceProp_t p;
    hip_get_properties(&p, hip_current_dev()->id);
    return p.texturePitchAlignment ? p.texturePitchAlignment : 256;
}

/* ihipMallocPitch; a null pitch is hipErrorInvalidValue (5.2 writes through
 * it; ROCm/clr checks it) */
static hipError_t malloc_pitch(void **ptr, size_t *pitch, size_t width, size_t height,
                               size_t depth) {
    if (!ptr || !pitch) return hipErrorInvalidValue;
    if (width == 0 || height == 0 || depth == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    size_t align = pitch_alignment();
    if (width > SIZE_MAX - align) return hipErrorInvalidValue;   /* clr: pitch overflow */
    size_t row = (width + align - 1) / align * align;
    hip_dev_t *dev = hip_current_dev();
    if (height > dev->info->global_mem_size / row || depth > dev->info->global_mem_size / row / height)
        return hipErrorOutOfMemory;                                /* maxMemAllocSize_ */
    size_t size = row * height * depth;
    if (stub_mem_alloc(size, 4096, STUB_MEM_DEVICE, dev->id, 0, ptr) != 0) {
        *ptr = NULL;
        return hipErrorOutOfMemory;
    }
    *pitch = row;
    return hipSuccess;
}

hipError_t hipMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(malloc_pitch(ptr, pitch, width, height, 1));
}

/* elementSizeBytes is ignored, as in hipamd (it calls hipMallocPitch) */
hipError_t hipMemAllocPitch(hipDeviceptr_t *dptr, size_t *pitch, size_t widthInBytes,
                            size_t height, unsigned int elementSizeBytes) {
    (void)elementSizeBytes;
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(malloc_pitch((void **)dptr, pitch, widthInBytes, height, 1));
}

hipError_t hipMalloc3D(hipPitchedPtr *pitchedDevPtr, hipExtent extent) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!pitchedDevPtr) HIP_RETURN(hipErrorInvalidValue);
    size_t pitch = 0;
    hipError_t status = malloc_pitch(&pitchedDevPtr->ptr, &pitch, extent.width, extent.height,
                                     extent.depth);
    if (status == hipSuccess) {
        pitchedDevPtr->pitch = pitch;
        pitchedDevPtr->xsize = extent.width;
        pitchedDevPtr->ysize = extent.height;
    }
    HIP_RETURN(status);
}

/* ihipMemset3D: nothing for an empty extent; the destination must be tracked
 * memory holding the region (rows of extent.width bytes every pitch bytes,
 * slices every pitch * ysize bytes; BufferRect refuses a zero pitch). */
static hipError_t memset_3d(hipStream_t stream, hipPitchedPtr p, int value, hipExtent e,
                            bool sync_api) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_transfer(stream, sync_api, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) {
        /* hipamd captures a memset node (hipMemsetParams is 2-D: slices must
         * follow each other, ysize == height) */
        if (p.ysize && p.ysize != e.height) return hipErrorStreamCaptureUnsupported;
        hipMemsetParams m = {p.ptr, 1, e.height * e.depth, p.pitch, (unsigned)value, e.width};
        return hip_capture_node(s, hip_make_memset_node, &m);
    }
    if (e.width == 0 || e.height == 0 || e.depth == 0) return hipSuccess;
    stub_alloc_t a;
    if (!p.ptr || !stub_mem_find(p.ptr, &a)) return hipErrorInvalidValue;
    if (p.pitch == 0 || p.pitch < e.width) return hipErrorInvalidValue;
    size_t rows = p.ysize ? p.ysize : e.height;
    if (rows < e.height) return hipErrorInvalidValue;
    size_t slice = p.pitch * rows;
    size_t end = (e.depth - 1) * slice + (e.height - 1) * p.pitch + e.width;
    if (end > a.size - ((uintptr_t)p.ptr - a.base)) return hipErrorInvalidValue;
    for (size_t z = 0; z < e.depth; z++) {
        /* contiguous slices: one fill of height * depth rows */
        size_t height = rows == e.height ? e.height * e.depth : e.height;
        hip_op_t *op = hip_fill_op((char *)p.ptr + z * slice, (uint32_t)value, 1, e.width, height,
                                   p.pitch);
        if (!op) return hipErrorOutOfMemory;
        if (sync_api)
            hip_stream_submit_wait(s, op);
        else
            hip_stream_submit(s, op);
        if (rows == e.height) break;
    }
    return hipSuccess;
}

hipError_t hipMemset3D(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent) {
    HIP_INIT_API();
    HIP_RETURN(memset_3d(NULL, pitchedDevPtr, value, extent, true));
}

hipError_t hipMemset3D_spt(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent) {
    HIP_INIT_API();
    HIP_RETURN(memset_3d(hipStreamPerThread, pitchedDevPtr, value, extent, true));
}

hipError_t hipMemset3DAsync(hipPitchedPtr pitchedDevPtr, int value, hipExtent extent,
                            hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(memset_3d(stream, pitchedDevPtr, value, extent, false));
}
