/* hipPointerGetAttribute and hipDrvPointerGetAttributes (hipamd
 * hip_memory.cpp at rocm-5.2.3: ihipPointerGetAttributes).  Memory the
 * stub tracks answers as hipamd's memory object would: pinned, registered
 * and managed memory are host memory (fine-grained or user pointers), the
 * rest device memory; a pointer the stub does not track may be an array
 * handle (hipMemoryTypeArray) and is otherwise hipErrorInvalidValue with
 * hipamd's default value written. */
#include <string.h>

#include "hip_internal.h"

static bool host_kind(const stub_alloc_t *a) { return a->kind != STUB_MEM_DEVICE; }

static hipError_t attribute(void *data, hipPointer_attribute attr, hipDeviceptr_t ptr) {
    stub_alloc_t a;
    bool known = stub_mem_find(ptr, &a);
    switch (attr) {
    case HIP_POINTER_ATTRIBUTE_CONTEXT:
    case HIP_POINTER_ATTRIBUTE_P2P_TOKENS:
    case HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE:
    case HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        return hipErrorNotSupported;
    case HIP_POINTER_ATTRIBUTE_MEMORY_TYPE: {
        char *d;
        size_t r, rs, e;
        if (known)
            *(uint32_t *)data = host_kind(&a) ? hipMemoryTypeHost : hipMemoryTypeDevice;
        else if (hip_array_storage(ptr, &d, &r, &rs, &e))
            *(uint32_t *)data = hipMemoryTypeArray;
        else
            return *(uint32_t *)data = 0, hipErrorInvalidValue;
        return hipSuccess;
    }
    case HIP_POINTER_ATTRIBUTE_DEVICE_POINTER:
        *(void **)data = known ? ptr : NULL;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_HOST_POINTER:
        if (known && host_kind(&a)) {
            *(void **)data = ptr;
            return hipSuccess;
        }
        *(void **)data = NULL;
        return hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        if (!stub_rule(STUB_RULE_POINTER_SYNC_MEMOPS_STORED)) {
            *(bool *)data = true;
            return hipSuccess;
        }
        *(bool *)data = known && a.sync_memops;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_BUFFER_ID:
        /* ROCclr's unique id of the memory object: the stub names an
         * allocation by its page number, distinct while it lives */
        *(uint32_t *)data = known ? (uint32_t)(a.base >> 12) : 0;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_IS_MANAGED:
        *(bool *)data = known && a.kind == STUB_MEM_MANAGED;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        *(int *)data = known ? a.device : -2;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *(void **)data = known ? (void *)a.base : NULL;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_RANGE_SIZE:
        *(uint32_t *)data = known ? (uint32_t)a.size : 0;   /* hipamd writes 32 bits */
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_MAPPED:
        *(bool *)data = known;
        return known ? hipSuccess : hipErrorInvalidValue;
    case HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        /* ROCclr flags >> 16: the HIP host flags hipamd keeps there */
        *(uint32_t *)data = known && a.kind == STUB_MEM_HOST ? (a.flags & 0xffffu) : 0;
        return hipSuccess;
    default: return hipErrorInvalidValue;
    }
}

hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attr, hipDeviceptr_t ptr) {
    HIP_INIT_API();
    if (!ptr || !data) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(attribute(data, attr, ptr));
}

/* every attribute is written (defaults where it fails) and the call succeeds */
hipError_t hipDrvPointerGetAttributes(unsigned int numAttributes, hipPointer_attribute *attributes,
                                      void **data, hipDeviceptr_t ptr) {
    HIP_INIT_API();
    if (numAttributes == 0 || !attributes || !data || !ptr) HIP_RETURN(hipErrorInvalidValue);
    for (unsigned i = 0; i < numAttributes; i++) (void)attribute(data[i], attributes[i], ptr);
    HIP_RETURN(hipSuccess);
}

#ifdef ROCPY_HAVE_hipPointerSetAttribute
/* hipamd hipPointerSetAttribute / ihipPointerSetAttribute: only SYNC_MEMOPS
 * may be set; memory hipamd does not know is hipErrorInvalidDevicePointer */
hipError_t hipPointerSetAttribute(const void *value, hipPointer_attribute attribute,
                                  hipDeviceptr_t ptr) {
    HIP_INIT_API();
    if (!ptr || !value) HIP_RETURN(hipErrorInvalidValue);
    if (attribute != HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS) HIP_RETURN(hipErrorInvalidValue);
    unsigned int v = *(const unsigned int *)value;
    if (stub_rule(STUB_RULE_POINTER_SYNC_MEMOPS_VALUE_CHECKED) && v != 0 && v != 1)
        HIP_RETURN(hipErrorInvalidValue);
    if (!stub_mem_set_sync_memops(ptr, v != 0)) HIP_RETURN(hipErrorInvalidDevicePointer);
    HIP_RETURN(hipSuccess);
}
#endif
