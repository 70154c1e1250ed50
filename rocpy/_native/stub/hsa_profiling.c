/* Profiling (hsa_ext_amd.cpp): dispatch and async-copy timestamps, kept with
 * the completion signal by the packet processor and the copy engines.  The
 * stub's GPU clock is the system clock (ns), so converting a tick to the
 * system domain is the identity. */
#include "hsa_internal.h"

#include <stdatomic.h>

static _Atomic bool copy_profiling;

bool stub_hsa_copy_profiling_enabled(void) { return atomic_load(&copy_profiling); }

hsa_status_t hsa_amd_profiling_set_profiler_enabled(hsa_queue_t *queue, int enable) {
    HSA_CHECK_OPEN();
    return stub_hsa_queue_set_profiling(queue, enable);
}

hsa_status_t hsa_amd_profiling_async_copy_enable(bool enable) {
    HSA_CHECK_OPEN();
    atomic_store(&copy_profiling, enable);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_get_dispatch_time(hsa_agent_t agent, hsa_signal_t signal,
                                                 hsa_amd_profiling_dispatch_time_t *time) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(time);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    hsa_status_t st = stub_sig_check(signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    if (!a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
    stub_signal_t *s = stub_sig_retain(signal);
    if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
    stub_sig_get_times(s, &time->start, &time->end, NULL);
    stub_sig_release(s);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_get_async_copy_time(hsa_signal_t signal, hsa_amd_profiling_async_copy_time_t *time) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(time);
    hsa_status_t st = stub_sig_check(signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    stub_signal_t *s = stub_sig_retain(signal);
    if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
    const stub_hsa_agent_t *copy_agent;
    uint64_t start, end;
    stub_sig_get_times(s, &start, &end, &copy_agent);
    stub_sig_release(s);
    if (!copy_agent) return HSA_STATUS_ERROR;   /* no profiled copy signalled it */
    time->start = start;
    time->end = end;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent, uint64_t agent_tick,
                                                             uint64_t *system_tick) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(system_tick);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a || !a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
    *system_tick = agent_tick;
    return HSA_STATUS_SUCCESS;
}
