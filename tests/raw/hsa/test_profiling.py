"""Profiling: dispatch and async-copy timestamps, tick conversion."""
from __future__ import annotations

import time

from rocm_versions import at_least
from hsa_raw import (Kernel, allocate, allow, check, dispatch, ffi, find_pool, lib, queue, signal, wait_eq)

NULL = ffi.NULL


def dispatch_time(agent, sig):
    t = ffi.new("hsa_amd_profiling_dispatch_time_t*")
    check(lib.hsa_amd_profiling_get_dispatch_time(agent, sig, t))
    return t.start, t.end


def test_dispatch_times(gpu, cpu, kernel_path):
    k = Kernel(kernel_path("empty"), gpu, "empty")
    kernarg = allocate(find_pool(cpu, fine=True, kernarg=True), 64)
    allow(kernarg, gpu)
    q = queue(gpu)
    plain, profiled = signal(1), signal(1)
    dispatch(q, k.object, kernarg, completion=plain)
    assert wait_eq(plain, 0) == 0
    assert dispatch_time(gpu, plain) == (0, 0)          # profiling off: nothing recorded
    check(lib.hsa_amd_profiling_set_profiler_enabled(q, 1))
    before = time.monotonic_ns()
    dispatch(q, k.object, kernarg, completion=profiled)
    assert wait_eq(profiled, 0) == 0
    after = time.monotonic_ns()
    start, end = dispatch_time(gpu, profiled)
    assert before <= start <= end <= after              # converted to ns of the system clock (ROCr)
    # GPU ticks are another domain (100 MHz, an offset of their own): only the
    # conversion maps them, and converting a system time again gives nonsense
    system = ffi.new("uint64_t*")
    check(lib.hsa_amd_profiling_convert_tick_to_system_domain(gpu, start, system))
    assert not before <= system[0] <= after
    base = 1 << 52                                      # past the stub's offsets
    check(lib.hsa_amd_profiling_convert_tick_to_system_domain(gpu, base, system))
    t0 = system[0]
    if at_least(5, 3, hsa=True):                                  # HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY arrived in 5.3
        freq = ffi.new("uint64_t*")
        check(lib.hsa_agent_get_info(gpu, 0xA016, freq))
        assert freq[0] != 10**9
        check(lib.hsa_amd_profiling_convert_tick_to_system_domain(gpu, base + freq[0], system))
        assert system[0] - t0 == 10**9                  # one second of GPU ticks
    else:                                               # a second of system time is not 10^9 ticks
        check(lib.hsa_amd_profiling_convert_tick_to_system_domain(gpu, base + 10**9, system))
        assert system[0] - t0 != 10**9
    for s in (plain, profiled):
        check(lib.hsa_signal_destroy(s))
    check(lib.hsa_queue_destroy(q))
    check(lib.hsa_amd_memory_pool_free(kernarg))
    k.close()


def test_dispatch_time_bad_input(gpu, cpu):
    s = signal(0)
    t = ffi.new("hsa_amd_profiling_dispatch_time_t*")
    check(lib.hsa_amd_profiling_get_dispatch_time(gpu, s, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_profiling_get_dispatch_time(ffi.new("hsa_agent_t*", {"handle": 4})[0], s, t),
          lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(lib.hsa_amd_profiling_get_dispatch_time(cpu, s, t), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(lib.hsa_amd_profiling_get_dispatch_time(gpu, ffi.new("hsa_signal_t*")[0], t),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(s))
    check(lib.hsa_amd_profiling_get_dispatch_time(gpu, s, t), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    check(lib.hsa_amd_profiling_set_profiler_enabled(ffi.new("hsa_queue_t*"), 1), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    check(lib.hsa_amd_profiling_set_profiler_enabled(NULL, 1), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    out = ffi.new("uint64_t*")
    check(lib.hsa_amd_profiling_convert_tick_to_system_domain(cpu, 1, out), lib.HSA_STATUS_ERROR_INVALID_AGENT)
    check(lib.hsa_amd_profiling_convert_tick_to_system_domain(gpu, 1, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_async_copy_times(gpu, cpu):
    dev = allocate(find_pool(gpu), 1 << 20)
    host = allocate(find_pool(cpu), 1 << 20)
    allow(host, gpu)
    done = signal(1)
    t = ffi.new("hsa_amd_profiling_async_copy_time_t*")
    check(lib.hsa_amd_memory_async_copy(dev, gpu, host, cpu, 1 << 20, 0, NULL, done))
    assert wait_eq(done, 0) == 0
    check(lib.hsa_amd_profiling_get_async_copy_time(done, t), lib.HSA_STATUS_ERROR)   # not profiled
    check(lib.hsa_amd_profiling_async_copy_enable(True))
    lib.hsa_signal_store_relaxed(done, 1)
    before = time.monotonic_ns()
    check(lib.hsa_amd_memory_async_copy(dev, gpu, host, cpu, 1 << 20, 0, NULL, done))
    assert wait_eq(done, 0) == 0
    check(lib.hsa_amd_profiling_get_async_copy_time(done, t))
    assert before <= t.start <= t.end <= time.monotonic_ns()
    check(lib.hsa_amd_profiling_async_copy_enable(False))
    check(lib.hsa_amd_profiling_get_async_copy_time(done, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_amd_profiling_get_async_copy_time(ffi.new("hsa_signal_t*")[0], t),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_signal_destroy(done))
    check(lib.hsa_amd_profiling_get_async_copy_time(done, t), lib.HSA_STATUS_ERROR_INVALID_SIGNAL)
    for p in (dev, host):
        check(lib.hsa_amd_memory_pool_free(p))
