/* Driver-style pitched fills hipMemsetD2D8/16/32(+Async), declared from the
 * 7.1 headers (hipamd hip_memory.cpp: hipMemsetD2D* -> hipMemset2D_common /
 * hipMemset2DAsync_common -> ihipMemset3D with the element size).
 *
 * hipamd passes `width` straight into the extent it validates and fills as
 * bytes (sizeBytes = width * height; pitch == width takes the 1-D fill), so
 * `width` is the row's size in BYTES, not in elements as CUDA's cuMemsetD2D*
 * documents; hip-tests hipMemsetD2D32.cc passes numW * sizeof(int) and reads
 * every element back.  The stub follows hipamd.  Where the stub had to
 * choose: a width that is no multiple of the element size (ROCclr's fill
 * kernel would write a partial pattern) and a height or pitch whose extent
 * overflows size_t are hipErrorInvalidValue. */
#include <stdint.h>

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipMemsetD2D8
static hipError_t d2d(hipStream_t stream, hipDeviceptr_t dst, size_t pitch, uint32_t value,
                      size_t elem, size_t width, size_t height, bool sync_api) {
    if (width != 0 && height != 0) {
        if (width % elem) return hipErrorInvalidValue;
        /* ihipMemset3DCommand: pitch == width is one fill; otherwise
         * BufferRect::create refuses a pitch of 0 or below the row */
        if (pitch < width) return hipErrorInvalidValue;
        if (height > 1 && (height - 1) > (SIZE_MAX - width) / pitch) return hipErrorInvalidValue;
    }
    return hip_memset_fill(stream, dst, value, elem, width / elem, height, pitch, sync_api);
}

hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t dstPitch, unsigned char value, size_t width,
                         size_t height) {
    HIP_INIT_API();
    HIP_RETURN(d2d(NULL, dst, dstPitch, value, 1, width, height, true));
}

hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t dstPitch, unsigned char value,
                              size_t width, size_t height, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(d2d(stream, dst, dstPitch, value, 1, width, height, false));
}

hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t dstPitch, unsigned short value, size_t width,
                          size_t height) {
    HIP_INIT_API();
    HIP_RETURN(d2d(NULL, dst, dstPitch, value, 2, width, height, true));
}

hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t dstPitch, unsigned short value,
                               size_t width, size_t height, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(d2d(stream, dst, dstPitch, value, 2, width, height, false));
}

hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t dstPitch, unsigned int value, size_t width,
                          size_t height) {
    HIP_INIT_API();
    HIP_RETURN(d2d(NULL, dst, dstPitch, value, 4, width, height, true));
}

hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t dstPitch, unsigned int value,
                               size_t width, size_t height, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(d2d(stream, dst, dstPitch, value, 4, width, height, false));
}
#endif
