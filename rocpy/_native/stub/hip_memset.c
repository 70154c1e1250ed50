/* Fills (hipamd hip_memory.cpp ihipMemset, ihipMemset3D): the destination
 * must be tracked memory (device, pinned, managed or registered) and the
 * region must fit the allocation; a size of zero does nothing. */
#include <string.h>

#include "hip_internal.h"

typedef struct fill_args {
    char *dst;
    uint32_t value;
    size_t elem, width, height, pitch;
} fill_args_t;

static void run_fill(hip_op_t *op) {
    fill_args_t *a = HIP_OP_DATA(op, fill_args_t);
    for (size_t y = 0; y < a->height; y++) {
        char *row = a->dst + y * a->pitch;
        if (a->elem == 1) {
            memset(row, (int)(a->value & 0xff), a->width);
            continue;
        }
        for (size_t x = 0; x < a->width; x++) {
            if (a->elem == 2) {
                uint16_t v = (uint16_t)a->value;
                memcpy(row + x * 2, &v, 2);
            } else {
                memcpy(row + x * 4, &a->value, 4);
            }
        }
    }
}

hip_op_t *hip_fill_op(void *dst, uint32_t value, size_t elem, size_t width, size_t height,
                      size_t pitch) {
    hip_op_t *op = hip_op_new(run_fill, sizeof(fill_args_t));
    if (op)
        *HIP_OP_DATA(op, fill_args_t) =
            (fill_args_t){dst, value, elem, width, height, height > 1 ? pitch : width * elem};
    return op;
}

/* width in elements; pitch in bytes (used when height > 1) */
hipError_t hip_memset_validate(void *dst, size_t elem, size_t width, size_t height, size_t pitch) {
    size_t row = width * elem;
    if (row == 0 || height == 0) return hipSuccess;
    if (!dst) return hipErrorInvalidValue;
    if (height > 1 && pitch < row) return hipErrorInvalidValue;
    stub_alloc_t a;
    if (!stub_mem_find(dst, &a)) return hipErrorInvalidValue;
    size_t extent = (height - 1) * (height > 1 ? pitch : row) + row;
    if (extent > a.size - ((uintptr_t)dst - a.base)) return hipErrorInvalidValue;
    return hipSuccess;
}

static hipError_t fill(hipStream_t stream, void *dst, uint32_t value, size_t elem, size_t width,
                       size_t height, size_t pitch, bool sync_api) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_transfer(stream, sync_api, &s, &capturing);
    if (status != hipSuccess) return status;
    if (capturing) {
        hipMemsetParams p = {dst, (unsigned)elem, height, pitch, value, width};
        return hip_capture_node(s, hip_make_memset_node, &p);
    }
    if (width * elem == 0 || height == 0) return hipSuccess;
    status = hip_memset_validate(dst, elem, width, height, pitch);
    if (status != hipSuccess) return status;
    hip_op_t *op = hip_fill_op(dst, value, elem, width, height, pitch);
    if (!op) return hipErrorOutOfMemory;
    if (sync_api)
        hip_stream_submit_wait(s, op);
    else
        hip_stream_submit(s, op);
    return hipSuccess;
}

hipError_t hip_memset_fill(hipStream_t stream, void *dst, uint32_t value, size_t elem,
                           size_t width, size_t height, size_t pitch, bool sync_api) {
    return fill(stream, dst, value, elem, width, height, pitch, sync_api);
}

hipError_t hipMemset(void *dst, int value, size_t sizeBytes) {
    HIP_INIT_API();
    HIP_RETURN(fill(NULL, dst, (uint32_t)value, 1, sizeBytes, 1, 0, true));
}

hipError_t hipMemset_spt(void *dst, int value, size_t sizeBytes) {
    HIP_INIT_API();
    HIP_RETURN(fill(hipStreamPerThread, dst, (uint32_t)value, 1, sizeBytes, 1, 0, true));
}

hipError_t hipMemsetAsync(void *dst, int value, size_t sizeBytes, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(fill(stream, dst, (uint32_t)value, 1, sizeBytes, 1, 0, false));
}

hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count) {
    HIP_INIT_API();
    HIP_RETURN(fill(NULL, dst, value, 1, count, 1, 0, true));
}

hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                            hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(fill(stream, dst, value, 1, count, 1, 0, false));
}

hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count) {
    HIP_INIT_API();
    HIP_RETURN(fill(NULL, dst, value, 2, count, 1, 0, true));
}

hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                             hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(fill(stream, dst, value, 2, count, 1, 0, false));
}

hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count) {
    HIP_INIT_API();
    HIP_RETURN(fill(NULL, dst, (uint32_t)value, 4, count, 1, 0, true));
}

hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(fill(stream, dst, (uint32_t)value, 4, count, 1, 0, false));
}

hipError_t hipMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height) {
    HIP_INIT_API();
    HIP_RETURN(fill(NULL, dst, (uint32_t)value, 1, width, height, pitch, true));
}

hipError_t hipMemset2D_spt(void *dst, size_t pitch, int value, size_t width, size_t height) {
    HIP_INIT_API();
    HIP_RETURN(fill(hipStreamPerThread, dst, (uint32_t)value, 1, width, height, pitch, true));
}

hipError_t hipMemset2DAsync(void *dst, size_t pitch, int value, size_t width, size_t height,
                            hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(fill(stream, dst, (uint32_t)value, 1, width, height, pitch, false));
}
