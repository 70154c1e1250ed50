/* Kernel node attributes (hipamd hip_graph.cpp hipGraphKernelNodeSetAttribute,
 * hipGraphKernelNodeGetAttribute, hipGraphKernelNodeCopyAttributes; the node's
 * SetAttrParams/GetAttrParams/CopyAttr in hip_graph_internal.hpp).
 *
 * A node holds one hipKernelNodeAttrValue (a union) and the id of the
 * attribute last set in it (hipamd's kernelAttrInUse_); clones and
 * executable graphs copy both.  Nothing at execution reads them in hipamd
 * (the access policy window, cooperative flag and priority are only kept
 * and handed back), so a launch of the node is the same whatever they say.
 *
 * Releases (stub_version.c): 5.5 records the attribute in use
 * (STUB_RULE_KERNEL_ATTR_IN_USE; 5.3-5.4 instead refuse a window with a NULL
 * base_ptr with hipErrorInvalidResourceHandle), 5.7 bounds the window
 * (STUB_RULE_KERNEL_ATTR_WINDOW_LIMITS), 6.2 adds the priority attribute and
 * the node-type check (STUB_RULE_KERNEL_ATTR_PRIORITY).  Before 6.2 hipamd
 * casts any node to a kernel node; the stub answers hipErrorInvalidValue for
 * a node that is not one (it cannot follow a cast into another node's
 * memory), as it does for handles that are no live node. */
#include "hip_graph.h"

/* The hipLaunchAttributePriority id where the headers have it (6.0+: 8). */
#ifdef ROCPY_HAVE_hipLaunchAttributePriority
#define KATTR_PRIORITY ((int)hipLaunchAttributePriority)
#else
#define KATTR_PRIORITY 8
#endif

/* hipamd's max window: the constant 1024 (5.7-6.1, refused from it on),
 * the device's accessPolicyMaxWindowSize from 6.2 (hip_device.cpp sets 0,
 * refused past it) */
#define WINDOW_MAX_5_7 1024u

static bool known_attr(int attr) {
    return attr == hipKernelNodeAttributeAccessPolicyWindow ||
           attr == hipKernelNodeAttributeCooperative ||
           (attr == KATTR_PRIORITY && stub_rule(STUB_RULE_KERNEL_ATTR_PRIORITY));
}

static struct hipGraphNode *kernel_node(hipGraphNode_t node) {
    return hip_node_valid(node) && node->type == hipGraphNodeTypeKernel ? node : NULL;
}

static hipError_t check_window(const hipAccessPolicyWindow *w) {
    bool in_use = stub_rule(STUB_RULE_KERNEL_ATTR_IN_USE);
    if (!in_use) return w->base_ptr ? hipSuccess : hipErrorInvalidResourceHandle;
    bool limits = stub_rule(STUB_RULE_KERNEL_ATTR_WINDOW_LIMITS);
    if (w->hitRatio > 1 || (limits && w->hitRatio < 0)) return hipErrorInvalidValue;
    if (w->missProp == hipAccessPropertyPersisting) return hipErrorInvalidValue;
    if (w->num_bytes > 0 && w->hitRatio == 0) return hipErrorInvalidValue;
    if (limits && stub_rule(STUB_RULE_KERNEL_ATTR_PRIORITY) && w->num_bytes > 0)
        return hipErrorInvalidValue;        /* > accessPolicyMaxWindowSize (0) */
    if (limits && w->num_bytes >= WINDOW_MAX_5_7) return hipErrorInvalidValue;
    return hipSuccess;
}

static hipError_t set_attr(struct hipGraphNode *n, int attr, const hipKernelNodeAttrValue *v) {
    if (attr == hipKernelNodeAttributeAccessPolicyWindow) {
        HIP_RETURN_ONFAIL(check_window(&v->accessPolicyWindow));
        n->kattr.accessPolicyWindow = v->accessPolicyWindow;
    } else if (attr == hipKernelNodeAttributeCooperative) {
        n->kattr.cooperative = v->cooperative;
    } else {
        /* hipamd: `priority < Priority::Low (1) || priority > Priority::High (-1)`
         * is true of every value */
        return hipErrorInvalidValue;
    }
    n->kattr_id = attr;   /* read by Get only from 5.5; Copy (5.5 on) always answers as 5.5 */
    return hipSuccess;
}

static hipError_t get_attr(const struct hipGraphNode *n, int attr, hipKernelNodeAttrValue *v) {
    bool in_use = stub_rule(STUB_RULE_KERNEL_ATTR_IN_USE);
    if (in_use && n->kattr_id != 0 && n->kattr_id != attr) return hipErrorInvalidValue;
    if (attr == hipKernelNodeAttributeAccessPolicyWindow) {
        if (!in_use && !n->kattr.accessPolicyWindow.base_ptr) return hipErrorInvalidResourceHandle;
        v->accessPolicyWindow = n->kattr.accessPolicyWindow;
    } else if (attr == hipKernelNodeAttributeCooperative) {
        v->cooperative = n->kattr.cooperative;
    } else {
#ifdef ROCPY_HAVE_hipLaunchAttributeValue__priority
        v->priority = n->kattr.priority;
#endif
    }
    return hipSuccess;
}

/* hipamd checks the node's type after the attribute (6.2+); the stub's
 * registry check stands in for the cast before it */
static hipError_t attr_api(hipGraphNode_t hNode, hipKernelNodeAttrID attr, const void *value,
                           struct hipGraphNode **out) {
    if (!hNode || !value) return hipErrorInvalidValue;
    if (!known_attr((int)attr)) return hipErrorInvalidValue;
    *out = kernel_node(hNode);
    return *out ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGraphKernelNodeSetAttribute(hipGraphNode_t hNode, hipKernelNodeAttrID attr,
                                          const hipKernelNodeAttrValue *value) {
    HIP_INIT_API();
    struct hipGraphNode *n;
    HIP_RETURN_ONFAIL(attr_api(hNode, attr, value, &n));
    pthread_mutex_lock(&n->graph->lock);
    hipError_t status = set_attr(n, (int)attr, value);
    pthread_mutex_unlock(&n->graph->lock);
    HIP_RETURN(status);
}

hipError_t hipGraphKernelNodeGetAttribute(hipGraphNode_t hNode, hipKernelNodeAttrID attr,
                                          hipKernelNodeAttrValue *value) {
    HIP_INIT_API();
    struct hipGraphNode *n;
    HIP_RETURN_ONFAIL(attr_api(hNode, attr, value, &n));
    pthread_mutex_lock(&n->graph->lock);
    hipError_t status = get_attr(n, (int)attr, value);
    pthread_mutex_unlock(&n->graph->lock);
    HIP_RETURN(status);
}

#ifdef ROCPY_HAVE_hipGraphKernelNodeCopyAttributes
/* hipamd GraphKernelNode::CopyAttr: nothing to copy when neither has one;
 * a destination holding another attribute is hipErrorInvalidContext */
static hipError_t copy_attr(struct hipGraphNode *dst, const struct hipGraphNode *src) {
    if (dst->kattr_id == 0 && src->kattr_id == 0) return hipSuccess;
    if (dst->kattr_id != 0 && src->kattr_id != dst->kattr_id) return hipErrorInvalidContext;
    dst->kattr_id = src->kattr_id;
    dst->kattr = src->kattr;
    return hipSuccess;
}

hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t hSrc, hipGraphNode_t hDst) {
    HIP_INIT_API();
    if (!hSrc || !hDst) HIP_RETURN(hipErrorInvalidValue);
    struct hipGraphNode *src = kernel_node(hSrc), *dst = kernel_node(hDst);
    if (!src || !dst) HIP_RETURN(hipErrorInvalidValue);
    /* the two may be in different graphs: lock in address order */
    struct ihipGraph *a = src->graph < dst->graph ? src->graph : dst->graph;
    struct ihipGraph *b = src->graph < dst->graph ? dst->graph : src->graph;
    pthread_mutex_lock(&a->lock);
    if (b != a) pthread_mutex_lock(&b->lock);
    hipError_t status = copy_attr(dst, src);
    if (b != a) pthread_mutex_unlock(&b->lock);
    pthread_mutex_unlock(&a->lock);
    HIP_RETURN(status);
}
#endif
