/* Profiling (hsa_ext_amd.cpp): dispatch and async-copy timestamps, kept with
 * the completion signal by the packet processor and the copy engines.
 *
 * As on hardware, a GPU's timestamps are ticks of its own counter: here
 * STUB_GPU_TICK_HZ (100 MHz, the usual GPU counter; ROCr reports it as
 * HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY) from an offset of its own, never
 * equal to the system's (ns since boot at 1 GHz).  Only the conversion calls
 * translate: hsa_amd_profiling_convert_tick_to_system_domain, and the
 * getters, which return system-domain times as ROCr's do
 * (hsa_amd_profiling_get_dispatch_time and _get_async_copy_time call
 * GpuAgent::TranslateTime; a CPU copy's times are system ticks already). */
#include "hsa_internal.h"

#include <stdatomic.h>

static _Atomic bool copy_profiling;

/* a GPU's counter: tick = offset + system_ns / STUB_GPU_NS_PER_TICK */
#define STUB_GPU_NS_PER_TICK 10ull
static uint64_t tick_offset(const stub_hsa_agent_t *gpu) { return (0x1234ull + (uint64_t)gpu->device) << 36; }

uint64_t stub_hsa_gpu_ticks(const stub_hsa_agent_t *gpu, uint64_t system_ns) {
    return tick_offset(gpu) + system_ns / STUB_GPU_NS_PER_TICK;
}

static uint64_t to_system(const stub_hsa_agent_t *gpu, uint64_t tick) {
    uint64_t off = tick_offset(gpu);
    return tick < off ? 0 : (tick - off) * STUB_GPU_NS_PER_TICK;
}

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
    uint64_t start, end;
    stub_sig_get_times(s, &start, &end, NULL);
    stub_sig_release(s);
    /* nothing recorded (profiling off) stays 0 */
    time->start = start ? to_system(a, start) : 0;
    time->end = end ? to_system(a, end) : 0;
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
    time->start = copy_agent->is_gpu ? to_system(copy_agent, start) : start;
    time->end = copy_agent->is_gpu ? to_system(copy_agent, end) : end;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_profiling_convert_tick_to_system_domain(hsa_agent_t agent, uint64_t agent_tick,
                                                             uint64_t *system_tick) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(system_tick);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a || !a->is_gpu) return HSA_STATUS_ERROR_INVALID_AGENT;
    *system_tick = to_system(a, agent_tick);
    return HSA_STATUS_SUCCESS;
}
