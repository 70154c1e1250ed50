/* Functions of hip_unsupported.c's table that the headers of 5.7 on add:
 * the graph nodes that signal or wait for external semaphores (the stub
 * can import none: hipImportExternalSemaphore is unsupported) and the last
 * texture-reference queries.  Compiled where declared (rocpy_features.h). */
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
