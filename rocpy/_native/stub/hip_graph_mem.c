/* The device's graph memory pool: hipDeviceGetGraphMemAttribute,
 * hipDeviceSetGraphMemAttribute, hipDeviceGraphMemTrim (clr
 * hipamd/src/hip_graph.cpp at rocm-6.2.0: each forwards to the device's
 * GetGraphMemoryPool(), a hip::MemoryPool; the stub's is hip_mempool.c's).
 * A device out of range is hipErrorInvalidDevice, then a null value
 * hipErrorInvalidValue; Get knows the four figures, Set only the two high
 * marks (which the pool resets for a value of 0 alone), anything else is
 * hipErrorInvalidValue.  The stub has no graph allocation nodes yet, so the
 * figures stay 0 (hip_unsupported.c is where that would be listed). */
#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipDeviceGetGraphMemAttribute
static hipError_t graph_pool(int device, hipMemPool_t *out) {
    *out = hip_mempool_graph_pool(device);
    return *out ? hipSuccess : hipErrorInvalidDevice;
}

hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void *value) {
    HIP_INIT_API();
    hipMemPool_t pool;
    HIP_RETURN_ONFAIL(graph_pool(device, &pool));
    if (!value) HIP_RETURN(hipErrorInvalidValue);
    hipMemPoolAttr a;
    switch (attr) {
    case hipGraphMemAttrUsedMemCurrent: a = hipMemPoolAttrUsedMemCurrent; break;
    case hipGraphMemAttrUsedMemHigh: a = hipMemPoolAttrUsedMemHigh; break;
    case hipGraphMemAttrReservedMemCurrent: a = hipMemPoolAttrReservedMemCurrent; break;
    case hipGraphMemAttrReservedMemHigh: a = hipMemPoolAttrReservedMemHigh; break;
    default: HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(hipMemPoolGetAttribute(pool, a, value));
}

hipError_t hipDeviceSetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void *value) {
    HIP_INIT_API();
    hipMemPool_t pool;
    HIP_RETURN_ONFAIL(graph_pool(device, &pool));
    if (!value) HIP_RETURN(hipErrorInvalidValue);
    hipMemPoolAttr a;
    switch (attr) {
    case hipGraphMemAttrUsedMemHigh: a = hipMemPoolAttrUsedMemHigh; break;
    case hipGraphMemAttrReservedMemHigh: a = hipMemPoolAttrReservedMemHigh; break;
    default: HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(hipMemPoolSetAttribute(pool, a, value));
}

hipError_t hipDeviceGraphMemTrim(int device) {
    HIP_INIT_API();
    hipMemPool_t pool;
    HIP_RETURN_ONFAIL(graph_pool(device, &pool));
    HIP_RETURN(hipMemPoolTrimTo(pool, 0));
}
#endif
