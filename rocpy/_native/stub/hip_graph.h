/* Graph and node layouts shared by hip_graph.c (building) and
 * hip_graph_exec.c (instantiating and launching). */
#ifndef ROCPY_STUB_HIP_GRAPH_H
#define ROCPY_STUB_HIP_GRAPH_H

#include "hip_internal.h"

/* Batch memory operation graph nodes (hip_batch_memop.c) where the headers have all
 * they need: the stream operation, the node's parameters and its node type (a HIP
 * between releases, October 2024's amd-staging, declares the first two without the
 * third). */
#if defined(ROCPY_HAVE_hipStreamBatchMemOp) && defined(ROCPY_HAVE_hipBatchMemOpNodeParams) && \
    defined(ROCPY_HAVE_hipGraphNodeTypeBatchMemOp)
#define ROCPY_STUB_BATCH_NODES 1
#endif

struct hipGraphNode {
    uint32_t magic;
    hipGraphNodeType type;
    bool copy1d;                      /* p holds copy1d (the type alone does not say, see below) */
    bool disabled;                    /* an executable graph's copy: hipGraphNodeSetEnabled(0) */
    struct ihipGraph *graph;
    size_t index;                     /* creation order in the graph */
    hip_ptrvec_t deps;                /* nodes this one waits for */
    hip_ptrvec_t outs;                /* nodes waiting for this one */
    hipKernelNodeParams kparams;      /* as given, for hipGraphKernelNodeGetParams */
    hipKernelNodeAttrValue kattr;     /* kernel nodes: the attribute set (hip_graph_kattr.c) */
    int kattr_id;                     /* which one (0: none; hipamd's kernelAttrInUse_) */
    bool drv;                         /* p.drvcopy: a hipDrvGraphAddMemcpyNode node (hip_graph_drvnode.c) */
    union {
        hip_launch_t kernel;
        hipMemcpy3DParms copy;
        hip_memcpy1d_params_t copy1d;
        hipMemsetParams memset;
        hipHostNodeParams host;
        hipEvent_t event;
        hipGraph_t child;             /* the node's own clone of the child graph */
        HIP_MEMCPY3D drvcopy;         /* drv: as given (hipDrvGraphMemcpyNodeGetParams) */
#ifdef ROCPY_STUB_BATCH_NODES
        hipBatchMemOpNodeParams batch;  /* hip_batch_memop.c: paramArray is the caller's */
#endif
        struct hip_graph_alloc *alloc; /* a memory allocation node's (hip_graph_memnode.c) */
        void *free_ptr;               /* a memory free node's */
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
    const struct ihipGraph *cloned_from;   /* hipGraphClone's original (never dereferenced) */
    pthread_mutex_t lock;
    hip_ptrvec_t nodes;
    size_t next_index;
    hip_user_refs_t *user_objects;    /* references it owns (hip_user_object.c) */
    bool instantiated;                /* hipamd Graph::graphInstantiated_ */
};

/* Node kinds made in other files: a zeroed node of that type (link it with
 * hip_graph_add_node, hip_internal.h: hipamd's ihipGraphAddNode checks). */
struct hipGraphNode *hip_node_alloc(hipGraphNodeType type);
/* Copy a node's parameters (deep for kernels); edges are not copied. */
hipError_t hip_node_copy_params(const struct hipGraphNode *src, struct hipGraphNode *dst);
void hip_node_release_params(struct hipGraphNode *n);
bool hip_node_valid(hipGraphNode_t n);
/* Validate kernel node parameters and pack the launch (hipGraphAddKernelNode
 * and hipGraph*KernelNodeSetParams). */
hipError_t hip_kernel_node_prepare(const hipKernelNodeParams *p, hip_launch_t *out);
/* hipGraphAdd*Node's validation of memcpy / memcpy1D / memset parameters. */
hipError_t hip_memcpy_node_check(const hipMemcpy3DParms *p);
hipError_t hip_memcpy1d_node_check(const hip_memcpy1d_params_t *p);
hipError_t hip_memset_node_check(const hipMemsetParams *p);
/* The instantiated copy of `node` in exec (NULL if exec was not made from
 * node's graph or the node was added after). */
struct hipGraphNode *hip_exec_node(hipGraphExec_t exec, hipGraphNode_t node);
bool hip_exec_valid(hipGraphExec_t exec);
/* The flags exec was instantiated with. */
unsigned long long hip_exec_flags(hipGraphExec_t exec);
/* A copy of g: its nodes (with their creation indices), parameters and edges. */
hipError_t hip_graph_clone(hipGraph_t g, hipGraph_t *out);
/* g's nodes in a topological order (creation order among ready nodes);
 * false on a cycle.  order holds g->nodes.n entries; g locked by the caller. */
bool hip_graph_order(struct ihipGraph *g, struct hipGraphNode **order);
/* A drv memcpy node's copy as an op (NULL op for an empty extent). */
hipError_t hip_drv_memcpy_node_op(const HIP_MEMCPY3D *c, hip_op_t **out);
#ifdef ROCPY_STUB_BATCH_NODES
/* Enqueue a batch memory operation node's operations (hip_batch_memop.c). */
hipError_t hip_batch_node_enqueue(hip_stream_t *s, const hipBatchMemOpNodeParams *p);
#endif

/* Memory allocation and free nodes (hip_graph_memnode.c): the executable
 * graph's copy shares the allocation; release drops that reference. */
void hip_memnode_copy(const struct hipGraphNode *src, struct hipGraphNode *dst);
void hip_memnode_release(struct hipGraphNode *n);
/* hipGraphNodeTypeMemAlloc / MemFree nodes at launch: map or unmap the
 * allocation in the stream's order. */
hipError_t hip_memnode_enqueue(hip_stream_t *s, struct hipGraphNode *n);
/* ihipGraphInstantiate's refusal of a second instantiation of a graph with
 * memory nodes (hipErrorNotSupported); g locked by the caller. */
hipError_t hip_memnode_instantiate_check(const struct ihipGraph *g);
/* GraphExec::Run's checks and hipGraphInstantiateFlagAutoFreeOnLaunch. */
hipError_t hip_memnode_launch_check(const struct hipGraphNode *nodes, size_t n,
                                    unsigned long long flags, bool repeat);
bool hip_node_is_memnode(const struct hipGraphNode *n);
/* hipGraphAddMemAllocNode's node after its API checks (params->dptr set);
 * hipGraphAddMemFreeNode's (named: the 6.3 alloc-node rule applies). */
hipError_t hip_make_memalloc_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                  void *params, hipGraphNode_t *out);
hipError_t hip_make_memfree_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                 void *ptr, bool named, hipGraphNode_t *out);
/* Whether g holds a memory node (hipGraphClone, hipGraphDestroyNode refuse them). */
bool hip_graph_has_memnodes(struct ihipGraph *g);
/* Instantiate graph with flags (hipGraphInstantiateWithFlags' checks done). */
hipError_t hip_graph_instantiate(hipGraphExec_t *out, hipGraph_t graph, unsigned long long flags);

#endif
