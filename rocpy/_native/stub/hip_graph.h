/* Graph and node layouts shared by hip_graph.c (building) and
 * hip_graph_exec.c (instantiating and launching). */
#ifndef ROCPY_STUB_HIP_GRAPH_H
#define ROCPY_STUB_HIP_GRAPH_H

#include "hip_internal.h"

struct hipGraphNode {
    uint32_t magic;
    hipGraphNodeType type;
    bool copy1d;                      /* p holds copy1d (the type alone does not say, see below) */
    struct ihipGraph *graph;
    size_t index;                     /* creation order in the graph */
    hip_ptrvec_t deps;                /* nodes this one waits for */
    hip_ptrvec_t outs;                /* nodes waiting for this one */
    union {
        hip_launch_t kernel;
        hipMemcpy3DParms copy;
        hip_memcpy1d_params_t copy1d;
        hipMemsetParams memset;
        hipHostNodeParams host;
        hipEvent_t event;
    } p;
};

/* The type of a 1D copy node: hipGraphNodeTypeMemcpy1D in hipamd 5.2
 * (hip_graph_internal.hpp: hipGraphMemcpyNode1D), hipGraphNodeTypeMemcpy
 * since 5.6, whose headers no longer have the 1D type. */
#ifdef ROCPY_HAVE_hipGraphNodeTypeMemcpy1D
#define HIP_GRAPH_NODE_TYPE_MEMCPY1D hipGraphNodeTypeMemcpy1D
#else
#define HIP_GRAPH_NODE_TYPE_MEMCPY1D hipGraphNodeTypeMemcpy
#endif

struct ihipGraph {
    uint32_t magic;
    pthread_mutex_t lock;
    hip_ptrvec_t nodes;
    size_t next_index;
};

/* Copy a node's parameters (deep for kernels); edges are not copied. */
hipError_t hip_node_copy_params(const struct hipGraphNode *src, struct hipGraphNode *dst);
void hip_node_release_params(struct hipGraphNode *n);
bool hip_node_valid(hipGraphNode_t n);

#endif
