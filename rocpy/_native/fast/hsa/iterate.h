/* HSA's iterate functions collected into arrays, so that Python needs no
 * callbacks to list agents, pools, regions, ISAs, caches or symbols.
 *
 * Each writes up to `max` handles to `out` and sets *count to how many the
 * runtime listed in all (call again with a larger array when *count > max).
 * Returns the iteration's status. */
#ifndef ROCPY_FAST_HSA_ITERATE_H
#define ROCPY_FAST_HSA_ITERATE_H

#include <stdint.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

hsa_status_t rocpy_hsa_list_agents(hsa_agent_t *out, uint32_t max, uint32_t *count);
hsa_status_t rocpy_hsa_list_memory_pools(hsa_agent_t agent, hsa_amd_memory_pool_t *out, uint32_t max,
                                         uint32_t *count);
hsa_status_t rocpy_hsa_list_regions(hsa_agent_t agent, hsa_region_t *out, uint32_t max, uint32_t *count);
hsa_status_t rocpy_hsa_list_isas(hsa_agent_t agent, hsa_isa_t *out, uint32_t max, uint32_t *count);
hsa_status_t rocpy_hsa_list_caches(hsa_agent_t agent, hsa_cache_t *out, uint32_t max, uint32_t *count);
hsa_status_t rocpy_hsa_list_agent_symbols(hsa_executable_t executable, hsa_agent_t agent,
                                          hsa_executable_symbol_t *out, uint32_t max, uint32_t *count);

#endif
