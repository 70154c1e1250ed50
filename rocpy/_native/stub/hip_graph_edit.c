/* Graphs after their nodes were added: the edge list, removing edges, and
 * the parameters of event and host nodes (hipamd/clr hip_graph.cpp).
 *
 * clr's hipGraphHostNodeGet/SetParams reinterpret any valid node as a host
 * node; the stub refuses a node of another type with hipErrorInvalidValue
 * instead of reading or writing another node's parameters. */
#include "hip_graph.h"

/* Graph::GetEdges: every node in creation order, each with its dependents. */
hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t *from, hipGraphNode_t *to,
                            size_t *numEdges) {
    HIP_INIT_API();
    if (!graph || !numEdges || !from != !to || !hip_graph_valid(graph))
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

static bool is_node(hipGraphNode_t node, hipGraphNodeType type) {
    return node && hip_node_valid(node) && node->type == type;
}

static hipError_t get_event(hipGraphNode_t node, hipEvent_t *event_out, hipGraphNodeType type) {
    if (!is_node(node, type) || !event_out) return hipErrorInvalidValue;
    *event_out = node->p.event;
    return hipSuccess;
}

static hipError_t set_event(hipGraphNode_t node, hipEvent_t event, hipGraphNodeType type) {
    if (!is_node(node, type) || !event) return hipErrorInvalidValue;
    struct ihipEvent_t *e;
    if (hip_event_resolve(event, &e) != hipSuccess) return hipErrorInvalidValue;
    pthread_mutex_lock(&node->graph->lock);
    node->p.event = event;
    pthread_mutex_unlock(&node->graph->lock);
    return hipSuccess;
}

hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out) {
    HIP_INIT_API();
    HIP_RETURN(get_event(node, event_out, hipGraphNodeTypeEventRecord));
}

hipError_t hipGraphEventRecordNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(node, event, hipGraphNodeTypeEventRecord));
}

hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t node, hipEvent_t *event_out) {
    HIP_INIT_API();
    HIP_RETURN(get_event(node, event_out, hipGraphNodeTypeWaitEvent));
}

hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
    HIP_INIT_API();
    HIP_RETURN(set_event(node, event, hipGraphNodeTypeWaitEvent));
}

hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node, hipHostNodeParams *pNodeParams) {
    HIP_INIT_API();
    if (!is_node(node, hipGraphNodeTypeHost) || !pNodeParams) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&node->graph->lock);
    *pNodeParams = node->p.host;
    pthread_mutex_unlock(&node->graph->lock);
    HIP_RETURN(hipSuccess);
}

hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node, const hipHostNodeParams *pNodeParams) {
    HIP_INIT_API();
    if (!pNodeParams || !pNodeParams->fn || !is_node(node, hipGraphNodeTypeHost))
        HIP_RETURN(hipErrorInvalidValue);
    if (!pNodeParams->userData && !stub_rule(STUB_RULE_HOST_NODE_PARAMS_NULL_USER_DATA))
        HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&node->graph->lock);
    node->p.host = *pNodeParams;
    pthread_mutex_unlock(&node->graph->lock);
    HIP_RETURN(hipSuccess);
}
