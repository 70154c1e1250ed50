/* Agents: one CPU agent (KFD node 0) and one GPU agent per stub device
 * (nodes 1..N), answering hsa_agent_get_info as ROCr's CpuAgent::GetInfo and
 * GpuAgent::GetInfo do; their caches (core::Cache). */
#include "hsa_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_AGENTS (1 + STUB_MAX_DEVICES)
#define MAX_CACHES 4

typedef struct stub_cache {
    char name[80];
    uint8_t level;
    uint32_t size;
} stub_cache_t;

static stub_hsa_agent_t agents[MAX_AGENTS];
static int agent_count;
static stub_cache_t caches[MAX_AGENTS][MAX_CACHES];
static int cache_count[MAX_AGENTS];
static char cpu_name[64];
static uint32_t cpu_cores, cpu_mhz;
static pthread_once_t agents_once = PTHREAD_ONCE_INIT;

/* The CPU's marketing name and clock, as KFD's topology takes them from
 * /proc/cpuinfo and cpufreq. */
static void read_cpu_identity(void) {
    snprintf(cpu_name, sizeof cpu_name, "%s", "rocpy stub CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    bool named = false;
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t') v++;
        v[strcspn(v, "\n")] = '\0';
        if (!named && strncmp(line, "model name", 10) == 0 && *v) {
            snprintf(cpu_name, sizeof cpu_name, "%s", v);
            named = true;
        } else if (mhz == 0 && strncmp(line, "cpu MHz", 7) == 0) {
            mhz = atof(v);
        }
    }
    if (f) fclose(f);
    f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    unsigned long khz = 0;
    if (f && fscanf(f, "%lu", &khz) == 1 && khz > 0) mhz = (double)khz / 1000.0;
    if (f) fclose(f);
    cpu_mhz = (uint32_t)mhz;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_cores = n > 0 ? (uint32_t)n : 1;
}

static void add_cache(int agent, const char *device_name, uint8_t level, uint32_t size) {
    if (size == 0 || cache_count[agent] == MAX_CACHES) return;
    stub_cache_t *c = &caches[agent][cache_count[agent]++];
    snprintf(c->name, sizeof c->name, "%s L%u", device_name, level);
    c->level = level;
    c->size = size;
}

static uint32_t sys_cache(int name, uint32_t fallback) {
    long v = sysconf(name);
    return v > 0 ? (uint32_t)v : fallback;
}

static void init_agents(void) {
    read_cpu_identity();
    agents[0] = (stub_hsa_agent_t){false, -1, 0, NULL};
    add_cache(0, cpu_name, 1, sys_cache(_SC_LEVEL1_DCACHE_SIZE, 32 * 1024));
    add_cache(0, cpu_name, 2, sys_cache(_SC_LEVEL2_CACHE_SIZE, 512 * 1024));
    add_cache(0, cpu_name, 3, sys_cache(_SC_LEVEL3_CACHE_SIZE, 32 * 1024 * 1024));
    int n = stub_device_count();
    for (int i = 0; i < n; i++) {
        stub_device_t *d = stub_device(i);
        agents[1 + i] = (stub_hsa_agent_t){true, i, (uint32_t)(1 + i), d};
        add_cache(1 + i, d->gfx, 1, 16 * 1024);
        add_cache(1 + i, d->gfx, 2, d->l2_cache_size);
    }
    agent_count = 1 + n;
}

void stub_hsa_agents_init(void) { pthread_once(&agents_once, init_agents); }

stub_hsa_agent_t *stub_hsa_agent(hsa_agent_t handle) {
    uintptr_t p = (uintptr_t)handle.handle, base = (uintptr_t)agents;
    if (p < base || (p - base) % sizeof agents[0] != 0) return NULL;
    size_t i = (p - base) / sizeof agents[0];
    return (int)i < agent_count ? &agents[i] : NULL;
}

hsa_agent_t stub_hsa_agent_handle(const stub_hsa_agent_t *agent) {
    return (hsa_agent_t){(uint64_t)(uintptr_t)agent};
}

stub_hsa_agent_t *stub_hsa_cpu_agent(void) { return &agents[0]; }

stub_hsa_agent_t *stub_hsa_gpu_agent(int device) {
    return device >= 0 && device + 1 < agent_count ? &agents[1 + device] : NULL;
}

int stub_hsa_gpu_count(void) { return agent_count > 0 ? agent_count - 1 : 0; }

uint64_t stub_hsa_access_bit(const stub_hsa_agent_t *agent) {
    return agent->is_gpu ? 1ull << agent->device : STUB_ACCESS_CPU;
}

static int agent_index(const stub_hsa_agent_t *a) { return (int)(a - agents); }

hsa_status_t hsa_iterate_agents(hsa_status_t (*callback)(hsa_agent_t agent, void *data), void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    for (int i = 0; i < agent_count; i++) {
        hsa_status_t s = callback(stub_hsa_agent_handle(&agents[i]), data);
        if (s != HSA_STATUS_SUCCESS) return s;
    }
    return HSA_STATUS_SUCCESS;
}

static void put_name(void *value, const char *name) {
    size_t len = strlen(name);
    memset(value, 0, 64);
    memcpy(value, name, len < 63 ? len : 63);
}

static void cache_sizes(const stub_hsa_agent_t *a, uint32_t out[4]) {
    memset(out, 0, 4 * sizeof(uint32_t));
    int i = agent_index(a);
    for (int c = 0; c < cache_count[i]; c++) out[caches[i][c].level - 1] = caches[i][c].size;
}

/* Attributes both kinds of agent answer alike; -1 if not one of them. */
static int common_info(const stub_hsa_agent_t *a, int attribute, void *value) {
    switch (attribute) {
    case HSA_AGENT_INFO_MACHINE_MODEL: *(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE; return 0;
    case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
    case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
        *(hsa_default_float_rounding_mode_t *)value = HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR;
        return 0;
    case HSA_AGENT_INFO_QUEUE_TYPE: *(hsa_queue_type32_t *)value = HSA_QUEUE_TYPE_MULTI; return 0;
    case HSA_AGENT_INFO_NODE:
    case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID: *(uint32_t *)value = a->node; return 0;
    case HSA_AGENT_INFO_CACHE_SIZE: cache_sizes(a, value); return 0;
    case HSA_AGENT_INFO_VERSION_MAJOR:
    case HSA_AGENT_INFO_VERSION_MINOR: *(uint16_t *)value = 1; return 0;
    case HSA_AMD_AGENT_INFO_HDP_FLUSH: memset(value, 0, sizeof(hsa_amd_hdp_flush_t)); return 0;
    case HSA_AMD_AGENT_INFO_DOMAIN: *(uint32_t *)value = 0; return 0;
    default: return -1;
    }
}

static hsa_status_t cpu_info(const stub_hsa_agent_t *a, int attribute, void *value) {
    if (common_info(a, attribute, value) == 0) return HSA_STATUS_SUCCESS;
    switch (attribute) {
    case HSA_AGENT_INFO_NAME:
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME: put_name(value, cpu_name); break;
    case HSA_AGENT_INFO_VENDOR_NAME: put_name(value, "CPU"); break;
    /* ROCr's CPU agent has no AQL packet processor: no dispatch features */
    case HSA_AGENT_INFO_FEATURE: *(hsa_agent_feature_t *)value = (hsa_agent_feature_t)0; break;
    case HSA_AGENT_INFO_FAST_F16_OPERATION: *(bool *)value = false; break;
    case HSA_AGENT_INFO_PROFILE: *(hsa_profile_t *)value = HSA_PROFILE_FULL; break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: memset(value, 0, 3 * sizeof(uint16_t)); break;
    case HSA_AGENT_INFO_GRID_MAX_DIM: memset(value, 0, sizeof(hsa_dim3_t)); break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE:
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
    case HSA_AGENT_INFO_GRID_MAX_SIZE:
    case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
    case HSA_AGENT_INFO_QUEUES_MAX:
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
    case HSA_AMD_AGENT_INFO_CHIP_ID:
    case HSA_AMD_AGENT_INFO_BDFID:
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES:
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
    case HSA_AMD_AGENT_INFO_ASIC_REVISION: *(uint32_t *)value = 0; break;
    case HSA_AGENT_INFO_DEVICE: *(hsa_device_type_t *)value = HSA_DEVICE_TYPE_CPU; break;
    case HSA_AGENT_INFO_ISA: ((hsa_isa_t *)value)->handle = 0; break;
    case HSA_AGENT_INFO_EXTENSIONS: memset(value, 0, 128); break;
    case HSA_AMD_AGENT_INFO_CACHELINE_SIZE: *(uint32_t *)value = 64; break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT: *(uint32_t *)value = cpu_cores; break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: *(uint32_t *)value = cpu_mhz; break;
    case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS: *(uint32_t *)value = 1; break;
    /* ROCr: "At this point CPU devices do not support UUID's." */
    case HSA_AMD_AGENT_INFO_UUID: strcpy(value, "CPU-XX"); break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

static uint32_t waves_per_simd(const stub_device_t *d) {
    if (d->gfx_version >= 100000) return 16;     /* RDNA: 16 waves per SIMD */
    return d->gfx_version >= 90010 ? 8 : 10;     /* CDNA2/3: 8; GCN/CDNA1: 10 */
}

static uint32_t shader_engines(const stub_device_t *d) {
    return d->compute_units >= 96 ? 8 : 4;
}

static uint32_t xcc_count(const stub_device_t *d) {
    if (strcmp(d->gfx, "gfx940") == 0) return 6;
    if (strcmp(d->gfx, "gfx941") == 0 || strcmp(d->gfx, "gfx942") == 0) return 8;
    return 1;
}

/* amdgpu_drm.h family ids: AI (gfx9), NV (gfx10), GC_11_0_0 (gfx11) */
static uint32_t family_id(const stub_device_t *d) {
    uint32_t major = d->gfx_version / 10000;
    return major >= 11 ? 145 : major == 10 ? 143 : 141;
}

static uint64_t gpu_uuid(const stub_device_t *d) {
    /* stable per (chip, physical index), like a board serial */
    return 0x5354554200000000ull | ((uint64_t)d->chip_id << 16) | (uint64_t)d->physical;
}

static hsa_status_t gpu_info(const stub_hsa_agent_t *a, int attribute, void *value) {
    const stub_device_t *d = a->dev;
    if (common_info(a, attribute, value) == 0) return HSA_STATUS_SUCCESS;
    switch (attribute) {
    case HSA_AGENT_INFO_NAME: put_name(value, d->gfx); break;
    case HSA_AGENT_INFO_VENDOR_NAME: put_name(value, "AMD"); break;
    case HSA_AGENT_INFO_FEATURE: *(hsa_agent_feature_t *)value = HSA_AGENT_FEATURE_KERNEL_DISPATCH; break;
    case HSA_AGENT_INFO_FAST_F16_OPERATION: *(bool *)value = d->gfx_version >= 80000; break;
    case HSA_AGENT_INFO_PROFILE: *(hsa_profile_t *)value = HSA_PROFILE_BASE; break;
    case HSA_AGENT_INFO_WAVEFRONT_SIZE: *(uint32_t *)value = d->wavefront_size; break;
    case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
        const uint16_t dims[3] = {1024, 1024, 1024};
        memcpy(value, dims, sizeof dims);
        break;
    }
    case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE: *(uint32_t *)value = 1024; break;
    case HSA_AGENT_INFO_GRID_MAX_DIM: {
        const hsa_dim3_t dims = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
        memcpy(value, &dims, sizeof dims);
        break;
    }
    case HSA_AGENT_INFO_GRID_MAX_SIZE: *(uint32_t *)value = UINT32_MAX; break;
    case HSA_AGENT_INFO_FBARRIER_MAX_SIZE: *(uint32_t *)value = 32; break;
    case HSA_AGENT_INFO_QUEUES_MAX: *(uint32_t *)value = STUB_QUEUES_MAX; break;
    case HSA_AGENT_INFO_QUEUE_MIN_SIZE: *(uint32_t *)value = STUB_QUEUE_MIN_PACKETS; break;
    case HSA_AGENT_INFO_QUEUE_MAX_SIZE: *(uint32_t *)value = STUB_QUEUE_MAX_PACKETS; break;
    case HSA_AGENT_INFO_DEVICE: *(hsa_device_type_t *)value = HSA_DEVICE_TYPE_GPU; break;
    case HSA_AGENT_INFO_ISA: *(hsa_isa_t *)value = stub_hsa_agent_isa(a); break;
    case HSA_AGENT_INFO_EXTENSIONS:
        memset(value, 0, 128);
        ((uint8_t *)value)[HSA_EXTENSION_AMD_PROFILER / 8] |= (uint8_t)(1u << (HSA_EXTENSION_AMD_PROFILER % 8));
        break;
    case HSA_AMD_AGENT_INFO_CHIP_ID: *(uint32_t *)value = d->chip_id; break;
    case HSA_AMD_AGENT_INFO_CACHELINE_SIZE: *(uint32_t *)value = 128; break;
    case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
    case HSA_AMD_AGENT_INFO_COOPERATIVE_COMPUTE_UNIT_COUNT: *(uint32_t *)value = d->compute_units; break;
    case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY: *(uint32_t *)value = d->max_clock_mhz; break;
    case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS: *(uint32_t *)value = 4; break;
    case HSA_AMD_AGENT_INFO_BDFID: *(uint32_t *)value = d->pci_bus_id << 8; break;
    case HSA_AMD_AGENT_INFO_MEMORY_WIDTH: *(uint32_t *)value = d->memory_bus_width; break;
    case HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY: *(uint32_t *)value = d->memory_clock_mhz; break;
    case HSA_AMD_AGENT_INFO_PRODUCT_NAME: put_name(value, d->name); break;
    case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU: *(uint32_t *)value = d->simds_per_cu * waves_per_simd(d); break;
    case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU: *(uint32_t *)value = d->simds_per_cu; break;
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES: *(uint32_t *)value = shader_engines(d); break;
    case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE: *(uint32_t *)value = 1; break;
    /* no GWS in the stub, so no cooperative queues either */
    case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES: *(bool *)value = false; break;
    case HSA_AMD_AGENT_INFO_UUID:
        snprintf(value, 21, "GPU-%016llx", (unsigned long long)gpu_uuid(d));
        break;
    case HSA_AMD_AGENT_INFO_ASIC_REVISION: *(uint32_t *)value = 0; break;
    case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS: *(bool *)value = false; break;
    case STUB_AMD_AGENT_INFO_MEMORY_AVAIL:
        *(uint64_t *)value = d->global_mem_size - stub_mem_used(a->device);
        break;
    case STUB_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY: *(uint64_t *)value = STUB_GPU_TICK_HZ; break;
    case STUB_AMD_AGENT_INFO_ASIC_FAMILY_ID: *(uint32_t *)value = family_id(d); break;
    case STUB_AMD_AGENT_INFO_UCODE_VERSION:
    case STUB_AMD_AGENT_INFO_SDMA_UCODE_VERSION:
    case STUB_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG:
    case STUB_AMD_AGENT_INFO_IOMMU_SUPPORT: *(uint32_t *)value = 0; break;
    case STUB_AMD_AGENT_INFO_NUM_SDMA_ENG: *(uint32_t *)value = 2; break;
    case STUB_AMD_AGENT_INFO_NUM_XCC: *(uint32_t *)value = xcc_count(d); break;
    case STUB_AMD_AGENT_INFO_DRIVER_UID: *(uint32_t *)value = (uint32_t)(gpu_uuid(d) * 2654435761u); break;
    case STUB_AMD_AGENT_INFO_NEAREST_CPU: *(hsa_agent_t *)value = stub_hsa_agent_handle(&agents[0]); break;
    case STUB_AMD_AGENT_INFO_MEMORY_PROPERTIES: memset(value, 0, 8); break;  /* a dGPU: not an APU */
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t agent, hsa_agent_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!stub_hsa_attribute_known(STUB_HSA_AGENT_INFO, (int)attribute)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return a->is_gpu ? gpu_info(a, (int)attribute, value) : cpu_info(a, (int)attribute, value);
}

hsa_status_t hsa_agent_get_exception_policies(hsa_agent_t agent, hsa_profile_t profile, uint16_t *mask) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(mask);
    if (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!stub_hsa_agent(agent)) return HSA_STATUS_ERROR_INVALID_AGENT;
    *mask = 0;
    return HSA_STATUS_SUCCESS;
}

/* ---- caches ------------------------------------------------------------ */

static stub_cache_t *cache_of(hsa_cache_t handle) {
    uintptr_t p = (uintptr_t)handle.handle, base = (uintptr_t)caches;
    if (p < base || (p - base) % sizeof(stub_cache_t) != 0) return NULL;
    size_t i = (p - base) / sizeof(stub_cache_t);
    if (i >= (size_t)MAX_AGENTS * MAX_CACHES) return NULL;
    int agent = (int)(i / MAX_CACHES), slot = (int)(i % MAX_CACHES);
    return agent < agent_count && slot < cache_count[agent] ? &caches[agent][slot] : NULL;
}

hsa_status_t hsa_agent_iterate_caches(hsa_agent_t agent,
                                      hsa_status_t (*callback)(hsa_cache_t cache, void *data),
                                      void *data) {
    HSA_CHECK_OPEN();
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    HSA_CHECK_PTR(callback);
    int i = agent_index(a);
    for (int c = 0; c < cache_count[i]; c++) {
        hsa_status_t s = callback((hsa_cache_t){(uint64_t)(uintptr_t)&caches[i][c]}, data);
        if (s != HSA_STATUS_SUCCESS) return s;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_cache_get_info(hsa_cache_t cache, hsa_cache_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    stub_cache_t *c = cache_of(cache);
    if (!c) return HSA_STATUS_ERROR_INVALID_CACHE;
    HSA_CHECK_PTR(value);
    switch (attribute) {
    case HSA_CACHE_INFO_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(c->name); break;
    /* ROCr's core::Cache::GetInfo hands out a pointer to its own string */
    case HSA_CACHE_INFO_NAME: *(const char **)value = c->name; break;
    case HSA_CACHE_INFO_LEVEL: *(uint8_t *)value = c->level; break;
    case HSA_CACHE_INFO_SIZE: *(uint32_t *)value = c->size; break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

/* ---- coherency (GPU agents only, hsa_ext_amd.cpp) ---------------------- */

static _Atomic int coherency[MAX_AGENTS];

hsa_status_t hsa_amd_coherency_get_type(hsa_agent_t agent, hsa_amd_coherency_type_t *type) {
    HSA_CHECK_OPEN();
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    HSA_CHECK_PTR(type);
    if (!a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
    *type = (hsa_amd_coherency_type_t)coherency[agent_index(a)];
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_coherency_set_type(hsa_agent_t agent, hsa_amd_coherency_type_t type) {
    HSA_CHECK_OPEN();
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (type != HSA_AMD_COHERENCY_TYPE_COHERENT && type != HSA_AMD_COHERENCY_TYPE_NONCOHERENT)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (!a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
    coherency[agent_index(a)] = (int)type;
    return HSA_STATUS_SUCCESS;
}
