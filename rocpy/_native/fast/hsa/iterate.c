/* HSA's iterate functions collected into arrays (iterate.h). */
#include "iterate.h"

typedef struct collect {
    uint64_t *out;
    uint32_t max;
    uint32_t count;
} collect_t;

static void add(collect_t *c, uint64_t handle) {
    if (c->count < c->max) c->out[c->count] = handle;
    c->count++;
}

/* The iterate callback of each handle type: collect the handle, go on. */
#define ON_HANDLE(name, type)                                \
    static hsa_status_t name(type h, void *data) {           \
        add(data, h.handle);                                 \
        return HSA_STATUS_SUCCESS;                           \
    }

ON_HANDLE(on_agent, hsa_agent_t)
ON_HANDLE(on_pool, hsa_amd_memory_pool_t)
ON_HANDLE(on_region, hsa_region_t)
ON_HANDLE(on_isa, hsa_isa_t)
ON_HANDLE(on_cache, hsa_cache_t)

static hsa_status_t on_symbol(hsa_executable_t e, hsa_agent_t a, hsa_executable_symbol_t h, void *data) {
    (void)e;
    (void)a;
    add(data, h.handle);
    return HSA_STATUS_SUCCESS;
}

/* Every handle type is a struct of one uint64_t. */
#define START(out, max) collect_t c = {(uint64_t *)(out), (max), 0}
#define FINISH(call)                    \
    do {                                \
        hsa_status_t st_ = (call);      \
        *count = c.count;               \
        return st_;                     \
    } while (0)

hsa_status_t rocpy_hsa_list_agents(hsa_agent_t *out, uint32_t max, uint32_t *count) {
    START(out, max);
    FINISH(hsa_iterate_agents(on_agent, &c));
}

hsa_status_t rocpy_hsa_list_memory_pools(hsa_agent_t agent, hsa_amd_memory_pool_t *out, uint32_t max,
                                         uint32_t *count) {
    START(out, max);
    FINISH(hsa_amd_agent_iterate_memory_pools(agent, on_pool, &c));
}

hsa_status_t rocpy_hsa_list_regions(hsa_agent_t agent, hsa_region_t *out, uint32_t max, uint32_t *count) {
    START(out, max);
    FINISH(hsa_agent_iterate_regions(agent, on_region, &c));
}

hsa_status_t rocpy_hsa_list_isas(hsa_agent_t agent, hsa_isa_t *out, uint32_t max, uint32_t *count) {
    START(out, max);
    FINISH(hsa_agent_iterate_isas(agent, on_isa, &c));
}

hsa_status_t rocpy_hsa_list_caches(hsa_agent_t agent, hsa_cache_t *out, uint32_t max, uint32_t *count) {
    START(out, max);
    FINISH(hsa_agent_iterate_caches(agent, on_cache, &c));
}

hsa_status_t rocpy_hsa_list_agent_symbols(hsa_executable_t executable, hsa_agent_t agent,
                                          hsa_executable_symbol_t *out, uint32_t max, uint32_t *count) {
    START(out, max);
    FINISH(hsa_executable_iterate_agent_symbols(executable, agent, on_symbol, &c));
}
