/* Batch memory operations (hipamd hip_stream_ops.cpp ihipBatchMemOperation,
 * hip_graph.cpp hipGraphAddBatchMemOpNode and its Get/Set/Exec calls,
 * hipGraphBatchMemOpNode in hip_graph_internal.hpp; ROCm 6.4 on).
 *
 * Each wait or write runs as hipStreamWaitValue / hipStreamWriteValue's op
 * (hip_stream_value.c) with the whole word as mask, in array order: ROCclr's
 * batch kernel runs the operations concurrently, one work-item each, which
 * a serial run in order is one schedule of (rocm-systems later runs them in
 * order, as CUDA specifies).  A barrier or remote-write flush has nothing to
 * do on the stub's coherent memory.  An address the stub does not track is
 * refused (hipErrorInvalidValue) when the operations are enqueued, where the
 * GPU would fault.
 *
 * hipStreamBatchMemOp: up to 7.2 hipamd's operation check is always true
 * (`op == hipStreamMemOpBarrier || hipStreamMemOpFlushRemoteWrites`), so
 * every batch is hipErrorInvalidValue (STUB_RULE_BATCH_MEM_OP_CHECKS_EACH_OP).
 * A graph node keeps the caller's paramArray pointer, as hipamd's
 * hipGraphBatchMemOpNode does (the array must outlive the graph; rocm-systems
 * later deep-copies it), and the stub reads the array at each launch. */
#include "hip_graph.h"

#ifdef ROCPY_HAVE_hipStreamBatchMemOp

#define BATCH_MAX 256u

static bool is_write(hipStreamBatchMemOpType t) {
    return t == hipStreamMemOpWriteValue32 || t == hipStreamMemOpWriteValue64;
}

static bool is_wait(hipStreamBatchMemOpType t) {
    return t == hipStreamMemOpWaitValue32 || t == hipStreamMemOpWaitValue64;
}

/* One operation's op, or NULL for one with nothing to do. */
static hipError_t op_of(const hipStreamBatchMemOpParams *p, hip_op_t **out) {
    *out = NULL;
    hipStreamBatchMemOpType t = p->operation;
    bool wide = t == hipStreamMemOpWaitValue64 || t == hipStreamMemOpWriteValue64;
    if (is_wait(t))
        return hip_value_op(true, (void *)p->waitValue.address,
                            wide ? p->waitValue.value64 : p->waitValue.value, ~0ull,
                            p->waitValue.flags, wide ? 8 : 4, out);
    if (is_write(t))
        return hip_value_op(false, (void *)p->writeValue.address,
                            wide ? p->writeValue.value64 : p->writeValue.value, ~0ull, 0,
                            wide ? 8 : 4, out);
    if (t == hipStreamMemOpBarrier || t == hipStreamMemOpFlushRemoteWrites) return hipSuccess;
    return hipErrorInvalidValue;
}

/* Every operation's op made before any is submitted, so a refused one leaves
 * the stream untouched. */
static hipError_t enqueue_ops(hip_stream_t *s, unsigned count,
                              const hipStreamBatchMemOpParams *params) {
    hip_op_t **ops = calloc(count ? count : 1, sizeof *ops);
    if (!ops) return hipErrorOutOfMemory;
    hipError_t status = hipSuccess;
    for (unsigned i = 0; i < count && status == hipSuccess; i++) status = op_of(&params[i], &ops[i]);
    for (unsigned i = 0; i < count; i++) {
        if (!ops[i]) continue;
        if (status == hipSuccess)
            hip_stream_submit(s, ops[i]);
        else
            hip_op_unref(ops[i]);
    }
    free(ops);
    return status;
}

hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count,
                               hipStreamBatchMemOpParams *paramArray, unsigned int flags) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    if (!paramArray || flags != 0 || count == 0 || count > BATCH_MAX)
        HIP_RETURN(hipErrorInvalidValue);
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    for (unsigned i = 0; i < count; i++) {
        hipStreamBatchMemOpType t = paramArray[i].operation;
        if (!stub_rule(STUB_RULE_BATCH_MEM_OP_CHECKS_EACH_OP) || t == hipStreamMemOpBarrier ||
            t == hipStreamMemOpFlushRemoteWrites)
            HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(enqueue_ops(s, count, paramArray));
}

/* ---- graph nodes ------------------------------------------------------ */

#ifdef ROCPY_STUB_BATCH_NODES   /* hip_graph.h: the headers have the node type too */

hipError_t hip_batch_node_enqueue(hip_stream_t *s, const hipBatchMemOpNodeParams *p) {
    return enqueue_ops(s, p->count, p->paramArray);
}

/* hipamd's check of the node's parameters; it returns without HIP_RETURN,
 * so the thread's last error is not set */
static bool params_ok(const hipBatchMemOpNodeParams *p) {
    return p->count > 0 && p->count <= BATCH_MAX && p->paramArray && p->flags == 0 && p->ctx;
}

static struct hipGraphNode *batch_node(struct hipGraphNode *n) {
    return n && n->type == hipGraphNodeTypeBatchMemOp ? n : NULL;
}

hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                     const hipGraphNode_t *dependencies, size_t numDependencies,
                                     const hipBatchMemOpNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!phGraphNode || !hGraph || (numDependencies > 0 && !dependencies) || !nodeParams)
        HIP_RETURN(hipErrorInvalidValue);
    if (!params_ok(nodeParams)) return hipErrorInvalidValue;
    struct hipGraphNode *n = hip_node_alloc(hipGraphNodeTypeBatchMemOp);
    if (!n) HIP_RETURN(hipErrorOutOfMemory);
    n->p.batch = *nodeParams;
    HIP_RETURN(hip_graph_add_node(hGraph, dependencies, numDependencies, n, phGraphNode));
}

/* hipamd casts the node unchecked; the stub refuses one of another type */
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams_out) {
    HIP_INIT_API();
    if (!hip_node_valid(hNode) || !nodeParams_out) HIP_RETURN(hipErrorInvalidValue);
    struct hipGraphNode *n = batch_node(hNode);
    if (!n) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&n->graph->lock);
    *nodeParams_out = n->p.batch;
    pthread_mutex_unlock(&n->graph->lock);
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t hNode,
                                           hipBatchMemOpNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!hip_node_valid(hNode) || !nodeParams) HIP_RETURN(hipErrorInvalidValue);
    if (!params_ok(nodeParams)) return hipErrorInvalidValue;
    struct hipGraphNode *n = batch_node(hNode);
    if (!n) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&n->graph->lock);
    n->p.batch = *nodeParams;
    pthread_mutex_unlock(&n->graph->lock);
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t hGraphExec, hipGraphNode_t hNode,
                                               const hipBatchMemOpNodeParams *nodeParams) {
    HIP_INIT_API();
    if (!hGraphExec || !hNode || !hip_exec_valid(hGraphExec) || !hip_node_valid(hNode) ||
        !nodeParams)
        HIP_RETURN(hipErrorInvalidValue);
    if (!params_ok(nodeParams)) return hipErrorInvalidValue;
    struct hipGraphNode *copy = batch_node(hip_exec_node(hGraphExec, hNode));
    if (!copy) HIP_RETURN(hipErrorInvalidValue);
    copy->p.batch = *nodeParams;
    HIP_RETURN(hipSuccess);
}

#endif  /* ROCPY_STUB_BATCH_NODES */
#endif  /* ROCPY_HAVE_hipStreamBatchMemOp */
