/* Graphs and their nodes (hipamd hip_graph.cpp, hip_graph_internal.*): a
 * graph owns its nodes; a node knows its dependencies and dependents.
 * Parameters are validated when a node is added, as hipamd does, and kernel
 * arguments are packed then, so later changes to the caller's argument
 * values do not reach the graph.  Handles are validated through registries:
 * a destroyed graph is hipErrorIllegalState for hipGraphDestroy, and
 * hipErrorInvalidValue elsewhere. */
#include <string.h>

#include "hip_graph.h"

static hip_registry_t graphs = HIP_REGISTRY_INIT;
static hip_registry_t nodes = HIP_REGISTRY_INIT;

bool hip_graph_valid(hipGraph_t g) { return hip_registry_contains(&graphs, g); }
bool hip_node_valid(hipGraphNode_t n) { return hip_registry_contains(&nodes, n); }

hipError_t hip_graph_new(hipGraph_t *out) {
    struct ihipGraph *g = calloc(1, sizeof *g);
    if (!g) return hipErrorOutOfMemory;
    g->magic = HIP_MAGIC_GRAPH;
    pthread_mutex_init(&g->lock, NULL);
    if (!hip_registry_add(&graphs, g)) {
        free(g);
        return hipErrorOutOfMemory;
    }
    *out = g;
    return hipSuccess;
}

void hip_node_release_params(struct hipGraphNode *n) {
    if (n->type == hipGraphNodeTypeKernel) hip_launch_release(&n->p.kernel);
    if (n->type == hipGraphNodeTypeGraph) hip_graph_free(n->p.child);
    hip_memnode_release(n);
}

/* kernels deep (their packed arguments), child graphs as clones */
hipError_t hip_node_copy_params(const struct hipGraphNode *src, struct hipGraphNode *dst) {
    dst->type = src->type;
    dst->copy1d = src->copy1d;
    dst->drv = src->drv;
    dst->kattr = src->kattr;          /* hipamd's GraphKernelNode copy: CopyAttr */
    dst->kattr_id = src->kattr_id;
    if (src->type == hipGraphNodeTypeKernel) return hip_launch_copy(&src->p.kernel, &dst->p.kernel);
    if (src->type == hipGraphNodeTypeGraph) return hip_graph_clone(src->p.child, &dst->p.child);
    hip_memnode_copy(src, dst);
    return hipSuccess;
}

static void node_free(struct hipGraphNode *n) {
    hip_registry_remove(&nodes, n);
    hip_node_release_params(n);
    hip_ptrvec_free(&n->deps);
    hip_ptrvec_free(&n->outs);
    n->magic = 0;
    free(n);
}

void hip_graph_free(hipGraph_t g) {
    if (!g || !hip_registry_remove(&graphs, g)) return;
    for (size_t i = 0; i < g->nodes.n; i++) node_free(g->nodes.v[i]);
    hip_user_refs_free(&g->user_objects);
    hip_ptrvec_free(&g->nodes);
    pthread_mutex_destroy(&g->lock);
    g->magic = 0;
    free(g);
}

size_t hip_graph_leaves(hipGraph_t g, hipGraphNode_t **out) {
    pthread_mutex_lock(&g->lock);
    hipGraphNode_t *v = malloc((g->nodes.n ? g->nodes.n : 1) * sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v && i < g->nodes.n; i++) {
        struct hipGraphNode *node = g->nodes.v[i];
        if (!node->outs.n) v[n++] = node;
    }
    pthread_mutex_unlock(&g->lock);
    *out = v;
    return n;
}

/* Link a new node under its dependencies: each must be a live node of g,
 * listed once (ROCm/clr's ihipGraphAddNode). */
static hipError_t add_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                           struct hipGraphNode *n, hipGraphNode_t *out) {
    if (!g || !hip_graph_valid(g) || (ndeps && !deps)) return hipErrorInvalidValue;
    pthread_mutex_lock(&g->lock);
    hipError_t status = hipSuccess;
    for (size_t i = 0; i < ndeps && status == hipSuccess; i++) {
        if (!hip_node_valid(deps[i]) || deps[i]->graph != g) status = hipErrorInvalidValue;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i]) status = hipErrorInvalidValue;
    }
    bool ok = status == hipSuccess && hip_ptrvec_push(&g->nodes, n);
    for (size_t i = 0; ok && i < ndeps; i++)
        ok = hip_ptrvec_push(&deps[i]->outs, n) && hip_ptrvec_push(&n->deps, deps[i]);
    if (status == hipSuccess && !ok) status = hipErrorOutOfMemory;
    if (status == hipSuccess) {
        n->magic = HIP_MAGIC_NODE;
        n->graph = g;
        n->index = g->next_index++;
        if (!hip_registry_add(&nodes, n)) status = hipErrorOutOfMemory;
    }
    if (status != hipSuccess) {
        for (size_t i = 0; i < ndeps; i++) hip_ptrvec_remove(&deps[i]->outs, n);
        hip_ptrvec_remove(&g->nodes, n);
    }
    pthread_mutex_unlock(&g->lock);
    if (status != hipSuccess) {
        hip_node_release_params(n);
        hip_ptrvec_free(&n->deps);
        free(n);
        return status;
    }
    *out = n;
    return hipSuccess;
}

hipError_t hip_graph_add_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                              struct hipGraphNode *n, hipGraphNode_t *out) {
    return add_node(g, deps, ndeps, n, out);
}

static struct hipGraphNode *node_new(hipGraphNodeType type) {
    struct hipGraphNode *n = calloc(1, sizeof *n);
    if (n) n->type = type;
    return n;
}

struct hipGraphNode *hip_node_alloc(hipGraphNodeType type) { return node_new(type); }

hipError_t hip_kernel_node_prepare(const hipKernelNodeParams *p, hip_launch_t *out) {
    if (!p || !p->func) return hipErrorInvalidValue;
    if (hip_function_resolve((hipFunction_t)p->func, NULL) != hipSuccess) return hipErrorInvalidDeviceFunction;
    uint64_t gx = (uint64_t)p->gridDim.x * p->blockDim.x, gy = (uint64_t)p->gridDim.y * p->blockDim.y,
             gz = (uint64_t)p->gridDim.z * p->blockDim.z;
    if (gx > UINT32_MAX || gy > UINT32_MAX || gz > UINT32_MAX) return hipErrorInvalidConfiguration;
    /* 5.2 wants exactly one of kernelParams and extra, even without arguments */
    if ((!p->kernelParams && !p->extra) || (p->kernelParams && p->extra)) return hipErrorInvalidValue;
    uint32_t global[3] = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz};
    uint32_t block[3] = {p->blockDim.x, p->blockDim.y, p->blockDim.z};
    return hip_launch_prepare((hipFunction_t)p->func, global, block, p->sharedMemBytes,
                              p->kernelParams, p->extra, hip_current_dev()->id, out);
}

hipError_t hip_make_kernel_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                hipGraphNode_t *out) {
    const hipKernelNodeParams *p = arg;
    if (!p || !p->func || !g || !hip_graph_valid(g)) return hipErrorInvalidValue;
    struct hipGraphNode *n = node_new(hipGraphNodeTypeKernel);
    if (!n) return hipErrorOutOfMemory;
    hipError_t status = hip_kernel_node_prepare(p, &n->p.kernel);
    if (status != hipSuccess) {
        free(n);
        return status;
    }
    n->kparams = *p;
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_make_launch_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                hipGraphNode_t *out) {
    struct hipGraphNode *n = node_new(hipGraphNodeTypeKernel);
    if (!n) return hipErrorOutOfMemory;
    if (hip_launch_copy(arg, &n->p.kernel) != hipSuccess) {
        free(n);
        return hipErrorOutOfMemory;
    }
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_memcpy_node_check(const hipMemcpy3DParms *p) {
    if (!p) return hipErrorInvalidValue;
    hip_op_t *op;
    hipError_t status = hip_memcpy3d_op(p, &op);
    if (status == hipSuccess) hip_op_unref(op);
    return status;
}

hipError_t hip_make_memcpy_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                hipGraphNode_t *out) {
    const hipMemcpy3DParms *p = arg;
    hipError_t status = hip_memcpy_node_check(p);
    if (status != hipSuccess) return status;
    struct hipGraphNode *n = node_new(hipGraphNodeTypeMemcpy);
    if (!n) return hipErrorOutOfMemory;
    n->p.copy = *p;
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_memcpy1d_node_check(const hip_memcpy1d_params_t *p) {
    hipError_t status = hip_memcpy_validate(p->dst, p->src, p->count);
    if (status != hipSuccess) return status;
    if (!stub_mem_find(p->dst, NULL) && !stub_mem_find(p->src, NULL) &&
        p->kind != hipMemcpyHostToHost && p->kind != hipMemcpyDefault)
        return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hip_make_memcpy1d_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                  void *arg, hipGraphNode_t *out) {
    const hip_memcpy1d_params_t *p = arg;
    hipError_t status = hip_memcpy1d_node_check(p);
    if (status != hipSuccess) return status;
    struct hipGraphNode *n = node_new(HIP_GRAPH_NODE_TYPE_MEMCPY1D);
    if (!n) return hipErrorOutOfMemory;
    n->copy1d = true;
    n->p.copy1d = *p;
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_memset_node_check(const hipMemsetParams *p) {
    if (!p || p->height == 0) return hipErrorInvalidValue;
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) return hipErrorInvalidValue;
    return hip_memset_validate(p->dst, p->elementSize, p->width, p->height, p->pitch);
}

hipError_t hip_make_memset_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                hipGraphNode_t *out) {
    const hipMemsetParams *p = arg;
    hipError_t status = hip_memset_node_check(p);
    if (status != hipSuccess) return status;
    struct hipGraphNode *n = node_new(hipGraphNodeTypeMemset);
    if (!n) return hipErrorOutOfMemory;
    n->p.memset = *p;
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_make_host_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                              hipGraphNode_t *out) {
    const hipHostNodeParams *p = arg;
    if (!p || !p->fn) return hipErrorInvalidValue;
    struct hipGraphNode *n = node_new(hipGraphNodeTypeHost);
    if (!n) return hipErrorOutOfMemory;
    n->p.host = *p;
    return add_node(g, deps, ndeps, n, out);
}

hipError_t hip_make_empty_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                               hipGraphNode_t *out) {
    (void)arg;
    struct hipGraphNode *n = node_new(hipGraphNodeTypeEmpty);
    if (!n) return hipErrorOutOfMemory;
    return add_node(g, deps, ndeps, n, out);
}

static hipError_t make_event_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                  hipEvent_t event, hipGraphNodeType type, hipGraphNode_t *out) {
    struct ihipEvent_t *e;
    if (hip_event_resolve(event, &e) != hipSuccess) return hipErrorInvalidValue;
    struct hipGraphNode *n = node_new(type);
    if (!n) return hipErrorOutOfMemory;
    n->p.event = event;
    return add_node(g, deps, ndeps, n, out);
}

static hipError_t make_record_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                   hipGraphNode_t *out) {
    return make_event_node(g, deps, ndeps, arg, hipGraphNodeTypeEventRecord, out);
}

static hipError_t make_wait_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps, void *arg,
                                 hipGraphNode_t *out) {
    return make_event_node(g, deps, ndeps, arg, hipGraphNodeTypeWaitEvent, out);
}

/* ---- API ------------------------------------------------------------- */

hipError_t hipGraphCreate(hipGraph_t *pGraph, unsigned int flags) {
    HIP_INIT_API();
    if (!pGraph || flags != 0) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_graph_new(pGraph));
}

hipError_t hipGraphDestroy(hipGraph_t graph) {
    HIP_INIT_API();
    if (!graph) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_graph_valid(graph)) HIP_RETURN(hipErrorIllegalState);
    hip_graph_free(graph);
    HIP_RETURN(hipSuccess);
}

/* hipGraphAdd*Node: the checks they share, then the node's maker (which
 * refuses NULL parameters itself). */
static hipError_t add_api(hipGraphNode_t *pnode, hipGraph_t graph, const hipGraphNode_t *deps,
                          size_t ndeps, hip_node_maker make, const void *params) {
    HIP_INIT_API();
    if (!pnode || !graph || (ndeps > 0 && !deps)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(make(graph, deps, ndeps, (void *)params, pnode));
}

hipError_t hipGraphAddKernelNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                 const hipGraphNode_t *pDependencies, size_t numDependencies,
                                 const hipKernelNodeParams *pNodeParams) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_kernel_node, pNodeParams);
}

hipError_t hipGraphAddMemcpyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                 const hipGraphNode_t *pDependencies, size_t numDependencies,
                                 const hipMemcpy3DParms *pCopyParams) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_memcpy_node, pCopyParams);
}

hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                   const hipGraphNode_t *pDependencies, size_t numDependencies,
                                   void *dst, const void *src, size_t count, hipMemcpyKind kind) {
    hip_memcpy1d_params_t p = {dst, src, count, kind};
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_memcpy1d_node, &p);
}

hipError_t hipGraphAddMemsetNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                 const hipGraphNode_t *pDependencies, size_t numDependencies,
                                 const hipMemsetParams *pMemsetParams) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_memset_node, pMemsetParams);
}

hipError_t hipGraphAddHostNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                               const hipGraphNode_t *pDependencies, size_t numDependencies,
                               const hipHostNodeParams *pNodeParams) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_host_node, pNodeParams);
}

hipError_t hipGraphAddEmptyNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                const hipGraphNode_t *pDependencies, size_t numDependencies) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, hip_make_empty_node, NULL);
}

hipError_t hipGraphAddEventRecordNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                      const hipGraphNode_t *pDependencies, size_t numDependencies,
                                      hipEvent_t event) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, make_record_node, event);
}

hipError_t hipGraphAddEventWaitNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                    const hipGraphNode_t *pDependencies, size_t numDependencies,
                                    hipEvent_t event) {
    return add_api(pGraphNode, graph, pDependencies, numDependencies, make_wait_node, event);
}

/* hipamd's list convention: NULL array -> count; a short array gets the
 * first ones; a long one is padded with NULL and the count corrected. */
static hipError_t list_nodes(hipGraph_t graph, hipGraphNode_t *out, size_t *num, bool roots) {
    if (!graph || !num || !hip_graph_valid(graph)) return hipErrorInvalidValue;
    pthread_mutex_lock(&graph->lock);
    size_t n = 0;
    for (size_t i = 0; i < graph->nodes.n; i++) {
        struct hipGraphNode *node = graph->nodes.v[i];
        if (roots && node->deps.n) continue;
        if (out && n < *num) out[n] = node;
        n++;
    }
    pthread_mutex_unlock(&graph->lock);
    if (out)
        for (size_t i = n; i < *num; i++) out[i] = NULL;
    if (!out || *num > n) *num = n;
    return hipSuccess;
}

hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t *nodes_out, size_t *numNodes) {
    HIP_INIT_API();
    HIP_RETURN(list_nodes(graph, nodes_out, numNodes, false));
}

hipError_t hipGraphGetRootNodes(hipGraph_t graph, hipGraphNode_t *pRootNodes,
                                size_t *pNumRootNodes) {
    HIP_INIT_API();
    HIP_RETURN(list_nodes(graph, pRootNodes, pNumRootNodes, true));
}

static hipError_t list_edges(hipGraphNode_t node, hipGraphNode_t *out, size_t *num, bool deps) {
    if (!node || !num || !hip_node_valid(node)) return hipErrorInvalidValue;
    pthread_mutex_lock(&node->graph->lock);
    const hip_ptrvec_t *v = deps ? &node->deps : &node->outs;
    size_t n = v->n;
    for (size_t i = 0; out && i < *num; i++) out[i] = i < n ? v->v[i] : NULL;
    pthread_mutex_unlock(&node->graph->lock);
    if (!out || *num > n) *num = n;
    return hipSuccess;
}

hipError_t hipGraphNodeGetDependencies(hipGraphNode_t node, hipGraphNode_t *pDependencies,
                                       size_t *pNumDependencies) {
    HIP_INIT_API();
    HIP_RETURN(list_edges(node, pDependencies, pNumDependencies, true));
}

hipError_t hipGraphNodeGetDependentNodes(hipGraphNode_t node, hipGraphNode_t *pDependentNodes,
                                         size_t *pNumDependentNodes) {
    HIP_INIT_API();
    HIP_RETURN(list_edges(node, pDependentNodes, pNumDependentNodes, false));
}

hipError_t hipGraphNodeGetType(hipGraphNode_t node, hipGraphNodeType *pType) {
    HIP_INIT_API();
    if (!node || !pType || !hip_node_valid(node)) HIP_RETURN(hipErrorInvalidValue);
    *pType = node->type;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t *from,
                                   const hipGraphNode_t *to, size_t numDependencies) {
    HIP_INIT_API();
    if (!graph || !hip_graph_valid(graph)) HIP_RETURN(hipErrorInvalidValue);
    if (numDependencies == 0) HIP_RETURN(hipSuccess);
    if (!from || !to) HIP_RETURN(hipErrorInvalidValue);
    for (size_t i = 0; i < numDependencies; i++) {
        if (!hip_node_valid(from[i]) || !hip_node_valid(to[i]) || from[i] == to[i] ||
            from[i]->graph != graph || to[i]->graph != graph)
            HIP_RETURN(hipErrorInvalidValue);
    }
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&graph->lock);
    for (size_t i = 0; i < numDependencies && status == hipSuccess; i++) {
        if (hip_ptrvec_contains(&from[i]->outs, to[i]))
            status = hipErrorInvalidValue;
        else if (!hip_ptrvec_push(&from[i]->outs, to[i]) || !hip_ptrvec_push(&to[i]->deps, from[i]))
            status = hipErrorOutOfMemory;
    }
    pthread_mutex_unlock(&graph->lock);
    HIP_RETURN(status);
}

hipError_t hipGraphDestroyNode(hipGraphNode_t node) {
    HIP_INIT_API();
    if (!node || !hip_node_valid(node)) HIP_RETURN(hipErrorInvalidValue);
    if (stub_rule(STUB_RULE_GRAPH_MEM_NODES_PINNED) && hip_node_is_memnode(node)) HIP_RETURN(hipErrorNotSupported);
    struct ihipGraph *g = node->graph;
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < node->deps.n; i++)
        hip_ptrvec_remove(&((struct hipGraphNode *)node->deps.v[i])->outs, node);
    for (size_t i = 0; i < node->outs.n; i++)
        hip_ptrvec_remove(&((struct hipGraphNode *)node->outs.v[i])->deps, node);
    hip_ptrvec_remove(&g->nodes, node);
    pthread_mutex_unlock(&g->lock);
    node_free(node);
    HIP_RETURN(hipSuccess);
}
