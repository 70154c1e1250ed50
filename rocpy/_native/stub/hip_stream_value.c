/* Stream memory operations (hipamd hip_stream_ops.cpp at rocm-5.2.3:
 * ihipStreamOperation; ROCclr StreamOperationCommand).  The memory must be
 * tracked (getMemoryObject); a write stores the value when the stream
 * reaches it; a wait holds the stream until (*ptr & mask) satisfies the
 * condition, checked every 20 us as the command processor polls the word
 * (a wait that is never satisfied hangs the stream, as on the GPU).
 * hipDeviceAttributeCanUseStreamWaitValue stays 0 on the stub as ROCclr
 * answers without GPU_STREAMOPS_CP_WAIT, and the operations work anyway, as
 * in hipamd.  An unknown wait condition is hipErrorInvalidValue (hipamd:
 * ShouldNotReachHere). */
#include <string.h>
#include <time.h>

#include "hip_internal.h"

typedef struct value_op {
    void *ptr;
    uint64_t value, mask;
    unsigned flags;
    size_t size;
} value_op_t;

static uint64_t load(const value_op_t *v) {
    if (v->size == 4) return atomic_load((_Atomic uint32_t *)v->ptr);
    return atomic_load((_Atomic uint64_t *)v->ptr);
}

/* the conditions of ROCclr's barrier-value packets (rocvirtual.cpp
 * submitStreamOperation): the mask applies to the word, not to value */
static bool satisfied(const value_op_t *v) {
    uint64_t width = v->size == 4 ? 0xffffffffull : ~0ull;
    uint64_t x = load(v);
    switch (v->flags) {
    case hipStreamWaitValueGte: return (x & v->mask) >= v->value;
    case hipStreamWaitValueEq: return (x & v->mask) == v->value;
    case hipStreamWaitValueAnd: return (x & v->value & v->mask) != 0;
    default: return (~(x | v->value) & v->mask & width) != 0;   /* Nor */
    }
}

static void run_wait(hip_op_t *op) {
    value_op_t *v = HIP_OP_DATA(op, value_op_t);
    while (!satisfied(v)) nanosleep(&(struct timespec){0, 20000}, NULL);
}

static void run_write(hip_op_t *op) {
    value_op_t *v = HIP_OP_DATA(op, value_op_t);
    if (v->size == 4)
        atomic_store((_Atomic uint32_t *)v->ptr, (uint32_t)v->value);
    else
        atomic_store((_Atomic uint64_t *)v->ptr, v->value);
}

hipError_t hip_value_op(bool wait, void *ptr, uint64_t value, uint64_t mask, unsigned flags,
                        size_t size, hip_op_t **out) {
    stub_alloc_t a;
    if (!ptr || !stub_mem_find(ptr, &a) || (uintptr_t)ptr - a.base + size > a.size)
        return hipErrorInvalidValue;
    if (wait && flags != hipStreamWaitValueGte && flags != hipStreamWaitValueEq &&
        flags != hipStreamWaitValueAnd && flags != hipStreamWaitValueNor)
        return hipErrorInvalidValue;
    hip_op_t *op = hip_op_new(wait ? run_wait : run_write, sizeof(value_op_t));
    if (!op) return hipErrorOutOfMemory;
    *HIP_OP_DATA(op, value_op_t) = (value_op_t){ptr, value, mask, flags, size};
    *out = op;
    return hipSuccess;
}

static hipError_t stream_op(hipStream_t stream, bool wait, void *ptr, uint64_t value,
                            uint64_t mask, unsigned flags, size_t size) {
    hip_op_t *op;
    HIP_RETURN_ONFAIL(hip_value_op(wait, ptr, value, mask, flags, size, &op));
    hip_stream_t *s;
    hipError_t status = hip_stream_resolve(stream, &s);
    if (status != hipSuccess) {
        hip_op_unref(op);
        return status;
    }
    hip_stream_submit(s, op);
    return hipSuccess;
}

hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value, unsigned int flags,
                                uint32_t mask) {
    HIP_INIT_API();
    HIP_RETURN(stream_op(stream, true, ptr, value, mask, flags, 4));
}

hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value, unsigned int flags,
                                uint64_t mask) {
    HIP_INIT_API();
    HIP_RETURN(stream_op(stream, true, ptr, value, mask, flags, 8));
}

/* flags are not read (hipamd passes 0) */
hipError_t hipStreamWriteValue32(hipStream_t stream, void *ptr, uint32_t value,
                                 unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(stream_op(stream, false, ptr, value, ~0ull, 0, 4));
}

hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value,
                                 unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(stream_op(stream, false, ptr, value, ~0ull, 0, 8));
}
