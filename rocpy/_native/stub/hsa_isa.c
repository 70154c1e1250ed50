/* ISAs and wavefronts (ROCr core/runtime/isa.cpp): one ISA object per target
 * id ("amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-"), created on first use and
 * kept for the life of the process, as ROCr's IsaRegistry keeps its table. */
#include "hsa_internal.h"
#include "stub_codeobject.h"

#include <stdio.h>
#include <string.h>

#define ISA_PREFIX "amdgcn-amd-amdhsa--"
#define MAX_ISAS 64

typedef struct stub_isa {
    char name[96];      /* full ISA name */
    char target[64];    /* the target id part */
    uint32_t major;
} stub_isa_t;

/* The processors ROCm 5.x/6.x knows for the stub's device profiles, and
 * whether their targets take the sramecc / xnack features. */
static const struct {
    const char *gfx;
    bool sramecc, xnack;
} PROCESSORS[] = {
    {"gfx900", false, true},  {"gfx906", true, true},   {"gfx908", true, true},
    {"gfx90a", true, true},   {"gfx90c", false, true},  {"gfx940", true, true},
    {"gfx941", true, true},   {"gfx942", true, true},   {"gfx1010", false, true},
    {"gfx1030", false, false}, {"gfx1031", false, false}, {"gfx1100", false, false},
    {"gfx1101", false, false}, {"gfx1102", false, false},
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static stub_isa_t isas[MAX_ISAS];
static int isa_count;

/* Is `target` a well-formed target id: a known processor, then at most
 * ":sramecc±" and ":xnack±" in that order, each only where supported? */
static bool valid_target(const char *target) {
    size_t len = strcspn(target, ":");
    int p = -1;
    for (size_t i = 0; i < sizeof PROCESSORS / sizeof PROCESSORS[0]; i++)
        if (strlen(PROCESSORS[i].gfx) == len && strncmp(PROCESSORS[i].gfx, target, len) == 0) p = (int)i;
    if (p < 0) return false;
    const char *rest = target + len;
    if (strncmp(rest, ":sramecc", 8) == 0) {
        if (!PROCESSORS[p].sramecc || (rest[8] != '+' && rest[8] != '-')) return false;
        rest += 9;
    }
    if (strncmp(rest, ":xnack", 6) == 0) {
        if (!PROCESSORS[p].xnack || (rest[6] != '+' && rest[6] != '-')) return false;
        rest += 7;
    }
    return *rest == '\0';
}

/* "gfx90a" -> 9, "gfx1030" -> 10: the last two characters are the minor
 * version and stepping. */
static uint32_t major_of(const char *target) {
    size_t len = strcspn(target, ":");
    uint32_t major = 0;
    for (size_t i = 3; i + 2 < len; i++) major = major * 10 + (uint32_t)(target[i] - '0');
    return major;
}

/* The ISA object for a target id, created if new; NULL if the table is full. */
static stub_isa_t *isa_for_target(const char *target) {
    pthread_mutex_lock(&lock);
    stub_isa_t *found = NULL;
    for (int i = 0; i < isa_count && !found; i++)
        if (strcmp(isas[i].target, target) == 0) found = &isas[i];
    if (!found && isa_count < MAX_ISAS) {
        found = &isas[isa_count++];
        snprintf(found->target, sizeof found->target, "%s", target);
        snprintf(found->name, sizeof found->name, ISA_PREFIX "%s", target);
        found->major = major_of(target);
    }
    pthread_mutex_unlock(&lock);
    return found;
}

static stub_isa_t *isa_of(hsa_isa_t handle) {
    uintptr_t p = (uintptr_t)handle.handle, base = (uintptr_t)isas;
    if (p < base || (p - base) % sizeof(stub_isa_t) != 0) return NULL;
    size_t i = (p - base) / sizeof(stub_isa_t);
    pthread_mutex_lock(&lock);
    bool ok = (int)i < isa_count;
    pthread_mutex_unlock(&lock);
    return ok ? &isas[i] : NULL;
}

static hsa_isa_t handle_of(const stub_isa_t *isa) { return (hsa_isa_t){(uint64_t)(uintptr_t)isa}; }

hsa_isa_t stub_hsa_agent_isa(const stub_hsa_agent_t *agent) {
    if (!agent->is_gpu) return (hsa_isa_t){0};
    stub_isa_t *isa = isa_for_target(agent->dev->arch);
    return isa ? handle_of(isa) : (hsa_isa_t){0};
}

hsa_status_t hsa_isa_from_name(const char *name, hsa_isa_t *isa) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(name);
    HSA_CHECK_PTR(isa);
    if (strncmp(name, ISA_PREFIX, strlen(ISA_PREFIX)) != 0) return HSA_STATUS_ERROR_INVALID_ISA_NAME;
    const char *target = name + strlen(ISA_PREFIX);
    if (strlen(target) >= sizeof isas[0].target || !valid_target(target))
        return HSA_STATUS_ERROR_INVALID_ISA_NAME;
    stub_isa_t *found = isa_for_target(target);
    if (!found) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *isa = handle_of(found);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t agent, hsa_status_t (*callback)(hsa_isa_t isa, void *data),
                                    void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    hsa_isa_t isa = stub_hsa_agent_isa(a);
    return isa.handle ? callback(isa, data) : HSA_STATUS_SUCCESS;
}

static bool isa_info(const stub_isa_t *isa, int attribute, void *value) {
    switch (attribute) {
    case HSA_ISA_INFO_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(isa->name) + 1; return true;
    case HSA_ISA_INFO_NAME: memcpy(value, isa->name, strlen(isa->name) + 1); return true;
    case HSA_ISA_INFO_CALL_CONVENTION_COUNT: *(uint32_t *)value = 1; return true;
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONT_SIZE: *(uint32_t *)value = 64; return true;
    case HSA_ISA_INFO_CALL_CONVENTION_INFO_WAVEFRONTS_PER_COMPUTE_UNIT: *(uint32_t *)value = 40; return true;
    case HSA_ISA_INFO_MACHINE_MODELS: {
        const bool models[2] = {false, true};
        memcpy(value, models, sizeof models);
        return true;
    }
    case HSA_ISA_INFO_PROFILES: {
        const bool profiles[2] = {true, false};
        memcpy(value, profiles, sizeof profiles);
        return true;
    }
    case HSA_ISA_INFO_DEFAULT_FLOAT_ROUNDING_MODES:
    case HSA_ISA_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES: {
        const bool modes[3] = {false, false, true};
        memcpy(value, modes, sizeof modes);
        return true;
    }
    case HSA_ISA_INFO_FAST_F16_OPERATION: *(bool *)value = isa->major >= 8; return true;
    case HSA_ISA_INFO_WORKGROUP_MAX_DIM: {
        const uint16_t dims[3] = {1024, 1024, 1024};
        memcpy(value, dims, sizeof dims);
        return true;
    }
    case HSA_ISA_INFO_WORKGROUP_MAX_SIZE: *(uint32_t *)value = 1024; return true;
    case HSA_ISA_INFO_GRID_MAX_DIM: {
        const hsa_dim3_t dims = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
        memcpy(value, &dims, sizeof dims);
        return true;
    }
    case HSA_ISA_INFO_GRID_MAX_SIZE: *(uint64_t *)value = UINT64_MAX; return true;
    case HSA_ISA_INFO_FBARRIER_MAX_SIZE: *(uint32_t *)value = 32; return true;
    default: return false;
    }
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t isa, hsa_isa_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    stub_isa_t *i = isa_of(isa);
    if (!i) return HSA_STATUS_ERROR_INVALID_ISA;
    return isa_info(i, (int)attribute, value) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_isa_get_info(hsa_isa_t isa, hsa_isa_info_t attribute, uint32_t index, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    if (index != 0) return HSA_STATUS_ERROR_INVALID_INDEX;
    stub_isa_t *i = isa_of(isa);
    if (!i) return HSA_STATUS_ERROR_INVALID_ISA;
    return isa_info(i, (int)attribute, value) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

hsa_status_t hsa_isa_get_exception_policies(hsa_isa_t isa, hsa_profile_t profile, uint16_t *mask) {
    HSA_CHECK_OPEN();
    if (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    HSA_CHECK_PTR(mask);
    if (!isa_of(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
    *mask = 0;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_get_round_method(hsa_isa_t isa, hsa_fp_type_t fp_type, hsa_flush_mode_t flush_mode,
                                      hsa_round_method_t *round_method) {
    HSA_CHECK_OPEN();
    if (fp_type != HSA_FP_TYPE_16 && fp_type != HSA_FP_TYPE_32 && fp_type != HSA_FP_TYPE_64)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (flush_mode != HSA_FLUSH_MODE_FTZ && flush_mode != HSA_FLUSH_MODE_NON_FTZ)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    HSA_CHECK_PTR(round_method);
    if (!isa_of(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
    *round_method = HSA_ROUND_METHOD_SINGLE;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_isa_compatible(hsa_isa_t code_object_isa, hsa_isa_t agent_isa, bool *result) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(result);
    stub_isa_t *code = isa_of(code_object_isa), *agent = isa_of(agent_isa);
    if (!code || !agent) return HSA_STATUS_ERROR_INVALID_ISA;
    *result = stub_target_matches(code->target, agent->target);
    return HSA_STATUS_SUCCESS;
}

/* One wavefront object, as in ROCr: 64 work-items whatever the ISA. */
static const uint32_t wavefront_size = 64;

hsa_status_t hsa_isa_iterate_wavefronts(hsa_isa_t isa, hsa_status_t (*callback)(hsa_wavefront_t w, void *data),
                                        void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    if (!isa_of(isa)) return HSA_STATUS_ERROR_INVALID_ISA;
    return callback((hsa_wavefront_t){(uint64_t)(uintptr_t)&wavefront_size}, data);
}

hsa_status_t hsa_wavefront_get_info(hsa_wavefront_t wavefront, hsa_wavefront_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    if (wavefront.handle != (uint64_t)(uintptr_t)&wavefront_size) return HSA_STATUS_ERROR_INVALID_WAVEFRONT;
    if (attribute != HSA_WAVEFRONT_INFO_SIZE) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *(uint32_t *)value = wavefront_size;
    return HSA_STATUS_SUCCESS;
}
