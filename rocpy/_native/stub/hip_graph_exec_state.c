/* An executable graph's state beyond its nodes' parameters (clr
 * hipamd/src/hip_graph.cpp, rocm-6.2.0 and amd-staging): hipGraphUpload
 * (ihipGraphUpload: nothing to prepare, only checks), hipGraphInstantiateWithParams
 * (instantiation, then that upload), hipGraphExecGetFlags,
 * hipGraphNodeSetEnabled / GetEnabled (kernel, memcpy and memset nodes of
 * the executable graph's copy: a disabled one is skipped at launch). */
#include "hip_graph.h"

#ifdef ROCPY_HAVE_hipGraphUpload
/* a null executable graph first, then hip::isValid(stream)
 * (hipErrorContextIsDestroyed), then the executable graph's validity */
static hipError_t upload(hipGraphExec_t graphExec, hipStream_t stream) {
    if (!graphExec) return hipErrorInvalidValue;
    if (!hip_stream_valid(stream)) return hipErrorContextIsDestroyed;
    if (!hip_exec_valid(graphExec)) return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipGraphUpload(hipGraphExec_t graphExec, hipStream_t stream) {
    HIP_INIT_API();
    HIP_RETURN(upload(graphExec, stream));
}
#endif

#ifdef ROCPY_HAVE_hipGraphInstantiateWithParams
/* hipamd: the flags hipGraphInstantiateWithFlags takes and Upload and
 * DeviceLaunch (one at a time), result_out hipGraphInstantiateError for a
 * refused flag or a failed instantiation, else hipGraphInstantiateSuccess
 * with errNode_out NULL; with hipGraphInstantiateFlagUpload the executable
 * graph is uploaded to uploadStream (ihipGraphUpload), whose failure is
 * returned with the executable graph made. */
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                         hipGraphInstantiateParams *instantiateParams) {
    HIP_INIT_API();
    if (!pGraphExec || !graph || !instantiateParams) HIP_RETURN(hipErrorInvalidValue);
    unsigned long long flags = instantiateParams->flags;
    if (flags != 0 && flags != hipGraphInstantiateFlagAutoFreeOnLaunch &&
        flags != hipGraphInstantiateFlagUpload && flags != hipGraphInstantiateFlagDeviceLaunch &&
        flags != hipGraphInstantiateFlagUseNodePriority) {
        instantiateParams->result_out = hipGraphInstantiateError;
        HIP_RETURN(hipErrorInvalidValue);
    }
    hipError_t status = hip_graph_instantiate(pGraphExec, graph, flags);
    if (status != hipSuccess) {
        instantiateParams->result_out = hipGraphInstantiateError;
        HIP_RETURN(status);
    }
    instantiateParams->result_out = hipGraphInstantiateSuccess;
    instantiateParams->errNode_out = NULL;
    if (flags == hipGraphInstantiateFlagUpload)
        HIP_RETURN(upload(*pGraphExec, instantiateParams->uploadStream));
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipGraphExecGetFlags
/* hipamd reads any non-null handle; the stub checks it is live */
hipError_t hipGraphExecGetFlags(hipGraphExec_t graphExec, unsigned long long *flags) {
    HIP_INIT_API();
    if (!graphExec || !flags || !hip_exec_valid(graphExec)) HIP_RETURN(hipErrorInvalidValue);
    *flags = hip_exec_flags(graphExec);
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipGraphNodeSetEnabled
static hipError_t enabled_node(hipGraphExec_t x, hipGraphNode_t node, struct hipGraphNode **out) {
    if (!x || !node || !hip_exec_valid(x) || !hip_node_valid(node)) return hipErrorInvalidValue;
    struct hipGraphNode *copy = hip_exec_node(x, node);     /* GetClonedNode */
    if (!copy) return hipErrorInvalidValue;
    if (node->type != hipGraphNodeTypeKernel && node->type != hipGraphNodeTypeMemcpy &&
        node->type != hipGraphNodeTypeMemset && node->type != HIP_GRAPH_NODE_TYPE_MEMCPY1D)
        return hipErrorInvalidValue;
    *out = copy;
    return hipSuccess;
}

hipError_t hipGraphNodeSetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int isEnabled) {
    HIP_INIT_API();
    struct hipGraphNode *copy;
    HIP_RETURN_ONFAIL(enabled_node(hGraphExec, hNode, &copy));
    copy->disabled = !isEnabled;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphNodeGetEnabled(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                  unsigned int *isEnabled) {
    HIP_INIT_API();
    if (!isEnabled) HIP_RETURN(hipErrorInvalidValue);
    struct hipGraphNode *copy;
    HIP_RETURN_ONFAIL(enabled_node(hGraphExec, hNode, &copy));
    *isEnabled = !copy->disabled;
    HIP_RETURN(hipSuccess);
}
#endif
