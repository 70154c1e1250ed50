/* Executable graphs (hipamd hip_graph.cpp: hipGraphInstantiate,
 * hipGraphLaunch).  Instantiation copies the nodes' parameters in a
 * topological order (creation order among ready nodes); a launch enqueues
 * them in that order on the stream, which keeps every dependency. */
#include <string.h>

#include "hip_graph.h"

struct hipGraphExec {
    uint32_t magic;
    const struct ihipGraph *graph;    /* made from (never dereferenced) */
    size_t n;
    struct hipGraphNode *nodes;       /* parameter copies, topological order */
    unsigned long long flags;         /* as instantiated (hipGraphExecGetFlags) */
    hip_user_refs_t *user_objects;    /* its clone's references (hipamd clonedGraph_) */
    _Atomic(hip_op_t *) last;         /* the last launch's last op (a reference), or NULL */
    bool launched;                    /* hipamd GraphExec::repeatLaunch_ */
};

static hip_registry_t execs = HIP_REGISTRY_INIT;

static void exec_free(struct hipGraphExec *x) {
    hip_op_t *last = atomic_exchange(&x->last, NULL);
    if (last) {
        /* no destructor runs while a launch is in flight */
        if (x->user_objects) hip_op_wait(last);
        hip_op_unref(last);
    }
    hip_user_refs_free(&x->user_objects);
    for (size_t i = 0; i < x->n; i++) hip_node_release_params(&x->nodes[i]);
    free(x->nodes);
    x->magic = 0;
    free(x);
}

/* Kahn's algorithm; false if the graph has a cycle. */
bool hip_graph_order(struct ihipGraph *g, struct hipGraphNode **order) {
    size_t n = g->nodes.n, done = 0;
    size_t *pending = calloc(n ? n : 1, sizeof *pending);
    bool *taken = calloc(n ? n : 1, sizeof *taken);
    bool ok = pending && taken;
    for (size_t i = 0; ok && i < n; i++) pending[i] = ((struct hipGraphNode *)g->nodes.v[i])->deps.n;
    while (ok && done < n) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++)
            if (!taken[i] && pending[i] == 0) pick = i;
        if (pick == n) {
            ok = false;
            break;
        }
        struct hipGraphNode *node = g->nodes.v[pick];
        taken[pick] = true;
        order[done++] = node;
        for (size_t j = 0; j < node->outs.n; j++)
            for (size_t k = 0; k < n; k++)
                if (g->nodes.v[k] == node->outs.v[j]) pending[k]--;
    }
    free(pending);
    free(taken);
    return ok;
}

static hipError_t instantiate(hipGraphExec_t *pExec, hipGraph_t graph, unsigned long long flags) {
    if (!pExec || !graph || !hip_graph_valid(graph)) return hipErrorInvalidValue;
    struct hipGraphExec *x = calloc(1, sizeof *x);
    if (!x) return hipErrorOutOfMemory;
    pthread_mutex_lock(&graph->lock);
    size_t n = graph->nodes.n;
    struct hipGraphNode **order = malloc((n ? n : 1) * sizeof *order);
    x->nodes = calloc(n ? n : 1, sizeof *x->nodes);
    hipError_t status = order && x->nodes ? hipSuccess : hipErrorOutOfMemory;
    if (status == hipSuccess) status = hip_memnode_instantiate_check(graph);
    if (status == hipSuccess && !hip_graph_order(graph, order)) status = hipErrorInvalidValue;
    for (size_t i = 0; status == hipSuccess && i < n; i++) {
        status = hip_node_copy_params(order[i], &x->nodes[i]);
        x->nodes[i].index = order[i]->index;
        if (status == hipSuccess) x->n++;
    }
    if (status == hipSuccess) status = hip_user_refs_clone(graph->user_objects, &x->user_objects);
    if (status == hipSuccess) graph->instantiated = true;
    pthread_mutex_unlock(&graph->lock);
    free(order);
    x->magic = HIP_MAGIC_EXEC;
    x->graph = graph;
    x->flags = flags;
    if (status == hipSuccess && !hip_registry_add(&execs, x)) status = hipErrorOutOfMemory;
    if (status != hipSuccess) {
        exec_free(x);
        return status;
    }
    *pExec = x;
    return hipSuccess;
}

hipError_t hip_graph_instantiate(hipGraphExec_t *out, hipGraph_t graph, unsigned long long flags) {
    return instantiate(out, graph, flags);
}

bool hip_exec_valid(hipGraphExec_t exec) { return hip_registry_contains(&execs, exec); }

unsigned long long hip_exec_flags(hipGraphExec_t exec) { return exec->flags; }

struct hipGraphNode *hip_exec_node(hipGraphExec_t x, hipGraphNode_t node) {
    if (!hip_exec_valid(x) || !hip_node_valid(node) || node->graph != x->graph) return NULL;
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].index == node->index) return &x->nodes[i];
    return NULL;
}

hipError_t hipGraphInstantiate(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                               hipGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize) {
    (void)pErrorNode;
    (void)pLogBuffer;
    (void)bufferSize;
    HIP_INIT_API();
    HIP_RETURN(instantiate(pGraphExec, graph, 0));
}

hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t *pGraphExec, hipGraph_t graph,
                                        unsigned long long flags) {
    HIP_INIT_API();
    if (!pGraphExec || !graph) HIP_RETURN(hipErrorInvalidValue);
    if (flags != 0 && flags != hipGraphInstantiateFlagAutoFreeOnLaunch)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(instantiate(pGraphExec, graph, flags));
}

hipError_t hipGraphExecDestroy(hipGraphExec_t graphExec) {
    HIP_INIT_API();
    if (!graphExec || !hip_registry_remove(&execs, graphExec)) HIP_RETURN(hipErrorInvalidValue);
    exec_free(graphExec);
    HIP_RETURN(hipSuccess);
}

/* ---- launch ----------------------------------------------------------- */

static void run_host(hip_op_t *op) {
    hipHostNodeParams *p = HIP_OP_DATA(op, hipHostNodeParams);
    p->fn(p->userData);
}

static hipError_t enqueue_node(hip_stream_t *s, struct hipGraphNode *n);

/* a child graph node: its graph's nodes in order, on the same stream (which
 * keeps the parent's dependencies around the whole child) */
static hipError_t enqueue_child(hip_stream_t *s, hipGraph_t child) {
    pthread_mutex_lock(&child->lock);
    size_t n = child->nodes.n;
    struct hipGraphNode **order = malloc((n ? n : 1) * sizeof *order);
    hipError_t status = !order ? hipErrorOutOfMemory
                       : hip_graph_order(child, order) ? hipSuccess : hipErrorInvalidValue;
    for (size_t i = 0; status == hipSuccess && i < n; i++) status = enqueue_node(s, order[i]);
    pthread_mutex_unlock(&child->lock);
    free(order);
    return status;
}

static hipError_t enqueue_node(hip_stream_t *s, struct hipGraphNode *n) {
    hip_op_t *op = NULL;
    hipError_t status = hipSuccess;
    struct ihipEvent_t *e;
    if (n->disabled) return hipSuccess;   /* its place in the stream order keeps the edges */
    switch (n->type) {
    case hipGraphNodeTypeKernel:
        return hip_launch_enqueue(s, &n->p.kernel);
    case hipGraphNodeTypeMemcpy:
        if (n->drv) {
            status = hip_drv_memcpy_node_op(&n->p.drvcopy, &op);
            break;
        }
        if (!n->copy1d) {
            status = hip_memcpy3d_op(&n->p.copy, &op);
            break;
        }
        /* fall through: a 1D copy node */
#ifdef ROCPY_HAVE_hipGraphNodeTypeMemcpy1D
    case hipGraphNodeTypeMemcpy1D:
#endif
        if (n->p.copy1d.count) op = hip_copy_op(n->p.copy1d.dst, n->p.copy1d.src, n->p.copy1d.count);
        if (n->p.copy1d.count && !op) status = hipErrorOutOfMemory;
        break;
    case hipGraphNodeTypeMemset: {
        const hipMemsetParams *m = &n->p.memset;
        if (m->width) op = hip_fill_op(m->dst, m->value, m->elementSize, m->width, m->height, m->pitch);
        if (m->width && !op) status = hipErrorOutOfMemory;
        break;
    }
    case hipGraphNodeTypeHost:
        op = hip_op_new(run_host, sizeof(hipHostNodeParams));
        if (!op) return hipErrorOutOfMemory;
        *HIP_OP_DATA(op, hipHostNodeParams) = n->p.host;
        break;
    case hipGraphNodeTypeEventRecord:
        if (hip_event_resolve(n->p.event, &e) == hipSuccess) return hip_event_record_on(e, s);
        break;
    case hipGraphNodeTypeWaitEvent:
        if (hip_event_resolve(n->p.event, &e) == hipSuccess) hip_event_wait_on(e, s);
        break;
    case hipGraphNodeTypeGraph:
        return enqueue_child(s, n->p.child);
#ifdef ROCPY_STUB_BATCH_NODES
    case hipGraphNodeTypeBatchMemOp:
        return hip_batch_node_enqueue(s, &n->p.batch);
#endif
    default:
        return hip_memnode_enqueue(s, n);
    }
    if (op) hip_stream_submit(s, op);
    return status;
}

/* A launch the stub cannot run fails before anything is enqueued. */
static hipError_t check_kernels(const struct hipGraphExec *x) {
    for (size_t i = 0; i < x->n; i++) {
        rocpy_stub_kernel_fn fn;
        void *user;
        if (x->nodes[i].type == hipGraphNodeTypeKernel &&
            !stub_kernel_lookup(x->nodes[i].p.kernel.name, x->nodes[i].p.kernel.cpu, &fn, &user))
            return hipErrorLaunchFailure;
    }
    return hipSuccess;
}

static hipError_t launch(hipGraphExec_t graphExec, hipStream_t stream) {
    if (!graphExec || !hip_stream_valid(stream) || !hip_registry_contains(&execs, graphExec))
        return hipErrorInvalidValue;
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    /* launching into a capture would need child-graph nodes: not simulated */
    if (capturing) {
        hip_capture_invalidate(s);
        return hipErrorStreamCaptureUnsupported;
    }
    status = check_kernels(graphExec);
    if (status == hipSuccess)
        status = hip_memnode_launch_check(graphExec->nodes, graphExec->n, graphExec->flags, graphExec->launched);
    if (status == hipSuccess) graphExec->launched = true;
    for (size_t i = 0; status == hipSuccess && i < graphExec->n; i++)
        status = enqueue_node(s, &graphExec->nodes[i]);
    hip_op_t *prev = atomic_exchange(&graphExec->last, hip_stream_last(s));
    if (prev) hip_op_unref(prev);
    return status;
}

hipError_t hipGraphLaunch(hipGraphExec_t graphExec, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(launch(graphExec, stream));
}

/* ---- update ----------------------------------------------------------- */

/* hipamd's hipGraphExecUpdate: hGraph's nodes in order against the
 * executable graph's, position by position: another count is a topology
 * change, another type at a position a node type change (that node named);
 * otherwise every node's parameters replace the instantiated ones. */
static hipError_t exec_update(hipGraphExec_t x, hipGraph_t g, hipGraphNode_t *error_node,
                              hipGraphExecUpdateResult *result) {
    pthread_mutex_lock(&g->lock);
    size_t n = g->nodes.n;
    struct hipGraphNode **order = malloc((n ? n : 1) * sizeof *order);
    hipError_t status = hipSuccess;
    if (!order) {
        status = hipErrorOutOfMemory;
    } else if (!hip_graph_order(g, order) || n != x->n) {
        *result = hipGraphExecUpdateErrorTopologyChanged;
        status = hipErrorGraphExecUpdateFailure;
    }
    for (size_t i = 0; status == hipSuccess && i < n; i++) {
        if (order[i]->type != x->nodes[i].type) {
            *error_node = order[i];
            *result = hipGraphExecUpdateErrorNodeTypeChanged;
            status = hipErrorGraphExecUpdateFailure;
        }
    }
    for (size_t i = 0; status == hipSuccess && i < n; i++) {
        struct hipGraphNode fresh = {0};
        if (hip_node_copy_params(order[i], &fresh) != hipSuccess) {
            *error_node = order[i];
            *result = hipGraphExecUpdateErrorNotSupported;
            status = hipErrorGraphExecUpdateFailure;
            break;
        }
        hip_node_release_params(&x->nodes[i]);
        x->nodes[i].p = fresh.p;
        x->nodes[i].drv = fresh.drv;
    }
    if (status == hipSuccess) *result = hipGraphExecUpdateSuccess;
    pthread_mutex_unlock(&g->lock);
    free(order);
    return status;
}

hipError_t hipGraphExecUpdate(hipGraphExec_t hGraphExec, hipGraph_t hGraph,
                              hipGraphNode_t *hErrorNode_out,
                              hipGraphExecUpdateResult *updateResult_out) {
    HIP_INIT_API();
    if (!hGraphExec || !hGraph || !hErrorNode_out || !updateResult_out)
        HIP_RETURN(hipErrorInvalidValue);
    if (!hip_exec_valid(hGraphExec) || !hip_graph_valid(hGraph)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(exec_update(hGraphExec, hGraph, hErrorNode_out, updateResult_out));
}

/* hipamd 5.2 checks the new child against the whole executable graph with
 * hipGraphExecUpdate (so only a child of the executable graph's shape
 * passes, and its parameters are applied), then gives the instantiated
 * child node a clone of childGraph; the node's own graph is hipErrorUnknown */
hipError_t hipGraphExecChildGraphNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t node,
                                               hipGraph_t childGraph) {
    HIP_INIT_API();
    if (!hGraphExec || !node || !childGraph || !hip_graph_valid(childGraph))
        HIP_RETURN(hipErrorInvalidValue);
    if (!hip_node_valid(node)) HIP_RETURN(hipErrorInvalidValue);
    if (childGraph == node->graph) HIP_RETURN(hipErrorUnknown);
    if (!hip_exec_valid(hGraphExec)) HIP_RETURN(hipErrorInvalidValue);
    hipGraphNode_t error_node;
    hipGraphExecUpdateResult result;
    HIP_RETURN_ONFAIL(exec_update(hGraphExec, childGraph, &error_node, &result));
    struct hipGraphNode *copy = hip_exec_node(hGraphExec, node);
    if (!copy || copy->type != hipGraphNodeTypeGraph) HIP_RETURN(hipErrorInvalidValue);
    hipGraph_t clone;
    HIP_RETURN_ONFAIL(hip_graph_clone(childGraph, &clone));
    hip_graph_free(copy->p.child);
    copy->p.child = clone;
    HIP_RETURN(hipSuccess);
}
