/* Node parameters after creation, edges, clones (hipamd hip_graph.cpp at
 * rocm-5.2.3: hipGraph*NodeGet/SetParams, hipGraphExec*NodeSetParams,
 * hipGraph*Event*Node*, hipGraphGetEdges, hipGraphRemoveDependencies,
 * hipGraphClone, hipGraphNodeFindInClone, memcpy nodes from and to symbols).
 *
 * A node's parameters are validated as when it was added; a node of the
 * wrong type is hipErrorInvalidValue.  Setting a node of a graph changes the
 * graph (later instantiations), setting it in an executable graph changes
 * that copy only (hipamd's exec node clones).  A child graph node holds a
 * clone of its graph (deep: clones of clones for nested ones).
 * hipGraphExecUpdate and hipGraphExecChildGraphNodeSetParams live with the
 * executable graph (hip_graph_exec.c). */
#include <string.h>

#include "hip_graph.h"

/* the node, if it is a live node of that type (its graph locked by callers
 * that change it) */
static struct hipGraphNode *typed(hipGraphNode_t node, hipGraphNodeType type) {
    return node && hip_node_valid(node) && node->type == type ? node : NULL;
}

static struct hipGraphNode *exec_typed(hipGraphExec_t x, hipGraphNode_t node,
                                       hipGraphNodeType type) {
    if (!typed(node, type)) return NULL;
    struct hipGraphNode *copy = hip_exec_node(x, node);
    return copy && copy->type == type ? copy : NULL;
}

/* 1-D copy nodes: their own type in 5.2's headers, hipGraphNodeTypeMemcpy with
 * the copy1d mark where the headers lack hipGraphNodeTypeMemcpy1D (hip_graph.h);
 * a 1-D node is never taken for a 3-D one, whichever the headers */
static struct hipGraphNode *copy1d_node(struct hipGraphNode *n) {
    return n && n->copy1d ? n : NULL;
}

static struct hipGraphNode *copy3d_node(struct hipGraphNode *n) {
    return n && !n->copy1d && !n->drv ? n : NULL;   /* drv: hip_graph_drvnode.c */
}

/* ---- kernel nodes ----------------------------------------------------- */

hipError_t hipGraphKernelNodeGetParams(hipGraphNode_t node, hipKernelNodeParams *pNodeParams) {
    HIP_INIT_API();
    struct hipGraphNode *n = typed(node, hipGraphNodeTypeKernel);
    if (!n || !pNodeParams) HIP_RETURN(hipErrorInvalidValue);
    *pNodeParams = n->kparams;
    HIP_RETURN(hipSuccess);
}

static hipError_t set_kernel(struct hipGraphNode *n, const hipKernelNodeParams *p, bool keep) {
    if (!n || !p) return hipErrorInvalidValue;
    hip_launch_t l;
    hipError_t status = hip_kernel_node_prepare(p, &l);
    if (status != hipSuccess) return status;
    hip_launch_release(&n->p.kernel);
    n->p.kernel = l;
    if (keep) n->kparams = *p;
    return hipSuccess;
}

hipError_t hipGraphKernelNodeSetParams(hipGraphNode_t node, const hipKernelNodeParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_kernel(typed(node, hipGraphNodeTypeKernel), pNodeParams, true));
}

hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                           const hipKernelNodeParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_kernel(exec_typed(hGraphExec, node, hipGraphNodeTypeKernel), pNodeParams, false));
}

/* ---- copies ----------------------------------------------------------- */

hipError_t hipGraphMemcpyNodeGetParams(hipGraphNode_t node, hipMemcpy3DParms *pNodeParams) {
    HIP_INIT_API();
    struct hipGraphNode *n = copy3d_node(typed(node, hipGraphNodeTypeMemcpy));
    if (!n || !pNodeParams) HIP_RETURN(hipErrorInvalidValue);
    *pNodeParams = n->p.copy;
    HIP_RETURN(hipSuccess);
}

static hipError_t set_copy(struct hipGraphNode *n, const hipMemcpy3DParms *p) {
    if (!n || !p) return hipErrorInvalidValue;
    HIP_RETURN_ONFAIL(hip_memcpy_node_check(p));
    n->p.copy = *p;
    return hipSuccess;
}

hipError_t hipGraphMemcpyNodeSetParams(hipGraphNode_t node, const hipMemcpy3DParms *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_copy(copy3d_node(typed(node, hipGraphNodeTypeMemcpy)), pNodeParams));
}

hipError_t hipGraphExecMemcpyNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                           hipMemcpy3DParms *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_copy(copy3d_node(exec_typed(hGraphExec, node, hipGraphNodeTypeMemcpy)), pNodeParams));
}

static hipError_t set_copy1d(struct hipGraphNode *n, void *dst, const void *src, size_t count,
                             hipMemcpyKind kind) {
    if (!n) return hipErrorInvalidValue;
    hip_memcpy1d_params_t p = {dst, src, count, kind};
    HIP_RETURN_ONFAIL(hip_memcpy1d_node_check(&p));
    n->p.copy1d = p;
    return hipSuccess;
}

hipError_t hipGraphMemcpyNodeSetParams1D(hipGraphNode_t node, void *dst, const void *src,
                                         size_t count, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_copy1d(copy1d_node(typed(node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), dst, src, count, kind));
}

hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                             void *dst, const void *src, size_t count,
                                             hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_copy1d(copy1d_node(exec_typed(hGraphExec, node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), dst, src, count,
                          kind));
}

/* copies from and to symbols are 1-D copies of the symbol's device memory
 * (hipamd's hipGraphMemcpyNodeFromSymbol resolves the symbol when added) */
static hipError_t symbol_params(bool to_symbol, const void *symbol, void *host, size_t count,
                                size_t offset, hipMemcpyKind kind, hip_memcpy1d_params_t *out) {
    char *at;
    HIP_RETURN_ONFAIL(hip_symbol_resolve(symbol, count, offset, &at));
    *out = (hip_memcpy1d_params_t){to_symbol ? at : host, to_symbol ? host : at, count, kind};
    return hip_memcpy1d_node_check(out);
}

hipError_t hipGraphAddMemcpyNodeFromSymbol(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                           const hipGraphNode_t *pDependencies,
                                           size_t numDependencies, void *dst, const void *symbol,
                                           size_t count, size_t offset, hipMemcpyKind kind) {
    HIP_INIT_API();
    if (!pGraphNode || !graph || (numDependencies && !pDependencies)) HIP_RETURN(hipErrorInvalidValue);
    hip_memcpy1d_params_t p;
    HIP_RETURN_ONFAIL(symbol_params(false, symbol, dst, count, offset, kind, &p));
    HIP_RETURN(hip_make_memcpy1d_node(graph, pDependencies, numDependencies, &p, pGraphNode));
}

hipError_t hipGraphAddMemcpyNodeToSymbol(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                         const hipGraphNode_t *pDependencies,
                                         size_t numDependencies, const void *symbol,
                                         const void *src, size_t count, size_t offset,
                                         hipMemcpyKind kind) {
    HIP_INIT_API();
    if (!pGraphNode || !graph || (numDependencies && !pDependencies)) HIP_RETURN(hipErrorInvalidValue);
    hip_memcpy1d_params_t p;
    HIP_RETURN_ONFAIL(symbol_params(true, symbol, (void *)src, count, offset, kind, &p));
    HIP_RETURN(hip_make_memcpy1d_node(graph, pDependencies, numDependencies, &p, pGraphNode));
}

static hipError_t set_symbol_copy(struct hipGraphNode *n, bool to_symbol, const void *symbol,
                                  void *host, size_t count, size_t offset, hipMemcpyKind kind) {
    if (!n) return hipErrorInvalidValue;
    hip_memcpy1d_params_t p;
    HIP_RETURN_ONFAIL(symbol_params(to_symbol, symbol, host, count, offset, kind, &p));
    n->p.copy1d = p;
    return hipSuccess;
}

hipError_t hipGraphMemcpyNodeSetParamsFromSymbol(hipGraphNode_t node, void *dst,
                                                 const void *symbol, size_t count, size_t offset,
                                                 hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_symbol_copy(copy1d_node(typed(node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), false, symbol, dst, count,
                               offset, kind));
}

hipError_t hipGraphMemcpyNodeSetParamsToSymbol(hipGraphNode_t node, const void *symbol,
                                               const void *src, size_t count, size_t offset,
                                               hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_symbol_copy(copy1d_node(typed(node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), true, symbol, (void *)src,
                               count, offset, kind));
}

hipError_t hipGraphExecMemcpyNodeSetParamsFromSymbol(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                                     void *dst, const void *symbol, size_t count,
                                                     size_t offset, hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_symbol_copy(copy1d_node(exec_typed(hGraphExec, node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), false,
                               symbol, dst, count, offset, kind));
}

hipError_t hipGraphExecMemcpyNodeSetParamsToSymbol(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                                   const void *symbol, const void *src,
                                                   size_t count, size_t offset,
                                                   hipMemcpyKind kind) {
    HIP_INIT_API();
    HIP_RETURN(set_symbol_copy(copy1d_node(exec_typed(hGraphExec, node, HIP_GRAPH_NODE_TYPE_MEMCPY1D)), true,
                               symbol, (void *)src, count, offset, kind));
}

/* ---- fills and host functions ------------------------------------------ */

hipError_t hipGraphMemsetNodeGetParams(hipGraphNode_t node, hipMemsetParams *pNodeParams) {
    HIP_INIT_API();
    struct hipGraphNode *n = typed(node, hipGraphNodeTypeMemset);
    if (!n || !pNodeParams) HIP_RETURN(hipErrorInvalidValue);
    *pNodeParams = n->p.memset;
    HIP_RETURN(hipSuccess);
}

static hipError_t set_memset(struct hipGraphNode *n, const hipMemsetParams *p) {
    if (!n || !p) return hipErrorInvalidValue;
    HIP_RETURN_ONFAIL(hip_memset_node_check(p));
    n->p.memset = *p;
    return hipSuccess;
}

hipError_t hipGraphMemsetNodeSetParams(hipGraphNode_t node, const hipMemsetParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_memset(typed(node, hipGraphNodeTypeMemset), pNodeParams));
}

hipError_t hipGraphExecMemsetNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                           const hipMemsetParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_memset(exec_typed(hGraphExec, node, hipGraphNodeTypeMemset), pNodeParams));
}

hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node, hipHostNodeParams *pNodeParams) {
    HIP_INIT_API();
    struct hipGraphNode *n = typed(node, hipGraphNodeTypeHost);
    if (!n || !pNodeParams) HIP_RETURN(hipErrorInvalidValue);
    *pNodeParams = n->p.host;
    HIP_RETURN(hipSuccess);
}

/* hipamd 5.2 refuses a null userData in both setters (hip_graph.cpp); 5.5 takes it */
static hipError_t set_host(struct hipGraphNode *n, const hipHostNodeParams *p) {
    if (!n || !p || !p->fn) return hipErrorInvalidValue;
    if (!p->userData && !stub_rule(STUB_RULE_HOST_NODE_PARAMS_NULL_USER_DATA)) return hipErrorInvalidValue;
    n->p.host = *p;
    return hipSuccess;
}

hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node, const hipHostNodeParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_host(typed(node, hipGraphNodeTypeHost), pNodeParams));
}

hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                         const hipHostNodeParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN(set_host(exec_typed(hGraphExec, node, hipGraphNodeTypeHost), pNodeParams));
}

/* ---- event nodes ------------------------------------------------------ */

static hipError_t get_event(hipGraphNode_t node, hipGraphNodeType type, hipEvent_t *out) {
    struct hipGraphNode *n = typed(node, type);
    if (!n || !out) return hipErrorInvalidValue;
    *out = n->p.event;
    return hipSuccess;
}

static hipError_t set_event(struct hipGraphNode *n, hipEvent_t event) {
    struct ihipEvent_t *e;
    if (!n || hip_event_resolve(event, &e) != hipSuccess) return hipErrorInvalidValue;
    n->p.event = event;
    return hipSuccess;
}

hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out) {
    HIP_INIT_API();
    HIP_RETURN(get_event(node, hipGraphNodeTypeEventRecord, event_out));
}

hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out) {
    HIP_INIT_API();
    HIP_RETURN(get_event(node, hipGraphNodeTypeWaitEvent, event_out));
}

hipError_t hipGraphEventRecordNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(typed(node, hipGraphNodeTypeEventRecord), event));
}

hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(typed(node, hipGraphNodeTypeWaitEvent), event));
}

hipError_t hipGraphExecEventRecordNodeSetEvent(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                               hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(exec_typed(hGraphExec, hNode, hipGraphNodeTypeEventRecord), event));
}

hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                             hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(exec_typed(hGraphExec, hNode, hipGraphNodeTypeWaitEvent), event));
}

/* ---- edges ------------------------------------------------------------ */

/* hipamd's list convention (hipGraphGetNodes): NULL arrays -> the count; a
 * long pair of arrays is padded with NULL and the count corrected */
hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t *from, hipGraphNode_t *to,
                            size_t *numEdges) {
    HIP_INIT_API();
    if (!graph || !numEdges || !hip_graph_valid(graph) || (!from != !to))
        HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&graph->lock);
    size_t n = 0;
    for (size_t i = 0; i < graph->nodes.n; i++) {
        struct hipGraphNode *node = graph->nodes.v[i];
        for (size_t j = 0; j < node->outs.n; j++, n++) {
            if (from && n < *numEdges) {
                from[n] = node;
                to[n] = node->outs.v[j];
            }
        }
    }
    pthread_mutex_unlock(&graph->lock);
    if (from)
        for (size_t i = n; i < *numEdges; i++) from[i] = to[i] = NULL;
    if (!from || *numEdges > n) *numEdges = n;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t *from,
                                      const hipGraphNode_t *to, size_t numDependencies) {
    HIP_INIT_API();
    bool empty_ok = stub_rule(STUB_RULE_GRAPH_REMOVE_DEPENDENCIES_CHECKED);
    if (!graph || ((numDependencies > 0 || !empty_ok) && (!from || !to)) || !hip_graph_valid(graph))
        HIP_RETURN(hipErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++) {
        /* 5.2 does not look at the nodes' graph: the stub needs them in this
         * one to lock it, so it refuses others in every release */
        if (!hip_node_valid(from[i]) || !hip_node_valid(to[i]) || from[i]->graph != graph ||
            to[i]->graph != graph)
            HIP_RETURN(hipErrorInvalidValue);
    }
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&graph->lock);
    for (size_t i = 0; i < numDependencies; i++) {
        /* GraphNode::RemoveUpdateEdge: false (InvalidValue) for an edge that is not
         * there; the edges before it in the list stay removed */
        if (!hip_ptrvec_contains(&from[i]->outs, to[i])) {
            status = hipErrorInvalidValue;
            break;
        }
        hip_ptrvec_remove(&from[i]->outs, to[i]);
        hip_ptrvec_remove(&to[i]->deps, from[i]);
    }
    pthread_mutex_unlock(&graph->lock);
    HIP_RETURN(status);
}

/* ---- clones ----------------------------------------------------------- */

/* The clone's nodes keep their originals' creation index, which is how
 * hipGraphNodeFindInClone finds them. */
hipError_t hip_graph_clone(hipGraph_t originalGraph, hipGraph_t *out) {
    hipGraph_t g;
    hipError_t status = hip_graph_new(&g);
    if (status != hipSuccess) return status;
    g->cloned_from = originalGraph;
    pthread_mutex_lock(&originalGraph->lock);
    size_t n = originalGraph->nodes.n;
    hipGraphNode_t *made = calloc(n ? n : 1, sizeof *made);
    status = made ? hipSuccess : hipErrorOutOfMemory;
    for (size_t i = 0; status == hipSuccess && i < n; i++) {
        struct hipGraphNode *src = originalGraph->nodes.v[i];
        status = hip_make_empty_node(g, NULL, 0, NULL, &made[i]);
        if (status == hipSuccess) status = hip_node_copy_params(src, made[i]);
        if (status == hipSuccess) {
            made[i]->kparams = src->kparams;
            made[i]->index = src->index;
        }
    }
    /* the edges, between the clones (the clone is not shared yet) */
    for (size_t i = 0; status == hipSuccess && i < n; i++) {
        struct hipGraphNode *src = originalGraph->nodes.v[i];
        for (size_t j = 0; status == hipSuccess && j < src->outs.n; j++) {
            size_t k = 0;
            while (k < n && originalGraph->nodes.v[k] != src->outs.v[j]) k++;
            if (k == n || !hip_ptrvec_push(&made[i]->outs, made[k]) ||
                !hip_ptrvec_push(&made[k]->deps, made[i]))
                status = hipErrorOutOfMemory;
        }
    }
    if (status == hipSuccess) g->next_index = originalGraph->next_index;
    if (status == hipSuccess) status = hip_user_refs_clone(originalGraph->user_objects, &g->user_objects);
    pthread_mutex_unlock(&originalGraph->lock);
    free(made);
    if (status != hipSuccess) {
        hip_graph_free(g);
        return status;
    }
    *out = g;
    return hipSuccess;
}

/* The clone's nodes keep their originals' creation index, which is how
 * hipGraphNodeFindInClone finds them. */
hipError_t hipGraphClone(hipGraph_t *pGraphClone, hipGraph_t originalGraph) {
    HIP_INIT_API();
    if (!pGraphClone || !originalGraph || !hip_graph_valid(originalGraph))
        HIP_RETURN(hipErrorInvalidValue);
    if (stub_rule(STUB_RULE_GRAPH_MEM_NODES_PINNED) && hip_graph_has_memnodes(originalGraph)) HIP_RETURN(hipErrorNotSupported);
    HIP_RETURN(hip_graph_clone(originalGraph, pGraphClone));
}

/* ---- child graphs ----------------------------------------------------- */

/* the node holds its own clone of childGraph (hipChildGraphNode); a graph
 * that contains itself is refused (a cycle the launch could not end) */
hipError_t hipGraphAddChildGraphNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                     const hipGraphNode_t *pDependencies, size_t numDependencies,
                                     hipGraph_t childGraph) {
    HIP_INIT_API();
    if (!pGraphNode || !graph || (numDependencies > 0 && !pDependencies) || !childGraph ||
        !hip_graph_valid(childGraph) || childGraph == graph)
        HIP_RETURN(hipErrorInvalidValue);
    hipGraphNode_t n;
    HIP_RETURN_ONFAIL(hip_make_empty_node(graph, pDependencies, numDependencies, NULL, &n));
    hipGraph_t clone;
    hipError_t status = hip_graph_clone(childGraph, &clone);
    if (status != hipSuccess) {
        hipGraphDestroyNode(n);
        HIP_RETURN(status);
    }
    n->type = hipGraphNodeTypeGraph;
    n->p.child = clone;
    *pGraphNode = n;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t *pGraph) {
    HIP_INIT_API();
    struct hipGraphNode *n = typed(node, hipGraphNodeTypeGraph);
    if (!n || !pGraph) HIP_RETURN(hipErrorInvalidValue);
    *pGraph = n->p.child;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphNodeFindInClone(hipGraphNode_t *pNode, hipGraphNode_t originalNode,
                                   hipGraph_t clonedGraph) {
    HIP_INIT_API();
    if (!pNode || !originalNode || !clonedGraph || !hip_node_valid(originalNode) ||
        !hip_graph_valid(clonedGraph) || clonedGraph->cloned_from != originalNode->graph)
        HIP_RETURN(hipErrorInvalidValue);
    hipError_t status = hipErrorInvalidValue;
    pthread_mutex_lock(&clonedGraph->lock);
    for (size_t i = 0; i < clonedGraph->nodes.n; i++) {
        struct hipGraphNode *c = clonedGraph->nodes.v[i];
        if (c->index == originalNode->index) {
            *pNode = c;
            status = hipSuccess;
            break;
        }
    }
    pthread_mutex_unlock(&clonedGraph->lock);
    HIP_RETURN(status);
}
