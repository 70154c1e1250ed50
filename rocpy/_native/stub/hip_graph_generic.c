/* The generic node API over hipGraphNodeParams (clr hipamd/src/hip_graph.cpp
 * hipGraphAddNode from rocm-6.2.0; hipGraphNodeSetParams,
 * hipGraphExecNodeSetParams, ihipGraphNodeSetParams in the clr of Oct 2024):
 * each dispatches on params->type to the per-type function.  hipamd
 * accepts kernel, memcpy, memset, host, child graph, event wait and record,
 * memory alloc and free nodes; the external semaphore types are
 * hipErrorNotSupported ("to be added"), and so are alloc and free for the
 * Set functions; any other type (hipGraphNodeTypeEmpty included) is
 * hipErrorInvalidValue.
 *
 * Where hipamd casts the node to the type params names without looking
 * (ihipGraphNodeSetParams), the per-type functions the stub calls refuse a
 * node of another type with hipErrorInvalidValue. */
#include <string.h>

#include "hip_graph.h"

#ifdef ROCPY_HAVE_hipGraphAddNode
static hipError_t add_generic(hipGraphNode_t *out, hipGraph_t graph, const hipGraphNode_t *deps,
                              size_t ndeps, hipGraphNodeParams *p) {
    switch (p->type) {
    case hipGraphNodeTypeKernel:
        return hipGraphAddKernelNode(out, graph, deps, ndeps, &p->kernel);
    case hipGraphNodeTypeMemcpy:
        return hipGraphAddMemcpyNode(out, graph, deps, ndeps, &p->memcpy.copyParams);
    case hipGraphNodeTypeMemset:
        return hipGraphAddMemsetNode(out, graph, deps, ndeps, &p->memset);
    case hipGraphNodeTypeHost:
        if (!p->host.fn) return hipErrorInvalidValue;
        return hipGraphAddHostNode(out, graph, deps, ndeps, &p->host);
    case hipGraphNodeTypeGraph:
        if (!p->graph.graph) return hipErrorInvalidValue;
        return hipGraphAddChildGraphNode(out, graph, deps, ndeps, p->graph.graph);
    case hipGraphNodeTypeWaitEvent:
        if (!p->eventWait.event) return hipErrorInvalidValue;
        return hipGraphAddEventWaitNode(out, graph, deps, ndeps, p->eventWait.event);
    case hipGraphNodeTypeEventRecord:
        if (!p->eventRecord.event) return hipErrorInvalidValue;
        return hipGraphAddEventRecordNode(out, graph, deps, ndeps, p->eventRecord.event);
    case hipGraphNodeTypeExtSemaphoreSignal:
    case hipGraphNodeTypeExtSemaphoreWait:
        return hipErrorNotSupported;
    case hipGraphNodeTypeMemAlloc: {
        /* checked on a copy: a refused one leaves the caller's dptr alone */
        hipMemAllocNodeParams copy = p->alloc;
        hipError_t status = hip_make_memalloc_node(graph, deps, ndeps, &copy, out);
        if (status == hipSuccess) p->alloc.dptr = copy.dptr;
        return status;
    }
    case hipGraphNodeTypeMemFree:
        return hip_make_memfree_node(graph, deps, ndeps, p->free.dptr, false, out);
    default:
        return hipErrorInvalidValue;
    }
}

hipError_t hipGraphAddNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                           const hipGraphNode_t *pDependencies, size_t numDependencies,
                           hipGraphNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!pGraphNode || !graph || (numDependencies > 0 && !pDependencies) || !nodeParams)
        HIP_RETURN(hipErrorInvalidValue);
    if (!hip_graph_valid(graph)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(add_generic(pGraphNode, graph, pDependencies, numDependencies, nodeParams));
}
#endif

#ifdef ROCPY_HAVE_hipGraphNodeSetParams
/* ChildGraphNode::SetParams(Graph*): the new graph's nodes' parameters onto
 * the child's, position by position (creation order).  hipamd reads past
 * the child's nodes and casts across types; the stub refuses another count
 * or type with hipErrorInvalidValue. */
static hipError_t child_set(hipGraph_t child, hipGraph_t from) {
    if (!from || !hip_graph_valid(from)) return hipErrorInvalidValue;
    if (from == child) return hipSuccess;
    pthread_mutex_lock(&from->lock);
    pthread_mutex_lock(&child->lock);
    hipError_t status = from->nodes.n == child->nodes.n ? hipSuccess : hipErrorInvalidValue;
    for (size_t i = 0; status == hipSuccess && i < from->nodes.n; i++) {
        const struct hipGraphNode *src = from->nodes.v[i], *dst = child->nodes.v[i];
        if (src->type != dst->type || src->copy1d != dst->copy1d) status = hipErrorInvalidValue;
    }
    for (size_t i = 0; status == hipSuccess && i < from->nodes.n; i++) {
        struct hipGraphNode *src = from->nodes.v[i], *dst = child->nodes.v[i];
        struct hipGraphNode fresh = {0};
        status = hip_node_copy_params(src, &fresh);
        if (status != hipSuccess) break;
        hip_node_release_params(dst);
        dst->p = fresh.p;
        dst->kparams = src->kparams;
    }
    pthread_mutex_unlock(&child->lock);
    pthread_mutex_unlock(&from->lock);
    return status;
}

/* ihipGraphNodeSetParams over the graph's node (exec NULL) or exec's copy */
static hipError_t set_generic(hipGraphExec_t exec, hipGraphNode_t node, hipGraphNodeParams *p) {
    switch (p->type) {
    case hipGraphNodeTypeKernel:
        return exec ? hipGraphExecKernelNodeSetParams(exec, node, &p->kernel)
                    : hipGraphKernelNodeSetParams(node, &p->kernel);
    case hipGraphNodeTypeMemcpy:
        return exec ? hipGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams)
                    : hipGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case hipGraphNodeTypeMemset:
        return exec ? hipGraphExecMemsetNodeSetParams(exec, node, &p->memset)
                    : hipGraphMemsetNodeSetParams(node, &p->memset);
    case hipGraphNodeTypeHost:
        return exec ? hipGraphExecHostNodeSetParams(exec, node, &p->host)
                    : hipGraphHostNodeSetParams(node, &p->host);
    case hipGraphNodeTypeGraph: {
        struct hipGraphNode *n = exec ? hip_exec_node(exec, node) : node;
        if (!n || n->type != hipGraphNodeTypeGraph) return hipErrorInvalidValue;
        return child_set(n->p.child, p->graph.graph);
    }
    case hipGraphNodeTypeWaitEvent:
        return exec ? hipGraphExecEventWaitNodeSetEvent(exec, node, p->eventWait.event)
                    : hipGraphEventWaitNodeSetEvent(node, p->eventWait.event);
    case hipGraphNodeTypeEventRecord:
        return exec ? hipGraphExecEventRecordNodeSetEvent(exec, node, p->eventRecord.event)
                    : hipGraphEventRecordNodeSetEvent(node, p->eventRecord.event);
    case hipGraphNodeTypeExtSemaphoreSignal:
    case hipGraphNodeTypeExtSemaphoreWait:
    case hipGraphNodeTypeMemAlloc:
    case hipGraphNodeTypeMemFree:
        return hipErrorNotSupported;
    default:
        return hipErrorInvalidValue;
    }
}

hipError_t hipGraphNodeSetParams(hipGraphNode_t node, hipGraphNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!node || !nodeParams || !hip_node_valid(node)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(set_generic(NULL, node, nodeParams));
}
#endif

#ifdef ROCPY_HAVE_hipGraphExecNodeSetParams
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t graphExec, hipGraphNode_t node,
                                     hipGraphNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!node || !nodeParams || !graphExec || !hip_node_valid(node)) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_exec_valid(graphExec) || !hip_exec_node(graphExec, node))     /* GetClonedNode */
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(set_generic(graphExec, node, nodeParams));
}
#endif
