/* Allocations (hipamd hip_memory.cpp, hip_hmm.cpp, hip_mempool.cpp): device
 * memory, pinned host memory, registered host memory, managed memory and
 * stream-ordered allocations, all tracked by the stub core.  Device memory
 * is host memory the stub accounts against the device's size. */
#include <string.h>
#include <unistd.h>

#include "hip_internal.h"

#define DEVICE_ALIGN 4096

/* ROCclr's maxPhysicalMemAllocSize_: a host allocation beyond RAM fails */
static bool host_size_ok(size_t size) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages <= 0 || page <= 0 || size <= (size_t)pages * (size_t)page;
}

static uint64_t all_access(void) {
    uint64_t mask = STUB_ACCESS_CPU;
    for (int d = 0; d < hip_device_count(); d++) mask |= 1ull << d;
    return mask;
}

bool hip_mem_tracked(const void *ptr, stub_alloc_t *info) { return stub_mem_find(ptr, info); }

hipError_t hip_device_alloc(void **ptr, size_t size, int device, unsigned flags) {
    if (!ptr) return hipErrorInvalidValue;
    if (size == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    if (size > hip_dev(device)->info->global_mem_size) return hipErrorOutOfMemory;
    if (stub_mem_alloc(size, DEVICE_ALIGN, STUB_MEM_DEVICE, device, flags, ptr) != 0)
        return hipErrorOutOfMemory;
    return hipSuccess;
}

/* hipamd keeps HIP's host flags in the upper half of a 32-bit ROCclr flag
 * word, so only their low 16 bits survive for hipHostGetFlags and
 * hipPointerGetAttributes. */
static unsigned visible_flags(const stub_alloc_t *a) {
    return a->kind == STUB_MEM_HOST ? (a->flags & 0xffffu) : 0;
}

static hipError_t host_alloc(void **ptr, size_t size, unsigned flags, stub_mem_kind_t kind) {
    if (size == 0) {
        *ptr = NULL;
        return hipSuccess;
    }
    if (!host_size_ok(size)) return hipErrorOutOfMemory;
    if (stub_mem_alloc(size, DEVICE_ALIGN, kind, hip_current_dev()->id, flags, ptr) != 0)
        return hipErrorOutOfMemory;
    stub_mem_set_access(*ptr, all_access());
    return hipSuccess;
}

static hipError_t host_malloc(void **ptr, size_t size, unsigned flags) {
    if (!ptr) return hipErrorInvalidValue;
    *ptr = NULL;
    const unsigned coherent = hipHostMallocCoherent | hipHostMallocNonCoherent;
    if ((flags & coherent) == coherent) return hipErrorInvalidValue;
    return host_alloc(ptr, size, flags, STUB_MEM_HOST);
}

/* hipamd's ihipFree: wait for the devices that may use the memory, then
 * free; NULL is fine, an unknown pointer is hipErrorInvalidValue. */
static hipError_t free_memory(void *ptr) {
    if (!ptr) return hipSuccess;
    stub_alloc_t a;
    const unsigned kinds = STUB_MEM_DEVICE | STUB_MEM_HOST | STUB_MEM_MANAGED;
    if (stub_mem_find(ptr, &a) && a.base == (uintptr_t)ptr && a.tag) return hip_graph_alloc_free(ptr, NULL);
    if (!stub_mem_find(ptr, &a) || a.base != (uintptr_t)ptr || !(a.kind & kinds) || a.tag)
        return hipErrorInvalidValue;
    if (a.kind == STUB_MEM_DEVICE && !hip_mempool_forget(ptr)) return hipErrorInvalidValue;
    hip_device_sync(a.kind == STUB_MEM_DEVICE ? a.device : -1);
    return stub_mem_release(ptr, kinds, NULL) ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipMalloc(void **ptr, size_t size) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(hip_device_alloc(ptr, size, hip_current_dev()->id, 0));
}

hipError_t hipExtMallocWithFlags(void **ptr, size_t sizeBytes, unsigned int flags) {
    HIP_INIT_API();
    if (flags != hipDeviceMallocDefault && flags != hipDeviceMallocFinegrained &&
        flags != hipMallocSignalMemory)
        HIP_RETURN(hipErrorInvalidValue);
    if (flags == hipMallocSignalMemory && sizeBytes != 8) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_device_alloc(ptr, sizeBytes, hip_current_dev()->id, flags));
}

hipError_t hipFree(void *ptr) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(free_memory(ptr));
}

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(host_malloc(ptr, size, flags));
}

/* deprecated; flags as ROCm/clr checks them (5.2 passed them through raw) */
hipError_t hipHostAlloc(void **ptr, size_t size, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!ptr) HIP_RETURN(hipErrorInvalidValue);
    if (flags > (hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined))
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(host_malloc(ptr, size, flags));
}

hipError_t hipMallocHost(void **ptr, size_t size) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(host_malloc(ptr, size, 0));
}

hipError_t hipMemAllocHost(void **ptr, size_t size) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(host_malloc(ptr, size, 0));
}

hipError_t hipHostFree(void *ptr) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(free_memory(ptr));
}

hipError_t hipFreeHost(void *ptr) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    HIP_RETURN(free_memory(ptr));
}

hipError_t hipMallocManaged(void **dev_ptr, size_t size, unsigned int flags) {
    HIP_INIT_API();
    if (!dev_ptr || size == 0 || (flags != hipMemAttachGlobal && flags != hipMemAttachHost))
        HIP_RETURN(hipErrorInvalidValue);
    if (size > hip_current_dev()->info->global_mem_size) HIP_RETURN(hipErrorOutOfMemory);
    HIP_RETURN(host_alloc(dev_ptr, size, flags, STUB_MEM_MANAGED));
}

/* hipamd does not detect a second registration (ROCr locks the range again);
 * the stub answers as CUDA and the header's status list do. */
hipError_t hipHostRegister(void *hostPtr, size_t sizeBytes, unsigned int flags) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!hostPtr || sizeBytes == 0) HIP_RETURN(hipErrorInvalidValue);
    if (flags > 15 && stub_rule(STUB_RULE_HOST_REGISTER_FLAGS_CHECKED)) HIP_RETURN(hipErrorInvalidValue);
    /* ROCclr's Buffer::create fails to lock a range no memory backs */
    if (!host_size_ok(sizeBytes) || (uintptr_t)hostPtr > UINTPTR_MAX - sizeBytes)
        HIP_RETURN(stub_rule(STUB_RULE_HOST_REGISTER_FAILURE_INVALID_VALUE) ? hipErrorInvalidValue
                                                                            : hipErrorOutOfMemory);
    stub_alloc_t a;
    if (stub_mem_find(hostPtr, &a) ||
        stub_mem_find((const char *)hostPtr + sizeBytes - 1, &a))
        HIP_RETURN(hipErrorHostMemoryAlreadyRegistered);
    if (stub_mem_track(hostPtr, sizeBytes, STUB_MEM_REGISTERED, hip_current_dev()->id, flags) != 0)
        HIP_RETURN(hipErrorHostMemoryAlreadyRegistered);
    stub_mem_set_access(hostPtr, all_access());
    HIP_RETURN(hipSuccess);
}

hipError_t hipHostUnregister(void *hostPtr) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_supported());
    if (!hostPtr) HIP_RETURN(hipErrorInvalidValue);
    stub_alloc_t a;
    if (!stub_mem_find(hostPtr, &a) || a.kind != STUB_MEM_REGISTERED || a.base != (uintptr_t)hostPtr)
        HIP_RETURN(hipErrorHostMemoryNotRegistered);
    hip_device_sync(-1);
    if (!stub_mem_release(hostPtr, STUB_MEM_REGISTERED, NULL))
        HIP_RETURN(hipErrorHostMemoryNotRegistered);
    HIP_RETURN(hipSuccess);
}

/* The stub maps host memory at the same address on every device (SVM). */
hipError_t hipHostGetDevicePointer(void **devicePointer, void *hostPointer, unsigned flags) {
    HIP_INIT_API();
    if (!devicePointer) HIP_RETURN(hipErrorInvalidValue);
    if (flags != 0 && stub_rule(STUB_RULE_HOST_DEVICE_POINTER_FLAGS_MUST_BE_ZERO))
        HIP_RETURN(hipErrorInvalidValue);
    if (!stub_mem_find(hostPointer, NULL)) HIP_RETURN(hipErrorInvalidValue);
    *devicePointer = hostPointer;
    HIP_RETURN(hipSuccess);
}

hipError_t hipHostGetFlags(unsigned int *flagsPtr, void *hostPtr) {
    HIP_INIT_API();
    if (!flagsPtr || !hostPtr) HIP_RETURN(hipErrorInvalidValue);
    stub_alloc_t a;
    if (!stub_mem_find(hostPtr, &a)) HIP_RETURN(hipErrorInvalidValue);
    *flagsPtr = visible_flags(&a);
    HIP_RETURN(hipSuccess);
}

hipError_t hipMemGetInfo(size_t *free_bytes, size_t *total) {
    HIP_INIT_API();
    if (!free_bytes || !total) HIP_RETURN(hipErrorInvalidValue);
    hip_dev_t *dev = hip_current_dev();
    *total = dev->info->global_mem_size;
    *free_bytes = *total - stub_mem_used(dev->id);
    HIP_RETURN(hipSuccess);
}

hipError_t hipMemPtrGetInfo(void *ptr, size_t *size) {
    HIP_INIT_API();
    stub_alloc_t a;
    if (!size || !stub_mem_find(ptr, &a)) HIP_RETURN(hipErrorInvalidValue);
    *size = a.size;
    HIP_RETURN(hipSuccess);
}

hipError_t hipMemGetAddressRange(hipDeviceptr_t *pbase, size_t *psize, hipDeviceptr_t dptr) {
    HIP_INIT_API();
    stub_alloc_t a;
    if (!stub_mem_find(dptr, &a)) HIP_RETURN(hipErrorInvalidDevicePointer);
    if (pbase) *pbase = (hipDeviceptr_t)a.base;
    if (psize) *psize = a.size;
    HIP_RETURN(hipSuccess);
}

/* 5.2's hipPointerAttribute_t; pinned, registered and managed memory are
 * hipMemoryTypeHost as in hipamd (system memory seen by the device). */
hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr) {
    HIP_INIT_API();
    if (!attributes || !ptr) HIP_RETURN(hipErrorInvalidValue);
    stub_alloc_t a;
    if (!stub_mem_find(ptr, &a)) HIP_RETURN(hipErrorInvalidValue);
    memset(attributes, 0, sizeof *attributes);
    bool host = a.kind != STUB_MEM_DEVICE;
#ifdef ROCPY_HAVE_hipPointerAttribute_t__memoryType
    attributes->memoryType = host ? hipMemoryTypeHost : hipMemoryTypeDevice;
#else   /* HIP 6.0 renamed it (5.7 has both, in a union) */
    attributes->type = host ? hipMemoryTypeHost : hipMemoryTypeDevice;
#endif
    if (host) attributes->hostPointer = (void *)ptr;
    attributes->devicePointer = (void *)ptr;
    attributes->isManaged = a.kind == STUB_MEM_MANAGED;
    attributes->allocationFlags = visible_flags(&a);
    attributes->device = a.device;
    HIP_RETURN(hipSuccess);
}
