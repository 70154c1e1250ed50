/* hipDeviceGetAttribute and hipChooseDevice (hipamd hip_device_runtime.cpp):
 * attributes are read from the same properties hipGetDeviceProperties
 * returns; the set answered is the one hipamd 5.2 answers, every other
 * attribute is hipErrorInvalidValue. */
#include <string.h>

#include "hip_internal.h"

static size_t min_int32(size_t v) { return v > 0x7fffffff ? 0x7fffffff : v; }

hipError_t hipDeviceGetAttribute(int *pi, hipDeviceAttribute_t attr, int device) {
    HIP_INIT_API();
    if (!pi) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_dev(device)) HIP_RETURN(hipErrorInvalidDevice);
    hipDeviceProp_t p;
    HIP_RETURN_ONFAIL(hip_get_properties(&p, device));
    switch (attr) {
    case hipDeviceAttributeMaxThreadsPerBlock: *pi = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxBlockDimX: *pi = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: *pi = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: *pi = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: *pi = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: *pi = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: *pi = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: *pi = (int)p.sharedMemPerBlock; break;
    case hipDeviceAttributeTotalConstantMemory: *pi = (int)min_int32(p.totalConstMem); break;
    case hipDeviceAttributeWarpSize: *pi = p.warpSize; break;
    case hipDeviceAttributeMaxRegistersPerBlock: *pi = p.regsPerBlock; break;
    case hipDeviceAttributeClockRate: *pi = p.clockRate; break;
    case hipDeviceAttributeMemoryClockRate: *pi = p.memoryClockRate; break;
    case hipDeviceAttributeMemoryBusWidth: *pi = p.memoryBusWidth; break;
    case hipDeviceAttributeMultiprocessorCount: *pi = p.multiProcessorCount; break;
    case hipDeviceAttributeComputeMode: *pi = p.computeMode; break;
    case hipDeviceAttributeL2CacheSize: *pi = p.l2CacheSize; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: *pi = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeComputeCapabilityMajor: *pi = p.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: *pi = p.minor; break;
    case hipDeviceAttributePciBusId: *pi = p.pciBusID; break;
    case hipDeviceAttributeConcurrentKernels: *pi = p.concurrentKernels; break;
    case hipDeviceAttributePciDeviceId: *pi = p.pciDeviceID; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor:
        *pi = (int)p.maxSharedMemoryPerMultiProcessor;
        break;
    case hipDeviceAttributeIsMultiGpuBoard: *pi = p.isMultiGpuBoard; break;
    case hipDeviceAttributeCooperativeLaunch: *pi = p.cooperativeLaunch; break;
    case hipDeviceAttributeCooperativeMultiDeviceLaunch: *pi = p.cooperativeMultiDeviceLaunch; break;
    case hipDeviceAttributeIntegrated: *pi = p.integrated; break;
    case hipDeviceAttributeMaxTexture1DWidth: *pi = p.maxTexture1D; break;
    case hipDeviceAttributeMaxTexture2DWidth: *pi = p.maxTexture2D[0]; break;
    case hipDeviceAttributeMaxTexture2DHeight: *pi = p.maxTexture2D[1]; break;
    case hipDeviceAttributeMaxTexture3DWidth: *pi = p.maxTexture3D[0]; break;
    case hipDeviceAttributeMaxTexture3DHeight: *pi = p.maxTexture3D[1]; break;
    case hipDeviceAttributeMaxTexture3DDepth: *pi = p.maxTexture3D[2]; break;
    case hipDeviceAttributeHdpMemFlushCntl:
        memcpy(pi, &p.hdpMemFlushCntl, sizeof p.hdpMemFlushCntl);   /* hipamd stores a pointer */
        break;
    case hipDeviceAttributeHdpRegFlushCntl:
        memcpy(pi, &p.hdpRegFlushCntl, sizeof p.hdpRegFlushCntl);
        break;
    case hipDeviceAttributeMaxPitch: *pi = (int)min_int32(p.memPitch); break;
    case hipDeviceAttributeTextureAlignment: *pi = (int)p.textureAlignment; break;
    case hipDeviceAttributeTexturePitchAlignment: *pi = (int)p.texturePitchAlignment; break;
    case hipDeviceAttributeKernelExecTimeout: *pi = p.kernelExecTimeoutEnabled; break;
    case hipDeviceAttributeCanMapHostMemory: *pi = p.canMapHostMemory; break;
    case hipDeviceAttributeEccEnabled: *pi = p.ECCEnabled; break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc:
        *pi = p.cooperativeMultiDeviceUnmatchedFunc;
        break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim:
        *pi = p.cooperativeMultiDeviceUnmatchedGridDim;
        break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim:
        *pi = p.cooperativeMultiDeviceUnmatchedBlockDim;
        break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem:
        *pi = p.cooperativeMultiDeviceUnmatchedSharedMem;
        break;
    case hipDeviceAttributeAsicRevision: *pi = p.asicRevision; break;
    case hipDeviceAttributeManagedMemory: *pi = p.managedMemory; break;
    case hipDeviceAttributeDirectManagedMemAccessFromHost: *pi = p.directManagedMemAccessFromHost; break;
    case hipDeviceAttributeConcurrentManagedAccess: *pi = p.concurrentManagedAccess; break;
    case hipDeviceAttributePageableMemoryAccess: *pi = p.pageableMemoryAccess; break;
    case hipDeviceAttributePageableMemoryAccessUsesHostPageTables:
        *pi = p.pageableMemoryAccessUsesHostPageTables;
        break;
    case hipDeviceAttributeCanUseStreamWaitValue: *pi = 0; break;
    /* the stub stores arrays as linear memory (hip_array.c) and refuses
     * textures (hip_unsupported.c); ROCclr reports images on gfx9-gfx11 */
    case hipDeviceAttributeImageSupport: *pi = 1; break;
    case hipDeviceAttributePhysicalMultiProcessorCount: *pi = p.multiProcessorCount; break;
    case hipDeviceAttributeFineGrainSupport: *pi = 1; break;
    case hipDeviceAttributeMemoryPoolsSupported: *pi = 1; break;
    default: HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(hipSuccess);
}

/* The device matching most of the non-zero fields of prop (all of them). */
hipError_t hipChooseDevice(int *device, const hipDeviceProp_t *prop) {
    HIP_INIT_API();
    if (!device || !prop) HIP_RETURN(hipErrorInvalidValue);
    *device = 0;
    unsigned best = 0;
    for (int i = 0; i < hip_device_count(); i++) {
        hipDeviceProp_t c;
        hip_get_properties(&c, i);
        unsigned wanted = 0, matched = 0;
#define WANT(field)                                  \
        if (prop->field != 0) {                      \
            wanted++;                                \
            if (c.field >= prop->field) matched++;   \
        }
        WANT(major) WANT(minor) WANT(totalGlobalMem) WANT(sharedMemPerBlock)
        WANT(maxThreadsPerBlock) WANT(totalConstMem) WANT(multiProcessorCount)
        WANT(maxThreadsPerMultiProcessor) WANT(memoryClockRate) WANT(memoryBusWidth)
        WANT(l2CacheSize) WANT(regsPerBlock) WANT(maxSharedMemoryPerMultiProcessor)
        WANT(warpSize)
#undef WANT
        if (wanted == matched && matched > best) {
            *device = i;
            best = matched;
        }
    }
    HIP_RETURN(hipSuccess);
}
