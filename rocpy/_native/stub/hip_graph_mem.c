/* The device's graph memory pool: hipDeviceGetGraphMemAttribute,
 * hipDeviceSetGraphMemAttribute, hipDeviceGraphMemTrim (clr
 * hipamd/src/hip_graph.cpp at rocm-6.2.0: each forwards to the device's
 * GetGraphMemoryPool(), a hip::MemoryPool; the stub's is hip_mempool.c's).
 * A device out of range is hipErrorInvalidDevice, then a null value
 * hipErrorInvalidValue; Get knows the four figures, Set only the two high
 * marks (which the pool resets for a value of 0 alone), anything else is
 * hipErrorInvalidValue.  The figures move with the graph memory nodes
 * (hip_graph_memnode.c): used while an allocation is mapped, reserved until
 * hipDeviceGraphMemTrim (MemoryPool::TrimTo(0)) gives back what no
 * allocation maps. */
#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipDeviceGetGraphMemAttribute
/* Get's and Set's checks, in hipamd's order, and the pool attribute that
 * answers attr (settable: only the high marks) */
static hipError_t graph_attr(int device, hipGraphMemAttributeType attr, const void *value,
                             bool set, hipMemPool_t *pool, hipMemPoolAttr *out) {
    *pool = hip_mempool_graph_pool(device);
    if (!*pool) return hipErrorInvalidDevice;
    if (!value) return hipErrorInvalidValue;
    switch (attr) {
    case hipGraphMemAttrUsedMemHigh: *out = hipMemPoolAttrUsedMemHigh; return hipSuccess;
    case hipGraphMemAttrReservedMemHigh: *out = hipMemPoolAttrReservedMemHigh; return hipSuccess;
    case hipGraphMemAttrUsedMemCurrent: *out = hipMemPoolAttrUsedMemCurrent; break;
    case hipGraphMemAttrReservedMemCurrent: *out = hipMemPoolAttrReservedMemCurrent; break;
    default: return hipErrorInvalidValue;
    }
    return set ? hipErrorInvalidValue : hipSuccess;
}

hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void *value) {
    HIP_INIT_API();
    hipMemPool_t pool;
    hipMemPoolAttr a;
    HIP_RETURN_ONFAIL(graph_attr(device, attr, value, false, &pool, &a));
    HIP_RETURN(hipMemPoolGetAttribute(pool, a, value));
}

hipError_t hipDeviceSetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void *value) {
    HIP_INIT_API();
    hipMemPool_t pool;
    hipMemPoolAttr a;
    HIP_RETURN_ONFAIL(graph_attr(device, attr, value, true, &pool, &a));
    HIP_RETURN(hipMemPoolSetAttribute(pool, a, value));
}

hipError_t hipDeviceGraphMemTrim(int device) {
    HIP_INIT_API();
    if (!hip_mempool_graph_pool(device)) HIP_RETURN(hipErrorInvalidDevice);
    hip_mempool_graph_trim(device);
    HIP_RETURN(hipSuccess);
}
#endif
