/* Shared virtual memory: hsa_amd_svm_attributes_set/get, hsa_amd_svm_prefetch_async.
 *
 * ROCr (Runtime::SetSvmAttrib / GetSvmAttrib / SvmPrefetch, runtime.cpp)
 * checks the attribute list, then hands page-aligned ranges to KFD
 * (hsaKmtSVMSetAttr), whose failures are HSA_STATUS_ERROR.  The stub plays
 * KFD's part (kfd_svm.c) as bookkeeping: attributes are kept per page range
 * (a new range starts as KFD's svm_range_new makes it: coherent, host
 * access, granularity 9, no preferred or prefetch location, GPUs without
 * access unless XNACK is on) and a query over several ranges combines them
 * as svm_range_get_attr does.  KFD refuses a range that is not mapped in the
 * process (svm_range_is_valid; msync tells here) or that overlaps memory
 * the runtime allocated or locked (svm_range_check_vm: a buffer object).
 * GPU access granted here is what the stub's kernels and copy engines check
 * (stub_hsa_accessible).  What cannot be modelled: migration (all memory is
 * host memory: a prefetch only records its location), and KFD dropping
 * ranges when memory is unmapped (the stub keeps them until the address is
 * set again). */
#include "hsa_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SVM_PAGE 4096u
#define SVM_MAX_AGENTS (1 + STUB_MAX_DEVICES)
/* kfd_ioctl.h HSA_SVM_FLAG_* / KFD_IOCTL_SVM_FLAG_* */
#define F_HOST_ACCESS 0x1u
#define F_COHERENT 0x2u
#define F_HIVE_LOCAL 0x4u
#define F_GPU_RO 0x8u
#define F_GPU_READ_MOSTLY 0x20u
#define LOC_UNDEFINED (-1)

enum { ACC_NONE, ACC_ACCESS, ACC_IN_PLACE };

typedef struct svm_range {
    uintptr_t base, end;
    uint32_t flags;
    uint32_t granularity;
    int preferred;                      /* agent index (0 CPU, 1 + GPU), LOC_UNDEFINED */
    int prefetch;                       /* likewise */
    uint8_t access[STUB_MAX_DEVICES];   /* per GPU */
    struct svm_range *next;
} svm_range_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static svm_range_t *ranges;   /* sorted, disjoint */

static int agent_index(const stub_hsa_agent_t *a) { return a->is_gpu ? 1 + a->device : 0; }
static stub_hsa_agent_t *agent_at(int i) { return i == 0 ? stub_hsa_cpu_agent() : stub_hsa_gpu_agent(i - 1); }

static void defaults(svm_range_t *r, uintptr_t base, uintptr_t end) {
    memset(r, 0, sizeof *r);
    r->base = base;
    r->end = end;
    r->flags = F_HOST_ACCESS | F_COHERENT;
    r->granularity = 9;
    r->preferred = r->prefetch = LOC_UNDEFINED;
    for (int i = 0; i < stub_hsa_gpu_count(); i++) r->access[i] = stub_device(i)->xnack ? ACC_ACCESS : ACC_NONE;
}

/* KFD svm_range_is_valid + svm_range_check_vm */
static bool valid_range(uintptr_t base, uintptr_t end) {
    if (base == 0 || end <= base) return false;
    if (msync((void *)base, end - base, MS_ASYNC) != 0) return false;   /* ENOMEM: not mapped */
    for (uintptr_t p = base; p < end; p += SVM_PAGE) {
        stub_alloc_t a;
        if (stub_mem_find((const void *)p, &a)) return false;
    }
    return true;
}

/* caller holds lock: ranges covering [base, end) exactly, gaps filled with new ones */
static bool cover(uintptr_t base, uintptr_t end) {
    svm_range_t **p = &ranges;
    uintptr_t at = base;
    while (at < end) {
        while (*p && (*p)->end <= at) p = &(*p)->next;
        svm_range_t *r = *p;
        if (r && r->base < at) {           /* split r at `at` */
            svm_range_t *tail = malloc(sizeof *tail);
            if (!tail) return false;
            *tail = *r;
            tail->base = at;
            r->end = at;
            r->next = tail;
            p = &r->next;
            continue;
        }
        uintptr_t gap_end = r && r->base < end ? r->base : end;
        if (at < gap_end) {                /* a gap: a new range */
            svm_range_t *n = malloc(sizeof *n);
            if (!n) return false;
            defaults(n, at, gap_end);
            n->next = r;
            *p = n;
            r = n;
        }
        if (r->end > end) {                /* split r at `end` */
            svm_range_t *tail = malloc(sizeof *tail);
            if (!tail) return false;
            *tail = *r;
            tail->base = end;
            r->end = end;
            r->next = tail;
        }
        at = r->end;
        p = &r->next;
    }
    return true;
}

typedef struct svm_change {
    uint32_t set_flags, clear_flags;
    bool granularity_set, preferred_set;
    uint32_t granularity;
    int preferred;
    int access[STUB_MAX_DEVICES];   /* -1: unchanged */
} svm_change_t;

static void apply(svm_range_t *r, const svm_change_t *c) {
    r->flags = (r->flags & ~c->clear_flags) | c->set_flags;
    if (c->granularity_set) r->granularity = c->granularity;
    if (c->preferred_set) r->preferred = c->preferred;
    for (int i = 0; i < stub_hsa_gpu_count(); i++)
        if (c->access[i] >= 0) r->access[i] = (uint8_t)c->access[i];
}

hsa_status_t hsa_amd_svm_attributes_set(void *ptr, size_t size, hsa_amd_svm_attribute_pair_t *attribute_list,
                                        size_t attribute_count) {
    HSA_CHECK_OPEN();
    svm_change_t c = {0};
    for (int i = 0; i < STUB_MAX_DEVICES; i++) c.access[i] = -1;
    uint32_t seen = 0;
    bool agent_seen[SVM_MAX_AGENTS] = {false};
    for (size_t i = 0; i < attribute_count; i++) {
        uint64_t attrib = attribute_list[i].attribute, value = attribute_list[i].value;
        bool per_agent = attrib == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE ||
                         attrib == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE ||
                         attrib == HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS;
        if (!per_agent) {
            if (attrib > 31 || (attrib != HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG && attrib != HSA_AMD_SVM_ATTRIB_READ_ONLY &&
                                attrib != HSA_AMD_SVM_ATTRIB_HIVE_LOCAL && attrib != HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY &&
                                attrib != HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION && attrib != HSA_AMD_SVM_ATTRIB_READ_MOSTLY))
                return HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* "Illegal or invalid attribute" */
            if (seen & (1u << attrib)) return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;   /* Check() */
            seen |= 1u << attrib;
        }
        switch (attrib) {
        case HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG:
            if (value == HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED) c.set_flags |= F_COHERENT;
            else if (value == HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED) c.clear_flags |= F_COHERENT;
            else return HSA_STATUS_ERROR_INVALID_ARGUMENT;
            break;
        case HSA_AMD_SVM_ATTRIB_READ_ONLY: *(value ? &c.set_flags : &c.clear_flags) |= F_GPU_RO; break;
        case HSA_AMD_SVM_ATTRIB_HIVE_LOCAL: *(value ? &c.set_flags : &c.clear_flags) |= F_HIVE_LOCAL; break;
        case HSA_AMD_SVM_ATTRIB_READ_MOSTLY: *(value ? &c.set_flags : &c.clear_flags) |= F_GPU_READ_MOSTLY; break;
        case HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY:
            c.granularity_set = true;
            c.granularity = value > 18 ? 18 : (uint32_t)value;   /* ROCr: at most 1 GiB */
            break;
        case HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION: {
            c.preferred_set = true;
            if (value == 0) {   /* ConvertAllowNull: no location */
                c.preferred = LOC_UNDEFINED;
                break;
            }
            stub_hsa_agent_t *a = stub_hsa_agent((hsa_agent_t){value});
            if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
            c.preferred = agent_index(a);
            break;
        }
        default: {   /* the per-agent access attributes */
            stub_hsa_agent_t *a = stub_hsa_agent((hsa_agent_t){value});
            if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
            if (agent_seen[agent_index(a)]) return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;   /* ConfirmNew() */
            agent_seen[agent_index(a)] = true;
            if (!a->is_gpu) {
                *(attrib == HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS ? &c.clear_flags : &c.set_flags) |= F_HOST_ACCESS;
            } else {
                c.access[a->device] = attrib == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE ? ACC_ACCESS
                                      : attrib == HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE ? ACC_IN_PLACE
                                                                                              : ACC_NONE;
            }
        }
        }
    }
    if (c.set_flags & F_HOST_ACCESS) c.clear_flags &= ~F_HOST_ACCESS;   /* ROCr: any CPU wins */
    uintptr_t base = (uintptr_t)ptr & ~(uintptr_t)(SVM_PAGE - 1);
    uintptr_t end = ((uintptr_t)ptr + size + SVM_PAGE - 1) & ~(uintptr_t)(SVM_PAGE - 1);
    if (ptr == NULL || size == 0 || !valid_range(base, end)) return HSA_STATUS_ERROR;   /* hsaKmtSVMSetAttr failed */
    pthread_mutex_lock(&lock);
    bool ok = cover(base, end);
    if (ok)
        for (svm_range_t *r = ranges; r && r->base < end; r = r->next)
            if (r->base >= base) apply(r, &c);
    pthread_mutex_unlock(&lock);
    return ok ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
}

/* caller holds lock: svm_range_get_attr's combination over [base, end), gaps as new ranges */
typedef struct svm_summary {
    uint32_t flags_and, flags_or, granularity;
    int preferred, prefetch;
    bool any_none[STUB_MAX_DEVICES], all_in_place[STUB_MAX_DEVICES];
} svm_summary_t;

static void summarize(uintptr_t base, uintptr_t end, svm_summary_t *s) {
    bool first = true;
    uintptr_t at = base;
    svm_range_t *r = ranges, gap;
    while (at < end) {
        while (r && r->end <= at) r = r->next;
        const svm_range_t *use;
        if (r && r->base <= at) {
            use = r;
        } else {
            defaults(&gap, at, r && r->base < end ? r->base : end);
            use = &gap;
        }
        if (first) {
            s->flags_and = ~0u;
            s->flags_or = 0;
            s->granularity = use->granularity;
            s->preferred = use->preferred;
            s->prefetch = use->prefetch;
            for (int i = 0; i < STUB_MAX_DEVICES; i++) s->any_none[i] = false, s->all_in_place[i] = true;
            first = false;
        }
        s->flags_and &= use->flags;
        s->flags_or |= use->flags;
        if (use->granularity < s->granularity) s->granularity = use->granularity;
        if (use->preferred != s->preferred) s->preferred = LOC_UNDEFINED;
        if (use->prefetch != s->prefetch) s->prefetch = LOC_UNDEFINED;
        for (int i = 0; i < stub_hsa_gpu_count(); i++) {
            if (use->access[i] == ACC_NONE) s->any_none[i] = true;
            if (use->access[i] != ACC_IN_PLACE) s->all_in_place[i] = false;
        }
        at = use->end;
    }
}

static uint64_t handle_at(int index) {
    stub_hsa_agent_t *a = index == LOC_UNDEFINED ? NULL : agent_at(index);
    return a ? stub_hsa_agent_handle(a).handle : 0;
}

hsa_status_t hsa_amd_svm_attributes_get(void *ptr, size_t size, hsa_amd_svm_attribute_pair_t *attribute_list,
                                        size_t attribute_count) {
    HSA_CHECK_OPEN();
    for (size_t i = 0; i < attribute_count; i++) {
        uint64_t attrib = attribute_list[i].attribute;
        if (attrib == HSA_AMD_SVM_ATTRIB_ACCESS_QUERY) {
            if (!stub_hsa_agent((hsa_agent_t){attribute_list[i].value})) return HSA_STATUS_ERROR_INVALID_AGENT;
        } else if (attrib != HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG && attrib != HSA_AMD_SVM_ATTRIB_READ_ONLY &&
                   attrib != HSA_AMD_SVM_ATTRIB_HIVE_LOCAL && attrib != HSA_AMD_SVM_ATTRIB_READ_MOSTLY &&
                   attrib != HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY &&
                   attrib != HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION && attrib != HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION) {
            return HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* incl. the set-only per-agent attributes */
        }
    }
    uintptr_t base = (uintptr_t)ptr & ~(uintptr_t)(SVM_PAGE - 1);
    uintptr_t end = ((uintptr_t)ptr + size + SVM_PAGE - 1) & ~(uintptr_t)(SVM_PAGE - 1);
    if (ptr == NULL || size == 0 || !valid_range(base, end)) return HSA_STATUS_ERROR;   /* hsaKmtSVMGetAttr failed */
    svm_summary_t s;
    pthread_mutex_lock(&lock);
    summarize(base, end, &s);
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < attribute_count; i++) {
        uint64_t *value = &attribute_list[i].value;
        switch (attribute_list[i].attribute) {
        case HSA_AMD_SVM_ATTRIB_GLOBAL_FLAG:
            *value = s.flags_and & F_COHERENT ? HSA_AMD_SVM_GLOBAL_FLAG_FINE_GRAINED
                     : !(s.flags_or & F_COHERENT) ? HSA_AMD_SVM_GLOBAL_FLAG_COARSE_GRAINED
                                                  : HSA_AMD_SVM_GLOBAL_FLAG_INDETERMINATE;
            break;
        case HSA_AMD_SVM_ATTRIB_READ_ONLY: *value = (s.flags_and & F_GPU_RO) != 0; break;
        case HSA_AMD_SVM_ATTRIB_HIVE_LOCAL: *value = (s.flags_and & F_HIVE_LOCAL) != 0; break;
        case HSA_AMD_SVM_ATTRIB_READ_MOSTLY: *value = (s.flags_and & F_GPU_READ_MOSTLY) != 0; break;
        case HSA_AMD_SVM_ATTRIB_MIGRATION_GRANULARITY: *value = s.granularity; break;
        case HSA_AMD_SVM_ATTRIB_PREFERRED_LOCATION: *value = handle_at(s.preferred); break;
        case HSA_AMD_SVM_ATTRIB_PREFETCH_LOCATION: *value = handle_at(s.prefetch); break;
        default: {   /* ACCESS_QUERY: the attribute is rewritten to the answer */
            stub_hsa_agent_t *a = stub_hsa_agent((hsa_agent_t){*value});
            hsa_amd_svm_attribute_t answer;
            if (!a->is_gpu)
                answer = s.flags_and & F_HOST_ACCESS ? HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE : HSA_AMD_SVM_ATTRIB_ACCESS_QUERY;
            else
                answer = s.any_none[a->device] ? HSA_AMD_SVM_ATTRIB_AGENT_NO_ACCESS
                         : s.all_in_place[a->device] ? HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE_IN_PLACE
                                                     : HSA_AMD_SVM_ATTRIB_AGENT_ACCESSIBLE;
            attribute_list[i].attribute = answer;
        }
        }
    }
    return HSA_STATUS_SUCCESS;
}

/* Can `agent` (a GPU) reach [ptr, ptr+size) as SVM memory? */
bool stub_hsa_svm_gpu_access(const stub_hsa_agent_t *agent, const void *ptr, size_t size) {
    uintptr_t base = (uintptr_t)ptr & ~(uintptr_t)(SVM_PAGE - 1);
    uintptr_t end = ((uintptr_t)ptr + (size ? size : 1) + SVM_PAGE - 1) & ~(uintptr_t)(SVM_PAGE - 1);
    svm_summary_t s;
    pthread_mutex_lock(&lock);
    summarize(base, end, &s);
    pthread_mutex_unlock(&lock);
    return !s.any_none[agent->device];
}

/* ---- prefetch ------------------------------------------------------------------------- */

typedef struct prefetch_op {
    uintptr_t base, end;
    int target;
    stub_signal_t *completion;   /* retained, or NULL */
    uint32_t ndeps;
    stub_signal_t *deps[];       /* retained */
} prefetch_op_t;

static void run_prefetch(void *p, stub_signal_t *stop) {
    prefetch_op_t *op = p;
    bool cancelled = false;
    for (uint32_t i = 0; i < op->ndeps && !cancelled; i++) {
        stub_signal_t *sigs[2] = {stop, op->deps[i]};
        const hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_NE, HSA_SIGNAL_CONDITION_EQ};
        const hsa_signal_value_t values[2] = {0, 0};
        cancelled = stub_sig_wait_any(2, sigs, conds, values, UINT64_MAX, NULL) == 0;
    }
    if (!cancelled) {
        pthread_mutex_lock(&lock);
        if (cover(op->base, op->end))   /* KFD HSA_SVM_ATTR_PREFETCH_LOC */
            for (svm_range_t *r = ranges; r && r->base < op->end; r = r->next)
                if (r->base >= op->base) r->prefetch = op->target;
        pthread_mutex_unlock(&lock);
        if (op->completion) stub_sig_add(op->completion, -1);
    }
    for (uint32_t i = 0; i < op->ndeps; i++) stub_sig_release(op->deps[i]);
    if (op->completion) stub_sig_release(op->completion);
    free(op);
}

/* ROCr Runtime::SvmPrefetch: no checks before the work is queued (an invalid
 * agent is dereferenced there; the stub says INVALID_AGENT instead); the
 * location is set once every dependency reached 0, then the completion
 * signal (may be 0) is decremented. */
hsa_status_t hsa_amd_svm_prefetch_async(void *ptr, size_t size, hsa_agent_t agent, uint32_t num_dep_signals,
                                        const hsa_signal_t *dep_signals, hsa_signal_t completion_signal) {
    HSA_CHECK_OPEN();
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (num_dep_signals && !dep_signals) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    prefetch_op_t *op = calloc(1, sizeof *op + num_dep_signals * sizeof(stub_signal_t *));
    if (!op) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    op->base = (uintptr_t)ptr & ~(uintptr_t)(SVM_PAGE - 1);
    op->end = ((uintptr_t)ptr + size + SVM_PAGE - 1) & ~(uintptr_t)(SVM_PAGE - 1);
    op->target = agent_index(a);
    hsa_status_t st = HSA_STATUS_SUCCESS;
    for (; op->ndeps < num_dep_signals; op->ndeps++)
        if (!(op->deps[op->ndeps] = stub_sig_retain(dep_signals[op->ndeps]))) {
            st = HSA_STATUS_ERROR_INVALID_SIGNAL;
            break;
        }
    if (st == HSA_STATUS_SUCCESS && completion_signal.handle && !(op->completion = stub_sig_retain(completion_signal)))
        st = HSA_STATUS_ERROR_INVALID_SIGNAL;
    if (st == HSA_STATUS_SUCCESS) st = stub_hsa_engine_post(a, run_prefetch, op);
    if (st != HSA_STATUS_SUCCESS) {
        for (uint32_t i = 0; i < op->ndeps; i++) stub_sig_release(op->deps[i]);
        if (op->completion) stub_sig_release(op->completion);
        free(op);
    }
    return st;
}
