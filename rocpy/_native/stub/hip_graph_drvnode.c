/* Driver-style graph nodes (hipamd hip_graph.cpp: hipDrvGraphAddMemcpyNode,
 * hipDrvGraphAddMemsetNode, hipDrvGraphMemcpyNodeGet/SetParams,
 * hipDrvGraphExecMemcpyNodeSetParams, hipDrvGraphExecMemsetNodeSetParams;
 * GraphDrvMemcpyNode in hip_graph_internal.hpp).
 *
 * A driver memcpy node is a hipGraphNodeTypeMemcpy node holding the
 * HIP_MEMCPY3D as given (the `drv` mark); it runs as the driver 3-D copy
 * does (hip_memcpy_param.c's conversion to hipMemcpy3D's parameters, then
 * hip_memcpy_rect.c's copy).  A driver memset node is an ordinary memset
 * node (hipamd converts the parameters to hipMemsetParams and adds one), so
 * hipGraphMemsetNodeGet/SetParams work on it.  hipamd casts the node of the
 * Get/Set calls without looking at its type; the stub answers
 * hipErrorInvalidValue for a node that is not a driver memcpy node (a
 * 3-D memcpy node is not one, and hipGraphMemcpyNodeGetParams refuses a
 * driver node).  The context argument is only checked for NULL (memcpy
 * nodes), as hipamd does. */
#include "hip_graph.h"

/* ihipDrvMemcpy3D_validate (hip_memory.cpp): an empty extent is a valid
 * copy of nothing, whatever the rest says */
static bool empty_extent(const HIP_MEMCPY3D *c) {
    return c->WidthInBytes == 0 || c->Height == 0 || c->Depth == 0;
}

hipError_t hip_drv_memcpy_node_op(const HIP_MEMCPY3D *c, hip_op_t **out) {
    *out = NULL;
    if (empty_extent(c)) return hipSuccess;
    hipMemcpy3DParms p;
    HIP_RETURN_ONFAIL(hip_drv_memcpy3d_parms(c, &p));
    return hip_memcpy3d_op(&p, out);
}

/* HIP_MEMSET_NODE_PARAMS (6.x) and hipMemsetParams (7.x) have the same
 * fields; hipamd copies them one by one */
#define MEMSET_PARAMS(m) \
    ((hipMemsetParams){.dst = (void *)(m)->dst, .elementSize = (m)->elementSize, \
                       .height = (m)->height, .pitch = (m)->pitch, .value = (m)->value, \
                       .width = (m)->width})

#ifdef ROCPY_HAVE_hipDrvGraphAddMemcpyNode
static hipError_t drv_validate(const HIP_MEMCPY3D *c) {
    if (empty_extent(c)) return hipSuccess;
    hipMemcpy3DParms p;
    HIP_RETURN_ONFAIL(hip_drv_memcpy3d_parms(c, &p));
    return hip_memcpy_node_check(&p);
}

hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                    const hipGraphNode_t *dependencies, size_t numDependencies,
                                    const HIP_MEMCPY3D *copyParams, hipCtx_t ctx) {
    HIP_INIT_API();
    if (!phGraphNode || !hGraph || (numDependencies > 0 && !dependencies) || !ctx)
        HIP_RETURN(hipErrorInvalidValue);
    /* ihipDrvGraphAddMemcpyNode */
    if (!copyParams) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(drv_validate(copyParams));
    struct hipGraphNode *n = hip_node_alloc(hipGraphNodeTypeMemcpy);
    if (!n) HIP_RETURN(hipErrorOutOfMemory);
    n->drv = true;
    n->p.drvcopy = *copyParams;
    HIP_RETURN(hip_graph_add_node(hGraph, dependencies, numDependencies, n, phGraphNode));
}

/* HIP 6.0 declares the driver memcpy node but not the memset one */
#ifdef ROCPY_HAVE_hipDrvGraphAddMemsetNode
hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                    const hipGraphNode_t *dependencies, size_t numDependencies,
                                    ROCPY_ARG_hipDrvGraphAddMemsetNode__memsetParams memsetParams,
                                    hipCtx_t ctx) {
    (void)ctx;
    HIP_INIT_API();
    if (!phGraphNode || !hGraph || (numDependencies > 0 && !dependencies) || !memsetParams)
        HIP_RETURN(hipErrorInvalidValue);
    hipMemsetParams p = MEMSET_PARAMS(memsetParams);
    HIP_RETURN(hip_make_memset_node(hGraph, dependencies, numDependencies, &p, phGraphNode));
}
#endif
#endif

#ifdef ROCPY_HAVE_hipDrvGraphMemcpyNodeGetParams
static struct hipGraphNode *drv_node(struct hipGraphNode *n) {
    return n && n->type == hipGraphNodeTypeMemcpy && n->drv ? n : NULL;
}

static hipError_t set_drv(struct hipGraphNode *n, const HIP_MEMCPY3D *c) {
    if (!n) return hipErrorInvalidValue;
    HIP_RETURN_ONFAIL(drv_validate(c));
    pthread_mutex_lock(&n->graph->lock);
    n->p.drvcopy = *c;
    pthread_mutex_unlock(&n->graph->lock);
    return hipSuccess;
}

hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t hNode, HIP_MEMCPY3D *nodeParams) {
    HIP_INIT_API();
    if (!hip_node_valid(hNode) || !nodeParams) HIP_RETURN(hipErrorInvalidValue);
    struct hipGraphNode *n = drv_node(hNode);
    if (!n) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&n->graph->lock);
    *nodeParams = n->p.drvcopy;
    pthread_mutex_unlock(&n->graph->lock);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t hNode, const HIP_MEMCPY3D *nodeParams) {
    HIP_INIT_API();
    if (!hip_node_valid(hNode) || !nodeParams) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(set_drv(drv_node(hNode), nodeParams));
}

/* an instantiated copy belongs to its executable graph: no graph lock */
hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                              const HIP_MEMCPY3D *copyParams, hipCtx_t ctx) {
    (void)ctx;
    HIP_INIT_API();
    if (!hGraphExec || !hip_node_valid(hNode)) HIP_RETURN(hipErrorInvalidValue);
    /* hipamd reads copyParams unchecked; a NULL one is refused here */
    if (!copyParams || drv_validate(copyParams) != hipSuccess) HIP_RETURN(hipErrorInvalidValue);
    /* an empty side (no array, host or device pointer) */
    if ((!copyParams->srcArray && !copyParams->srcHost && !copyParams->srcDevice) ||
        (!copyParams->dstArray && !copyParams->dstHost && !copyParams->dstDevice))
        HIP_RETURN(hipErrorInvalidValue);
    struct hipGraphNode *copy = drv_node(hip_exec_node(hGraphExec, hNode));
    if (!copy) HIP_RETURN(hipErrorInvalidValue);
    copy->p.drvcopy = *copyParams;
    HIP_RETURN(hipSuccess);
}

#ifdef ROCPY_HAVE_hipDrvGraphExecMemsetNodeSetParams
/* hipamd: the checks of hipGraphExecMemsetNodeSetParams after converting,
 * a failed validation always hipErrorInvalidValue */
hipError_t hipDrvGraphExecMemsetNodeSetParams(
    hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
    ROCPY_ARG_hipDrvGraphExecMemsetNodeSetParams__memsetParams memsetParams, hipCtx_t ctx) {
    (void)ctx;
    HIP_INIT_API();
    if (!hGraphExec || !hip_node_valid(hNode) || !memsetParams || !memsetParams->dst)
        HIP_RETURN(hipErrorInvalidValue);
    hipMemsetParams p = MEMSET_PARAMS(memsetParams);
    if (hip_memset_node_check(&p) != hipSuccess) HIP_RETURN(hipErrorInvalidValue);
    return hipGraphExecMemsetNodeSetParams(hGraphExec, hNode, &p);
}
#endif
#endif
