/* Graph memory nodes (clr hipamd/src/hip_graph.cpp hipGraphAddMemAllocNode,
 * hipGraphAddMemFreeNode, hipGraphMemAllocNodeGetParams,
 * hipGraphMemFreeNodeGetParams, hipDrvGraphAddMemFreeNode; the nodes are
 * hip_graph_internal.hpp's GraphMemAllocNode / GraphMemFreeNode, as of
 * rocm-6.2.0 and the clr of Oct 2024).
 *
 * hipamd (HIP_MEM_POOL_USE_VM, on by default) reserves a virtual address when
 * the alloc node is created, hands it back in params.dptr, and maps physical
 * memory of the device's graph memory pool at it when the node runs
 * (VirtualMemAllocNode::submit); the free node unmaps it and gives the
 * memory back to the pool (VirtualMemFreeNode::submit); the address lives
 * as long as the node or a copy of it (va_ is shared by clones).  The stub
 * backs the address with device memory from creation on (a CPU cannot map
 * pages on demand, and the data is kept while unmapped, where a GPU's would
 * be undefined), and moves the graph pool's figures when the nodes run:
 * used grows by the size at the alloc and shrinks at the free (or at hipFree
 * / hipFreeAsync of the address, or at the launch of an exec graph made with
 * hipGraphInstantiateFlagAutoFreeOnLaunch); reserved follows used up and
 * comes down only at hipDeviceGraphMemTrim (the pool keeps freed physical
 * memory).  Memory is counted unaligned (hipamd rounds up to
 * virtualMemAllocGranularity_, which the stub does not model). */
#include <string.h>

#include "hip_graph.h"

#ifdef ROCPY_HAVE_hipGraphAddMemAllocNode

struct hip_graph_alloc {
    _Atomic int refs;                 /* the node and its copies (clones of va_) */
    void *ptr;
    size_t size;
    int device;
    hipMemAllocNodeParams params;     /* as given, dptr filled (GetParams) */
    bool mapped;                      /* between its alloc and its free */
    bool free_node;                   /* a free node names it (memAllocNodePtrs_) */
};

static pthread_mutex_t allocs_lock = PTHREAD_MUTEX_INITIALIZER;
static hip_ptrvec_t allocs;           /* live hip_graph_alloc objects */

static struct hip_graph_alloc *find_alloc(const void *ptr) {
    for (size_t i = 0; i < allocs.n; i++) {
        struct hip_graph_alloc *a = allocs.v[i];
        if (a->ptr == ptr) return a;
    }
    return NULL;
}

/* mapped -> unmapped (the pool's used figure shrinks); allocs_lock held */
static void unmap(struct hip_graph_alloc *a) {
    if (!a->mapped) return;
    a->mapped = false;
    hip_mempool_graph_use(a->device, -(int64_t)a->size);
}

static void alloc_unref(struct hip_graph_alloc *a) {
    if (atomic_fetch_sub(&a->refs, 1) != 1) return;
    pthread_mutex_lock(&allocs_lock);
    unmap(a);
    hip_ptrvec_remove(&allocs, a);
    pthread_mutex_unlock(&allocs_lock);
    stub_mem_release(a->ptr, STUB_MEM_DEVICE, NULL);
    free(a);
}

void hip_memnode_copy(const struct hipGraphNode *src, struct hipGraphNode *dst) {
    if (src->type == hipGraphNodeTypeMemAlloc) atomic_fetch_add(&src->p.alloc->refs, 1);
    dst->p = src->p;
}

void hip_memnode_release(struct hipGraphNode *n) {
    if (n->type == hipGraphNodeTypeMemAlloc && n->p.alloc) alloc_unref(n->p.alloc);
    n->p.alloc = NULL;
}

bool hip_node_is_memnode(const struct hipGraphNode *n) {
    return n->type == hipGraphNodeTypeMemAlloc || n->type == hipGraphNodeTypeMemFree;
}

bool hip_graph_has_memnodes(struct ihipGraph *g) {
    pthread_mutex_lock(&g->lock);
    bool found = false;
    for (size_t i = 0; i < g->nodes.n && !found; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        found = n->type == hipGraphNodeTypeMemAlloc || n->type == hipGraphNodeTypeMemFree;
    }
    pthread_mutex_unlock(&g->lock);
    return found;
}

/* ihipGraphInstantiate: a graph instantiated before may not be again while
 * it holds memory nodes */
hipError_t hip_memnode_instantiate_check(const struct ihipGraph *g) {
    if (!g->instantiated) return hipSuccess;
    for (size_t i = 0; i < g->nodes.n; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        if (n->type == hipGraphNodeTypeMemAlloc || n->type == hipGraphNodeTypeMemFree)
            return hipErrorNotSupported;
    }
    return hipSuccess;
}

/* GraphExec::Run: AutoFreeOnLaunch frees what the graph's allocations still
 * hold (Graph::FreeAllMemory); a repeated launch whose allocation is still
 * mapped (not freed since) is hipErrorInvalidValue (IsActiveMem) */
hipError_t hip_memnode_launch_check(const struct hipGraphNode *nodes, size_t n,
                                    unsigned long long flags, bool repeat) {
    hipError_t status = hipSuccess;
    pthread_mutex_lock(&allocs_lock);
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].type != hipGraphNodeTypeMemAlloc) continue;
        if (flags & hipGraphInstantiateFlagAutoFreeOnLaunch) unmap(nodes[i].p.alloc);
        if (repeat && nodes[i].p.alloc->mapped) status = hipErrorInvalidValue;
    }
    pthread_mutex_unlock(&allocs_lock);
    return status;
}

static void run_alloc(hip_op_t *op) {
    struct hip_graph_alloc *a = *HIP_OP_DATA(op, struct hip_graph_alloc *);
    pthread_mutex_lock(&allocs_lock);
    if (!a->mapped) {
        a->mapped = true;
        hip_mempool_graph_use(a->device, (int64_t)a->size);
    }
    pthread_mutex_unlock(&allocs_lock);
    alloc_unref(a);
}

static void run_free(hip_op_t *op) {
    void *ptr = *HIP_OP_DATA(op, void *);
    pthread_mutex_lock(&allocs_lock);
    struct hip_graph_alloc *a = find_alloc(ptr);
    if (a) unmap(a);       /* other memory: "Memory didn't belong to any pool!" */
    pthread_mutex_unlock(&allocs_lock);
}

hipError_t hip_memnode_enqueue(hip_stream_t *s, struct hipGraphNode *n) {
    if (n->type != hipGraphNodeTypeMemAlloc && n->type != hipGraphNodeTypeMemFree) return hipSuccess;
    bool alloc = n->type == hipGraphNodeTypeMemAlloc;
    hip_op_t *op = hip_op_new(alloc ? run_alloc : run_free, sizeof(void *));
    if (!op) return hipErrorOutOfMemory;
    if (alloc) {
        atomic_fetch_add(&n->p.alloc->refs, 1);       /* the op's */
        *HIP_OP_DATA(op, struct hip_graph_alloc *) = n->p.alloc;
    } else {
        *HIP_OP_DATA(op, void *) = n->p.free_ptr;
    }
    hip_stream_submit(s, op);
    return hipSuccess;
}

/* hipFree / hipFreeAsync of a graph allocation: hipFree waits for the
 * device, then gives a mapped one back to the pool; hipFreeAsync does so in
 * the stream's order (a launch's alloc ahead of it in the stream maps it
 * first).  Another tagged allocation, or one hipFree finds unmapped, is
 * hipErrorInvalidValue. */
hipError_t hip_graph_alloc_free(void *ptr, hip_stream_t *s) {
    pthread_mutex_lock(&allocs_lock);
    struct hip_graph_alloc *a = find_alloc(ptr);
    int device = a ? a->device : -1;
    pthread_mutex_unlock(&allocs_lock);
    if (!a) return hipErrorInvalidValue;
    if (s) {
        hip_op_t *op = hip_op_new(run_free, sizeof(void *));
        if (!op) return hipErrorOutOfMemory;
        *HIP_OP_DATA(op, void *) = ptr;
        hip_stream_submit(s, op);
        return hipSuccess;
    }
    hip_device_sync(device);
    pthread_mutex_lock(&allocs_lock);
    a = find_alloc(ptr);
    bool mapped = a && a->mapped;
    if (mapped) unmap(a);
    pthread_mutex_unlock(&allocs_lock);
    return mapped ? hipSuccess : hipErrorInvalidValue;
}

/* hipGraphAddMemAllocNode's checks after the common ones; dptr is cleared on
 * a refused property, as hipamd does */
static hipError_t alloc_params_check(hipMemAllocNodeParams *p) {
    if (p->bytesize == 0 || p->poolProps.allocType != hipMemAllocationTypePinned ||
        p->poolProps.location.type != hipMemLocationTypeDevice) {
        p->dptr = NULL;
        return hipErrorInvalidValue;
    }
    if (p->poolProps.location.id < 0 || p->poolProps.location.id >= hip_device_count())
        return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hip_make_memalloc_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                  void *arg, hipGraphNode_t *out) {
    hipMemAllocNodeParams *p = arg;
    hipError_t status = alloc_params_check(p);
    if (status != hipSuccess) return status;
    p->dptr = NULL;
    struct hip_graph_alloc *a = calloc(1, sizeof *a);
    struct hipGraphNode *n = hip_node_alloc(hipGraphNodeTypeMemAlloc);
    status = a && n ? hipSuccess : hipErrorOutOfMemory;
    int device = p->poolProps.location.id;
    if (status == hipSuccess) status = hip_device_alloc(&a->ptr, p->bytesize, device, 0);
    if (status != hipSuccess) {
        free(a);
        free(n);
        return status;
    }
    stub_mem_set_tag(a->ptr, a);      /* hipFree goes through hip_graph_alloc_free */
    a->refs = 1;
    a->size = p->bytesize;
    a->device = device;
    a->params = *p;
    a->params.dptr = a->ptr;
    pthread_mutex_lock(&allocs_lock);
    bool listed = hip_ptrvec_push(&allocs, a);
    pthread_mutex_unlock(&allocs_lock);
    if (!listed) {
        stub_mem_release(a->ptr, STUB_MEM_DEVICE, NULL);
        free(a);
        free(n);
        return hipErrorOutOfMemory;
    }
    n->p.alloc = a;
    status = hip_graph_add_node(g, deps, ndeps, n, out);   /* releases n on failure */
    if (status == hipSuccess) p->dptr = a->ptr;
    return status;
}

/* The address must be memory the process knows (getMemoryObject); from 6.3
 * (clr cf0320a0b) hipGraphAddMemFreeNode (`named`) also wants an alloc
 * node's that no free node names yet (memAllocNodePtrs_), which
 * hipDrvGraphAddMemFreeNode and hipGraphAddNode do not ask. */
static hipError_t free_target_check(void *ptr, bool named) {
    if (!stub_mem_find(ptr, NULL)) return hipErrorInvalidValue;
    if (!named || !stub_rule(STUB_RULE_GRAPH_FREE_NEEDS_ALLOC_NODE)) return hipSuccess;
    pthread_mutex_lock(&allocs_lock);
    struct hip_graph_alloc *a = find_alloc(ptr);
    hipError_t status = a && !a->free_node ? hipSuccess : hipErrorInvalidValue;
    if (status == hipSuccess) a->free_node = true;
    pthread_mutex_unlock(&allocs_lock);
    return status;
}

hipError_t hip_make_memfree_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                 void *ptr, bool named, hipGraphNode_t *out) {
    hipError_t status = ptr ? free_target_check(ptr, named) : hipErrorInvalidValue;
    if (status != hipSuccess) return status;
    struct hipGraphNode *n = hip_node_alloc(hipGraphNodeTypeMemFree);
    if (!n) return hipErrorOutOfMemory;
    n->p.free_ptr = ptr;
    return hip_graph_add_node(g, deps, ndeps, n, out);
}

/* ---- API ------------------------------------------------------------- */

hipError_t hipGraphAddMemAllocNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                   const hipGraphNode_t *pDependencies, size_t numDependencies,
                                   hipMemAllocNodeParams *pNodeParams) {
    HIP_INIT_API();
    if (!pGraphNode || !graph || (numDependencies > 0 && !pDependencies) || !pNodeParams)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_make_memalloc_node(graph, pDependencies, numDependencies, pNodeParams,
                                      pGraphNode));
}

static hipError_t get_typed(hipGraphNode_t node, const void *out, hipGraphNodeType type) {
    if (!node || !out || !hip_node_valid(node) || node->type != type) return hipErrorInvalidValue;
    return hipSuccess;
}

hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, hipMemAllocNodeParams *pNodeParams) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(get_typed(node, pNodeParams, hipGraphNodeTypeMemAlloc));
    *pNodeParams = node->p.alloc->params;
    HIP_RETURN(hipSuccess);
}

/* a dependency array without a count is refused too (hipamd's checks) */
static hipError_t add_free(hipGraphNode_t *pnode, hipGraph_t graph, const hipGraphNode_t *deps,
                           size_t ndeps, void *ptr) {
    if (!pnode || !graph || (ndeps > 0 && !deps) || (deps && ndeps == 0) || !ptr)
        return hipErrorInvalidValue;
    return hip_make_memfree_node(graph, deps, ndeps, ptr, true, pnode);
}

hipError_t hipGraphAddMemFreeNode(hipGraphNode_t *pGraphNode, hipGraph_t graph,
                                  const hipGraphNode_t *pDependencies, size_t numDependencies,
                                  void *dev_ptr) {
    HIP_INIT_API();
    HIP_RETURN(add_free(pGraphNode, graph, pDependencies, numDependencies, dev_ptr));
}

hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void *dev_ptr) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(get_typed(node, dev_ptr, hipGraphNodeTypeMemFree));
    *(void **)dev_ptr = node->p.free_ptr;
    HIP_RETURN(hipSuccess);
}

#ifdef ROCPY_HAVE_hipDrvGraphAddMemFreeNode
hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t *phGraphNode, hipGraph_t hGraph,
                                     const hipGraphNode_t *dependencies, size_t numDependencies,
                                     hipDeviceptr_t dptr) {
    HIP_INIT_API();
    void *ptr = (void *)dptr;
    if (!phGraphNode || !hGraph || (numDependencies > 0 && !dependencies) ||
        (dependencies && numDependencies == 0) || !ptr)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(hip_make_memfree_node(hGraph, dependencies, numDependencies, ptr, false, phGraphNode));
}
#endif

#else /* headers without graph memory nodes: no node is one */

void hip_memnode_copy(const struct hipGraphNode *src, struct hipGraphNode *dst) { dst->p = src->p; }
void hip_memnode_release(struct hipGraphNode *n) { (void)n; }
hipError_t hip_memnode_enqueue(hip_stream_t *s, struct hipGraphNode *n) {
    (void)s;
    (void)n;
    return hipSuccess;
}
hipError_t hip_memnode_instantiate_check(const struct ihipGraph *g) {
    (void)g;
    return hipSuccess;
}
hipError_t hip_memnode_launch_check(const struct hipGraphNode *nodes, size_t n,
                                    unsigned long long flags, bool repeat) {
    (void)nodes;
    (void)n;
    (void)flags;
    (void)repeat;
    return hipSuccess;
}
bool hip_node_is_memnode(const struct hipGraphNode *n) {
    (void)n;
    return false;
}
bool hip_graph_has_memnodes(struct ihipGraph *g) {
    (void)g;
    return false;
}
hipError_t hip_graph_alloc_free(void *ptr, hip_stream_t *s) {
    (void)ptr;
    (void)s;
    return hipErrorInvalidValue;
}
#endif
