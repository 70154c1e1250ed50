/* Functions of hip_unsupported.c's table that the headers of 5.7 on add:
 * the graph nodes that signal or wait for external semaphores (the stub
 * can import none: hipImportExternalSemaphore is unsupported), the last
 * texture-reference queries, mipmapped arrays of external memory (6.2) and
 * dma-buf handles of device memory (7.x).  Compiled where declared (rocpy_features.h). */
#include "hip_internal.h"
#include "hip_unsupported.h"

#ifdef ROCPY_HAVE_hipGraphAddExternalSemaphoresSignalNode
hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                                   const hipGraphNode_t *pDependencies,
                                                   size_t numDependencies,
                                                   const hipExternalSemaphoreSignalNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                                 const hipGraphNode_t *pDependencies,
                                                 size_t numDependencies,
                                                 const hipExternalSemaphoreWaitNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(
    hipGraphNode_t hNode, ROCPY_ARG_hipGraphExternalSemaphoresSignalNodeGetParams__params_out params_out) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(
    hipGraphNode_t hNode, const hipExternalSemaphoreSignalNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(
    hipGraphNode_t hNode, ROCPY_ARG_hipGraphExternalSemaphoresWaitNodeGetParams__params_out params_out) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(
    hipGraphNode_t hNode, const hipExternalSemaphoreWaitNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(
    hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
    const hipExternalSemaphoreSignalNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}

hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(
    hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
    const hipExternalSemaphoreWaitNodeParams *nodeParams) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}
#endif

#ifdef ROCPY_HAVE_hipTexRefGetArray
hipError_t hipTexRefGetArray(hipArray_t *pArray, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}

hipError_t hipTexRefGetBorderColor(float *pBorderColor, const textureReference *texRef) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_TEXTURE);
}
#endif

#ifdef ROCPY_HAVE_hipExternalMemoryGetMappedMipmappedArray
hipError_t hipExternalMemoryGetMappedMipmappedArray(
    hipMipmappedArray_t *mipmap, hipExternalMemory_t extMem,
    const hipExternalMemoryMipmappedArrayDesc *mipmapDesc) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_EXTERNAL);
}
#endif

#ifdef ROCPY_HAVE_hipMemGetHandleForAddressRange
hipError_t hipMemGetHandleForAddressRange(void *handle, hipDeviceptr_t dptr, size_t size,
                                          hipMemRangeHandleType handleType,
                                          unsigned long long flags) {
    UNSUPPORTED(ROCPY_UNSUPPORTED_DMABUF);
}
#endif
