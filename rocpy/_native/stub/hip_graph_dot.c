/* hipGraphDebugDotPrint (clr hipamd/src/hip_graph.cpp ihipGraphDebugDotPrint,
 * hip_graph_internal.hpp Graph::GenerateDOT, GraphNode::GenerateDOTNode,
 * PrintAttributes and each node's GetLabel / GetShape, as of rocm-6.2.0):
 *
 *   digraph dot {
 *   subgraph cluster_G {
 *   label="graph_G"graph[style="dashed"];
 *   <blank line>"graph_G_node_N"[style="S"shape="P"label="L"];   one per node
 *   "graph_G_node_A" -> "graph_G_node_B"                        one per edge
 *   }
 *   <each child graph's subgraph, after its parent's>
 *   }
 *
 * A label holds real newlines, as hipamd's std::string does: "N\nTYPE" for
 * most nodes, "N\nKERNELNAME\n" for kernels, "N\nMEMCPY\n(HtoD)" for copies
 * (D: memory the runtime knows, pinned host memory included), "N\nMEMSET\n(value,bytes)"
 * for memsets, "N\ngraph_C" for a child graph node.  The kernel, memcpy
 * and memset parameter flags (and Verbose for memcpy and memset) switch
 * those nodes to hipamd's "record" shape and labels.  Numbers: hipamd's are
 * process-wide counters; the stub numbers graphs in print order from 0 and
 * nodes by their creation index in their graph.  Unlike hipamd, a kernel
 * node under the kernel parameter flags keeps the closing quote of its
 * style (hipamd writes a newline there, which no DOT reader takes). */
#include <stdio.h>

#include "hip_graph.h"

#ifdef ROCPY_HAVE_hipGraphDebugDotPrint
static const char *plain_label(hipGraphNodeType t) {
    switch (t) {
    case hipGraphNodeTypeHost: return "HOST";
    case hipGraphNodeTypeEventRecord: return "EVENT_RECORD";
    case hipGraphNodeTypeWaitEvent: return "EVENT_WAIT";
    case hipGraphNodeTypeMemAlloc: return "MEM_ALLOC";
    case hipGraphNodeTypeMemFree: return "MEM_FREE";
    case hipGraphNodeTypeEmpty: return "EMPTY";
    default: return "";
    }
}

static char side(const void *p) { return stub_mem_find(p, NULL) ? 'D' : 'H'; }

static void copy_label(FILE *f, const struct hipGraphNode *n, unsigned flags) {
    const void *src, *dst;
    if (n->copy1d) {
        src = n->p.copy1d.src;
        dst = n->p.copy1d.dst;
    } else {
        const hipMemcpy3DParms *c = &n->p.copy;
        src = c->srcArray ? NULL : c->srcPtr.ptr;
        dst = c->dstArray ? NULL : c->dstPtr.ptr;
    }
    char s = n->copy1d || !n->p.copy.srcArray ? side(src) : 'A';
    char d = n->copy1d || !n->p.copy.dstArray ? side(dst) : 'A';
    if (flags == hipGraphDebugDotFlagsMemcpyNodeParams || flags == hipGraphDebugDotFlagsVerbose) {
        hipMemcpy3DParms c = {0};
        if (n->copy1d) {
            size_t count = n->p.copy1d.count;
            c.srcPtr = (hipPitchedPtr){(void *)src, count, count, 1};
            c.dstPtr = (hipPitchedPtr){(void *)dst, count, count, 1};
            c.extent = (hipExtent){count, 1, 1};
        } else {
            c = n->p.copy;
        }
        fprintf(f,
                "{\nMEMCPY\n| {{ID | node handle} | {%zu | %p}}\n| {kind | %cto%c}\n"
                "| {{srcPtr | dstPtr} | {pitch | ptr | xsize | ysize | pitch | ptr | xsize | size} | "
                "{%zu | %p | %zu | %zu | %zu | %p | %zu | %zu}}\n"
                "| {{srcPos | {{x | %zu} | {y | %zu} | {z | %zu}}} | {dstPos | {{x | %zu} | {y | %zu} | "
                "{z | %zu}}} | {Extent | {{Width | %zu} | {Height | %zu} | {Depth | %zu}}}}\n}",
                n->index, (const void *)n, s, d, c.srcPtr.pitch, c.srcPtr.ptr, c.srcPtr.xsize,
                c.srcPtr.ysize, c.dstPtr.pitch, c.dstPtr.ptr, c.dstPtr.xsize, c.dstPtr.ysize,
                c.srcPos.x, c.srcPos.y, c.srcPos.z, c.dstPos.x, c.dstPos.y, c.dstPos.z,
                c.extent.width, c.extent.height, c.extent.depth);
    } else {
        fprintf(f, "%zu\nMEMCPY\n(%cto%c)", n->index, s, d);
    }
}

static void memset_label(FILE *f, const struct hipGraphNode *n, unsigned flags) {
    const hipMemsetParams *m = &n->p.memset;
    if (flags == hipGraphDebugDotFlagsMemsetNodeParams || flags == hipGraphDebugDotFlagsVerbose) {
        fprintf(f,
                "{\nMEMSET\n| {{ID | node handle | dptr | pitch | value | elementSize | width | "
                "height | depth} | {%zu | %p | %p | %zu | %u | %u | %zu | %zu | %zu}}}",
                n->index, (const void *)n, m->dst, m->pitch, m->value, m->elementSize, m->width,
                m->height, (size_t)1);
    } else {
        size_t bytes = m->width * m->elementSize * (m->height == 1 ? 1 : m->height);
        fprintf(f, "%zu\nMEMSET\n(%u,%zu)", n->index, m->value, bytes);
    }
}

static void kernel_label(FILE *f, const struct hipGraphNode *n, unsigned flags) {
    const hip_launch_t *k = &n->p.kernel;
    if (flags == hipGraphDebugDotFlagsKernelNodeParams) {
        const hipKernelNodeParams *p = &n->kparams;
        fprintf(f, "%zu\n%s\n\\<\\<\\<(%u,%u,%u),(%u,%u,%u),%u\\>\\>\\>", n->index, k->name,
                p->gridDim.x, p->gridDim.y, p->gridDim.z, p->blockDim.x, p->blockDim.y,
                p->blockDim.z, p->sharedMemBytes);
    } else {
        fprintf(f, "%zu\n%s\n", n->index, k->name);
    }
}

static bool is_record(const struct hipGraphNode *n, unsigned flags) {
    switch (n->type) {
    case hipGraphNodeTypeKernel: return flags == hipGraphDebugDotFlagsKernelNodeParams;
    case hipGraphNodeTypeMemset:
        return flags == hipGraphDebugDotFlagsMemsetNodeParams || flags == hipGraphDebugDotFlagsVerbose;
    case hipGraphNodeTypeMemcpy:
#ifdef ROCPY_HAVE_hipGraphNodeTypeMemcpy1D
    case hipGraphNodeTypeMemcpy1D:
#endif
        return flags == hipGraphDebugDotFlagsMemcpyNodeParams || flags == hipGraphDebugDotFlagsVerbose;
    default: return false;
    }
}

/* how many graphs g's cluster and its children's take */
static unsigned count_graphs(struct ihipGraph *g) {
    unsigned k = 1;
    pthread_mutex_lock(&g->lock);
    for (size_t i = 0; i < g->nodes.n; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        if (n->type == hipGraphNodeTypeGraph) k += count_graphs(n->p.child);
    }
    pthread_mutex_unlock(&g->lock);
    return k;
}

static void print_node(FILE *f, unsigned gid, const struct hipGraphNode *n, unsigned flags,
                       unsigned child_id) {
    const char *style = "solid", *shape = "rectangle";
    if (n->type == hipGraphNodeTypeKernel) style = "bold", shape = "octagon";
    if (n->type == hipGraphNodeTypeMemset) shape = "invtrapezium";
    if (n->type == hipGraphNodeTypeMemcpy || n->copy1d) shape = "trapezium";
    if (is_record(n, flags)) shape = "record";
    fprintf(f, "\n\"graph_%u_node_%zu\"[style=\"%s\"shape=\"%s\"label=\"", gid, n->index, style, shape);
    if (n->type == hipGraphNodeTypeKernel) kernel_label(f, n, flags);
    else if (n->type == hipGraphNodeTypeMemset) memset_label(f, n, flags);
    else if (n->type == hipGraphNodeTypeMemcpy || n->copy1d) copy_label(f, n, flags);
    else if (n->type == hipGraphNodeTypeGraph) fprintf(f, "%zu\ngraph_%u", n->index, child_id);
    else fprintf(f, "%zu\n%s", n->index, plain_label(n->type));
    fprintf(f, "\"];\n");
}

/* g's cluster, then its child graphs' (numbered depth first after g, in node order) */
static void print_graph(FILE *f, struct ihipGraph *g, unsigned flags, unsigned *next_id) {
    unsigned gid = (*next_id)++;
    unsigned child_id = *next_id;
    pthread_mutex_lock(&g->lock);
    fprintf(f, "subgraph cluster_%u {\nlabel=\"graph_%u\"graph[style=\"dashed\"];\n", gid, gid);
    for (size_t i = 0; i < g->nodes.n; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        print_node(f, gid, n, flags, child_id);
        if (n->type == hipGraphNodeTypeGraph) child_id += count_graphs(n->p.child);
    }
    fprintf(f, "\n");
    for (size_t i = 0; i < g->nodes.n; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        for (size_t j = 0; j < n->outs.n; j++) {
            const struct hipGraphNode *to = n->outs.v[j];
            fprintf(f, "\"graph_%u_node_%zu\" -> \"graph_%u_node_%zu\"\n", gid, n->index, gid,
                    to->index);
        }
    }
    fprintf(f, "}\n");
    for (size_t i = 0; i < g->nodes.n; i++) {
        const struct hipGraphNode *n = g->nodes.v[i];
        if (n->type == hipGraphNodeTypeGraph) print_graph(f, n->p.child, flags, next_id);
    }
    pthread_mutex_unlock(&g->lock);
}

hipError_t hipGraphDebugDotPrint(hipGraph_t graph, const char *path, unsigned int flags) {
    HIP_INIT_API();
    if (!graph || !path || !hip_graph_valid(graph)) HIP_RETURN(hipErrorInvalidValue);
    FILE *f = fopen(path, "w");
    if (!f) HIP_RETURN(hipErrorOperatingSystem);
    unsigned next_id = 0;
    fprintf(f, "digraph dot {\n");
    print_graph(f, graph, flags, &next_id);
    fprintf(f, "}\n");
    HIP_RETURN(fclose(f) == 0 ? hipSuccess : hipErrorOperatingSystem);
}
#endif
