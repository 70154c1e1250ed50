/* Device resources: hipDeviceGetDevResource, hipDevSmResourceSplitByCount,
 * hipDevSmResourceSplit, hipDevResourceGenerateDesc (clr
 * hipamd/src/hip_executionctx.cpp, ROCm 7.2: the static ExecutionCtx::
 * deviceGetDevResource, devSmResourceSplitByCount, devSmResourceSplit,
 * devResourceGenerateDesc).
 *
 * A resource counts compute units; smCoscheduledAlignment is the scheduling
 * granule (2 CUs, a WGP, on gfx10+; 1 before).  Every resource the runtime
 * hands out is tagged in its _internal_padding: bytes 0-3 a resource id (0
 * for a whole device), bytes 4-7 the device; a split registers each piece's
 * id with the split's family and the first CU it starts at, so a context
 * made of it gets a CU mask over those CUs, and a descriptor refuses pieces
 * of different splits. */
#include <string.h>

#include "hip_exec_ctx.h"

#ifdef ROCPY_HAVE_hipGreenCtxCreate

#define HIP_MAGIC_RES_DESC 0x52455344u

typedef struct res_meta {
    int device;
    uint32_t id, family;
    unsigned start_cu;
} res_meta_t;

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static res_meta_t *metas;
static size_t nmetas, capmetas;
static atomic_uint next_resource_id = 1;    /* ExecutionCtx::nextResourceId_ */
static atomic_uint next_family_id = 1;      /* ExecutionCtx::nextFamilyId_ */
static hip_registry_t descs = HIP_REGISTRY_INIT;

unsigned hip_res_sm_alignment(int device) {
    return hip_dev(device)->info->gfx_version >= 100000 ? 2 : 1;
}

/* hipamd: multiProcessorCount * alignment, multiProcessorCount being the WGP
 * count in WGP mode; the stub's device reports its CUs, which is that product. */
unsigned hip_res_total_cus(int device) { return hip_dev(device)->info->compute_units; }

static void tag(hipDevResource *r, uint32_t id, int device) {
    int32_t dev = device;
    memcpy(&r->_internal_padding[0], &id, sizeof id);
    memcpy(&r->_internal_padding[4], &dev, sizeof dev);
}

static uint32_t tag_id(const hipDevResource *r) {
    uint32_t id;
    memcpy(&id, &r->_internal_padding[0], sizeof id);
    return id;
}

static int tag_device(const hipDevResource *r) {
    int32_t dev;
    memcpy(&dev, &r->_internal_padding[4], sizeof dev);
    return dev;
}

static bool meta_add(int device, uint32_t id, uint32_t family, unsigned start) {
    pthread_mutex_lock(&meta_lock);
    bool ok = true;
    if (nmetas == capmetas) {
        size_t cap = capmetas ? 2 * capmetas : 64;
        res_meta_t *m = realloc(metas, cap * sizeof *m);
        if (m) {
            metas = m;
            capmetas = cap;
        } else {
            ok = false;
        }
    }
    if (ok) metas[nmetas++] = (res_meta_t){device, id, family, start};
    pthread_mutex_unlock(&meta_lock);
    return ok;
}

static bool meta_find(int device, uint32_t id, res_meta_t *out) {
    bool found = false;
    pthread_mutex_lock(&meta_lock);
    for (size_t i = 0; i < nmetas && !found; i++)
        if (metas[i].device == device && metas[i].id == id) {
            *out = metas[i];
            found = true;
        }
    pthread_mutex_unlock(&meta_lock);
    return found;
}

unsigned hip_res_start_cu(const hipDevResource *r) {
    res_meta_t m;
    uint32_t id = tag_id(r);
    return id != 0 && meta_find(tag_device(r), id, &m) ? m.start_cu : 0;
}

static void fill_sm(hipDevResource *r, unsigned count, unsigned alignment, unsigned flags) {
    memset(r, 0, sizeof *r);
    r->type = hipDevResourceTypeSm;
    r->sm.smCount = count;
    r->sm.smCoscheduledAlignment = alignment;
    r->sm.minSmPartitionSize = alignment;
    r->sm.flags = flags;
}

/* ExecutionCtx::fillRemainder: an invalid resource when nothing remains. */
static void fill_remainder(hipDevResource *r, unsigned remaining, unsigned alignment) {
    if (!r) return;
    if (remaining > 0) {
        fill_sm(r, remaining, alignment, 0);
    } else {
        memset(r, 0, sizeof *r);
        r->type = hipDevResourceTypeInvalid;
    }
}

/* Tag a piece of a split and register where it starts. */
static hipError_t register_piece(hipDevResource *r, int device, uint32_t family, unsigned start) {
    uint32_t id = atomic_fetch_add(&next_resource_id, 1);
    tag(r, id, device);
    return meta_add(device, id, family, start) ? hipSuccess : hipErrorOutOfMemory;
}

/* The device a tagged resource belongs to: clr returns hipErrorInvalidDevice
 * for a negative one (and indexes g_devices with any other, which the stub
 * refuses the same way). */
static hipError_t input_device(const hipDevResource *in, int *device) {
    *device = tag_device(in);
    return *device < 0 || *device >= hip_device_count() ? hipErrorInvalidDevice : hipSuccess;
}

hipError_t hip_res_of_device(int device, hipDevResource *res, hipDevResourceType type) {
    if (!res) return hipErrorInvalidValue;
    if (type != hipDevResourceTypeSm) return hipErrorInvalidResourceType;
    if (device < 0 || device >= hip_device_count()) return hipErrorInvalidDevice;
    fill_sm(res, hip_res_total_cus(device), hip_res_sm_alignment(device), 0);
    tag(res, 0, device);
    return hipSuccess;
}

hipError_t hipDeviceGetDevResource(hipDevice_t device, hipDevResource *resource,
                                   hipDevResourceType type) {
    HIP_INIT_API();
    HIP_RETURN(hip_res_of_device(device, resource, type));
}

/* ExecutionCtx::devSmResourceSplitByCount: as many groups of minCount CUs
 * (rounded up to the alignment; 0 means one granule) as fit, at most
 * *nbGroups; result NULL asks how many fit. */
hipError_t hipDevSmResourceSplitByCount(hipDevResource *result, unsigned int *nbGroups,
                                        const hipDevResource *input, hipDevResource *remainder,
                                        unsigned int flags, unsigned int minCount) {
    HIP_INIT_API();
    if (!nbGroups || !input) HIP_RETURN(hipErrorInvalidValue);
    if (input->type != hipDevResourceTypeSm) HIP_RETURN(hipErrorInvalidResourceType);
    if (flags & hipDevSmResourceSplitIgnoreSmCoscheduling) HIP_RETURN(hipErrorNotSupported);
    unsigned total = input->sm.smCount, alignment = input->sm.smCoscheduledAlignment;
    /* clr divides by the alignment unchecked: a resource not made by the
     * runtime (alignment 0) is refused instead of dividing by zero */
    if (alignment == 0) HIP_RETURN(hipErrorInvalidResourceConfiguration);
    unsigned aligned_min = (minCount + alignment - 1) / alignment * alignment;
    if (aligned_min == 0) aligned_min = alignment;
    unsigned possible = total / aligned_min;
    if (!result) {
        *nbGroups = possible;
        HIP_RETURN(hipSuccess);
    }
    int device;
    HIP_RETURN_ONFAIL(input_device(input, &device));
    unsigned start = hip_res_start_cu(input);
    uint32_t family = atomic_fetch_add(&next_family_id, 1);
    unsigned groups = *nbGroups < possible ? *nbGroups : possible;
    *nbGroups = groups;
    unsigned assigned = 0;
    for (unsigned i = 0; i < groups; i++) {
        fill_sm(&result[i], aligned_min, alignment, 0);
        HIP_RETURN_ONFAIL(register_piece(&result[i], device, family, start + assigned));
        assigned += aligned_min;
    }
    fill_remainder(remainder, total - assigned, alignment);
    if (remainder && remainder->type != hipDevResourceTypeInvalid)
        HIP_RETURN_ONFAIL(register_piece(remainder, device, family, start + assigned));
    HIP_RETURN(hipSuccess);
}

/* ExecutionCtx::devSmResourceSplit: one group per groupParams entry, each of
 * its smCount CUs (0: discovery, what is left rounded down to the group's
 * coscheduled count, or all of it with hipDevSmResourceGroupBackfill); the
 * discovered counts are written back into groupParams. */
hipError_t hipDevSmResourceSplit(hipDevResource *result, unsigned int nbGroups,
                                 const hipDevResource *input, hipDevResource *remainder,
                                 unsigned int flags, hipDevSmResourceGroupParams *groupParams) {
    HIP_INIT_API();
    if (!input || !groupParams) HIP_RETURN(hipErrorInvalidValue);
    if (input->type != hipDevResourceTypeSm) HIP_RETURN(hipErrorInvalidResourceType);
    if (flags != 0) HIP_RETURN(hipErrorInvalidValue);
    unsigned total = input->sm.smCount, alignment = input->sm.smCoscheduledAlignment;
    for (unsigned i = 0; i < nbGroups; i++) {
        hipDevSmResourceGroupParams *g = &groupParams[i];
        if (g->coscheduledSmCount == 0) g->coscheduledSmCount = alignment;
        if (g->preferredCoscheduledSmCount == 0) g->preferredCoscheduledSmCount = g->coscheduledSmCount;
        if (g->smCount != 0 && (g->smCount < alignment || g->smCount > total))
            HIP_RETURN(hipErrorInvalidResourceConfiguration);
        /* clr divides by it unchecked (an input not made by the runtime) */
        if (g->coscheduledSmCount == 0) HIP_RETURN(hipErrorInvalidResourceConfiguration);
    }
    unsigned assigned = 0;
    for (unsigned i = 0; i < nbGroups; i++) {
        hipDevSmResourceGroupParams *g = &groupParams[i];
        if (g->smCount == 0) {
            unsigned available = total - assigned;
            g->smCount = (g->flags & hipDevSmResourceGroupBackfill)
                             ? available
                             : available / g->coscheduledSmCount * g->coscheduledSmCount;
        }
        assigned += g->smCount;
    }
    if (assigned > total) HIP_RETURN(hipErrorInvalidResourceConfiguration);
    int device;
    HIP_RETURN_ONFAIL(input_device(input, &device));
    unsigned start = hip_res_start_cu(input);
    uint32_t family = atomic_fetch_add(&next_family_id, 1);
    if (result) {
        unsigned offset = 0;
        for (unsigned i = 0; i < nbGroups; i++) {
            hipDevSmResourceGroupParams *g = &groupParams[i];
            unsigned cosched = g->coscheduledSmCount, count = g->smCount;
            if (count == 0 || count < cosched) HIP_RETURN(hipErrorInvalidResourceConfiguration);
            if (count % cosched != 0 && !(g->flags & hipDevSmResourceGroupBackfill))
                HIP_RETURN(hipErrorInvalidResourceConfiguration);
            fill_sm(&result[i], count, cosched, g->flags);
            HIP_RETURN_ONFAIL(register_piece(&result[i], device, family, start + offset));
            offset += count;
        }
    }
    fill_remainder(remainder, total - assigned, alignment);
    if (remainder && remainder->type != hipDevResourceTypeInvalid)
        HIP_RETURN_ONFAIL(register_piece(remainder, device, family, start + assigned));
    HIP_RETURN(hipSuccess);
}

/* ExecutionCtx::devResourceGenerateDesc: SM resources only, none empty, one
 * alignment, one device, and the tagged ones of one split family. */
hipError_t hipDevResourceGenerateDesc(hipDevResourceDesc_t *phDesc, hipDevResource *resources,
                                      unsigned int nbResources) {
    HIP_INIT_API();
    if (!phDesc || !resources || nbResources == 0) HIP_RETURN(hipErrorInvalidValue);
    for (unsigned i = 0; i < nbResources; i++)
        if (resources[i].type != hipDevResourceTypeSm) HIP_RETURN(hipErrorInvalidResourceType);
    unsigned ref_alignment = 0;
    uint32_t ref_family = 0;
    bool family_seen = false;
    int ref_device = -1;
    for (unsigned i = 0; i < nbResources; i++) {
        const hipDevResource *r = &resources[i];
        if (r->sm.smCount == 0) HIP_RETURN(hipErrorInvalidResourceConfiguration);
        if (ref_alignment == 0) ref_alignment = r->sm.smCoscheduledAlignment;
        else if (r->sm.smCoscheduledAlignment != ref_alignment)
            HIP_RETURN(hipErrorInvalidResourceConfiguration);
        int dev = tag_device(r);
        if (ref_device == -1) ref_device = dev;
        else if (dev != ref_device) HIP_RETURN(hipErrorInvalidResourceConfiguration);
        res_meta_t m;
        if (tag_id(r) != 0 && meta_find(dev, tag_id(r), &m)) {
            if (!family_seen) {
                ref_family = m.family;
                family_seen = true;
            } else if (m.family != ref_family) {
                HIP_RETURN(hipErrorInvalidResourceConfiguration);
            }
        }
    }
    hip_res_desc_t *d = calloc(1, sizeof *d + nbResources * sizeof(hipDevResource));
    if (!d) HIP_RETURN(hipErrorOutOfMemory);
    d->magic = HIP_MAGIC_RES_DESC;
    d->device = ref_device;
    d->count = nbResources;
    atomic_init(&d->owners, 0);
    memcpy(d->res, resources, nbResources * sizeof(hipDevResource));
    if (!hip_registry_add(&descs, d)) {
        free(d);
        HIP_RETURN(hipErrorOutOfMemory);
    }
    *phDesc = (hipDevResourceDesc_t)d;
    HIP_RETURN(hipSuccess);
}

/* A descriptor has no destroy call: in clr the context made of it owns it
 * and deletes it with itself (one not used stays allocated).  The stub keeps
 * it while any context made of it lives, so a second context of one
 * descriptor (freed twice in clr) is safe; a descriptor whose contexts are
 * gone is no longer live. */
hip_res_desc_t *hip_res_desc_resolve(hipDevResourceDesc_t handle) {
    return handle && hip_registry_contains(&descs, handle) ? (hip_res_desc_t *)handle : NULL;
}

void hip_res_desc_retain(hip_res_desc_t *d) { atomic_fetch_add(&d->owners, 1); }

void hip_res_desc_release(hip_res_desc_t *d) {
    if (atomic_fetch_sub(&d->owners, 1) == 1 && hip_registry_remove(&descs, d)) {
        d->magic = 0;
        free(d);
    }
}

#endif
