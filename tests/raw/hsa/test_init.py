"""hsa_init / hsa_shut_down reference counting, the not-initialized check of
every entry point, system information and extensions."""
from __future__ import annotations

import time

import pytest

from hsa_raw import check, ffi, gpu_agents, lib, queue

NULL = ffi.NULL
A0 = ffi.new("hsa_agent_t*")[0]
S0 = ffi.new("hsa_signal_t*")[0]
P0 = ffi.new("hsa_amd_memory_pool_t*")[0]
R0 = ffi.new("hsa_region_t*")[0]
E0 = ffi.new("hsa_executable_t*")[0]
Y0 = ffi.new("hsa_executable_symbol_t*")[0]
C0 = ffi.new("hsa_code_object_reader_t*")[0]
I0 = ffi.new("hsa_isa_t*")[0]
Q = ffi.new("hsa_queue_t*")
OUT = ffi.new("char[256]")

# One call per entry point family: all must fail the shared IS_OPEN check
# first, whatever their other arguments.
ENTRY_POINTS = {
    "hsa_shut_down": lambda: lib.hsa_shut_down(),
    "hsa_system_get_info": lambda: lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, OUT),
    "hsa_system_extension_supported": lambda: lib.hsa_system_extension_supported(0x200, 1, 0, ffi.cast("bool*", OUT)),
    "hsa_extension_get_name": lambda: lib.hsa_extension_get_name(0, ffi.cast("const char**", OUT)),
    "hsa_iterate_agents": lambda: lib.hsa_iterate_agents(NULL, NULL),
    "hsa_agent_get_info": lambda: lib.hsa_agent_get_info(A0, lib.HSA_AGENT_INFO_NAME, OUT),
    "hsa_agent_iterate_isas": lambda: lib.hsa_agent_iterate_isas(A0, NULL, NULL),
    "hsa_agent_iterate_caches": lambda: lib.hsa_agent_iterate_caches(A0, NULL, NULL),
    "hsa_isa_from_name": lambda: lib.hsa_isa_from_name(b"x", ffi.cast("hsa_isa_t*", OUT)),
    "hsa_isa_get_info_alt": lambda: lib.hsa_isa_get_info_alt(I0, 0, OUT),
    "hsa_agent_iterate_regions": lambda: lib.hsa_agent_iterate_regions(A0, NULL, NULL),
    "hsa_region_get_info": lambda: lib.hsa_region_get_info(R0, 0, OUT),
    "hsa_amd_agent_iterate_memory_pools": lambda: lib.hsa_amd_agent_iterate_memory_pools(A0, NULL, NULL),
    "hsa_amd_memory_pool_get_info": lambda: lib.hsa_amd_memory_pool_get_info(P0, 0, OUT),
    "hsa_amd_agent_memory_pool_get_info": lambda: lib.hsa_amd_agent_memory_pool_get_info(A0, P0, 0, OUT),
    "hsa_amd_memory_pool_allocate": lambda: lib.hsa_amd_memory_pool_allocate(P0, 64, 0, ffi.cast("void**", OUT)),
    "hsa_amd_memory_pool_free": lambda: lib.hsa_amd_memory_pool_free(OUT),
    "hsa_memory_allocate": lambda: lib.hsa_memory_allocate(R0, 64, ffi.cast("void**", OUT)),
    "hsa_memory_free": lambda: lib.hsa_memory_free(OUT),
    "hsa_memory_copy": lambda: lib.hsa_memory_copy(OUT, OUT, 1),
    "hsa_memory_register": lambda: lib.hsa_memory_register(OUT, 1),
    "hsa_amd_agents_allow_access": lambda: lib.hsa_amd_agents_allow_access(1, ffi.new("hsa_agent_t[1]"), NULL, OUT),
    "hsa_amd_memory_async_copy": lambda: lib.hsa_amd_memory_async_copy(OUT, A0, OUT, A0, 1, 0, NULL, S0),
    "hsa_amd_memory_fill": lambda: lib.hsa_amd_memory_fill(OUT, 0, 1),
    "hsa_amd_pointer_info": lambda: lib.hsa_amd_pointer_info(OUT, ffi.cast("hsa_amd_pointer_info_t*", OUT), NULL,
                                                             NULL, NULL),
    "hsa_amd_memory_lock": lambda: lib.hsa_amd_memory_lock(OUT, 1, NULL, 0, ffi.cast("void**", OUT)),
    "hsa_amd_memory_unlock": lambda: lib.hsa_amd_memory_unlock(OUT),
    "hsa_amd_ipc_memory_create": lambda: lib.hsa_amd_ipc_memory_create(OUT, 1, ffi.cast("hsa_amd_ipc_memory_t*", OUT)),
    "hsa_signal_create": lambda: lib.hsa_signal_create(0, 0, NULL, ffi.cast("hsa_signal_t*", OUT)),
    "hsa_amd_signal_create": lambda: lib.hsa_amd_signal_create(0, 0, NULL, 0, ffi.cast("hsa_signal_t*", OUT)),
    "hsa_signal_destroy": lambda: lib.hsa_signal_destroy(S0),
    "hsa_amd_signal_async_handler": lambda: lib.hsa_amd_signal_async_handler(S0, 0, 0, NULL, NULL),
    "hsa_amd_async_function": lambda: lib.hsa_amd_async_function(NULL, NULL),
    "hsa_signal_group_create": lambda: lib.hsa_signal_group_create(0, NULL, 0, NULL,
                                                                   ffi.cast("hsa_signal_group_t*", OUT)),
    "hsa_queue_create": lambda: lib.hsa_queue_create(A0, 64, 0, NULL, NULL, 0, 0, ffi.cast("hsa_queue_t**", OUT)),
    "hsa_queue_destroy": lambda: lib.hsa_queue_destroy(Q),
    "hsa_queue_inactivate": lambda: lib.hsa_queue_inactivate(Q),
    "hsa_amd_queue_set_priority": lambda: lib.hsa_amd_queue_set_priority(Q, 0),
    "hsa_amd_register_system_event_handler": lambda: lib.hsa_amd_register_system_event_handler(NULL, NULL),
    "hsa_code_object_reader_create_from_memory": lambda: lib.hsa_code_object_reader_create_from_memory(
        OUT, 1, ffi.cast("hsa_code_object_reader_t*", OUT)),
    "hsa_code_object_reader_destroy": lambda: lib.hsa_code_object_reader_destroy(C0),
    "hsa_executable_create_alt": lambda: lib.hsa_executable_create_alt(1, 0, NULL, ffi.cast("hsa_executable_t*", OUT)),
    "hsa_executable_load_agent_code_object": lambda: lib.hsa_executable_load_agent_code_object(E0, A0, C0, NULL,
                                                                                               NULL),
    "hsa_executable_freeze": lambda: lib.hsa_executable_freeze(E0, NULL),
    "hsa_executable_get_symbol_by_name": lambda: lib.hsa_executable_get_symbol_by_name(
        E0, b"x", NULL, ffi.cast("hsa_executable_symbol_t*", OUT)),
    "hsa_executable_symbol_get_info": lambda: lib.hsa_executable_symbol_get_info(Y0, 0, OUT),
    "hsa_executable_destroy": lambda: lib.hsa_executable_destroy(E0),
    "hsa_amd_profiling_set_profiler_enabled": lambda: lib.hsa_amd_profiling_set_profiler_enabled(Q, 1),
    "hsa_amd_profiling_get_dispatch_time": lambda: lib.hsa_amd_profiling_get_dispatch_time(
        A0, S0, ffi.cast("hsa_amd_profiling_dispatch_time_t*", OUT)),
    "hsa_amd_profiling_convert_tick_to_system_domain": lambda: lib.hsa_amd_profiling_convert_tick_to_system_domain(
        A0, 0, ffi.cast("uint64_t*", OUT)),
}


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_entry_points_refuse_before_init(name):
    check(ENTRY_POINTS[name](), lib.HSA_STATUS_ERROR_NOT_INITIALIZED)


def test_reference_counting():
    value = ffi.new("uint16_t*")
    check(lib.hsa_init())
    check(lib.hsa_init())
    check(lib.hsa_shut_down())
    check(lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, value))   # still open: one reference left
    check(lib.hsa_shut_down())
    check(lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, value), lib.HSA_STATUS_ERROR_NOT_INITIALIZED)
    check(lib.hsa_shut_down(), lib.HSA_STATUS_ERROR_NOT_INITIALIZED)
    check(lib.hsa_init())   # a fresh start after the last shut down
    check(lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, value))
    check(lib.hsa_shut_down())


def test_last_shut_down_releases_queues_and_objects_made_before_it():
    before = lib.rocpy_stub_live_allocations()
    check(lib.hsa_init())
    q = queue(gpu_agents()[0])
    assert lib.rocpy_stub_live_allocations() == before + 1   # the ring
    check(lib.hsa_shut_down())
    assert lib.rocpy_stub_live_allocations() == before
    check(lib.hsa_init())
    check(lib.hsa_queue_destroy(q), lib.HSA_STATUS_ERROR_INVALID_QUEUE)
    check(lib.hsa_shut_down())


def test_status_string_needs_no_runtime():
    text = ffi.new("const char**")
    check(lib.hsa_status_string(lib.HSA_STATUS_ERROR_INVALID_AGENT, text))
    assert ffi.string(text[0]).startswith(b"HSA_STATUS_ERROR_INVALID_AGENT:")
    check(lib.hsa_status_string(lib.HSA_STATUS_ERROR_INVALID_MEMORY_POOL, text))
    assert b"memory pool" in ffi.string(text[0])
    check(lib.hsa_status_string(0x7777, text), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_status_string(0, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def info(attribute, ctype):
    v = ffi.new(ctype)
    check(lib.hsa_system_get_info(attribute, v))
    return v[0]


def test_system_info(rt):
    assert info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, "uint16_t*") == 1
    assert info(lib.HSA_SYSTEM_INFO_VERSION_MINOR, "uint16_t*") == 1
    assert info(lib.HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, "uint64_t*") == 10**9
    assert info(lib.HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT, "uint64_t*") == 2**64 - 1
    assert info(lib.HSA_SYSTEM_INFO_ENDIANNESS, "hsa_endianness_t*") == lib.HSA_ENDIANNESS_LITTLE
    assert info(lib.HSA_SYSTEM_INFO_MACHINE_MODEL, "hsa_machine_model_t*") == lib.HSA_MACHINE_MODEL_LARGE
    assert info(lib.HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED, "bool*")   # hsa_svm.c models KFD SVM
    assert ffi.string(info(lib.HSA_AMD_SYSTEM_INFO_BUILD_VERSION, "const char**")) == b"rocpy-stub"
    bits = ffi.new("uint8_t[128]")
    check(lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_EXTENSIONS, bits))
    set_bits = [i for i in range(1024) if bits[i // 8] >> (i % 8) & 1]
    assert set_bits == [lib.HSA_EXTENSION_AMD_PROFILER]


def test_system_timestamp_is_the_monotonic_clock_in_ns(rt):
    lo = time.monotonic_ns()
    ts = info(lib.HSA_SYSTEM_INFO_TIMESTAMP, "uint64_t*")
    hi = time.monotonic_ns()
    assert lo <= ts <= hi


def test_system_info_bad_input(rt):
    check(lib.hsa_system_get_info(lib.HSA_SYSTEM_INFO_VERSION_MAJOR, NULL), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_system_get_info(0x7777, OUT), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)


def test_extensions(rt):
    result = ffi.new("bool*")
    check(lib.hsa_system_extension_supported(lib.HSA_EXTENSION_AMD_PROFILER, 1, 0, result))
    assert result[0]
    check(lib.hsa_system_extension_supported(lib.HSA_EXTENSION_IMAGES, 1, 0, result))
    assert not result[0]
    check(lib.hsa_system_extension_supported(0x100, 1, 0, result), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    check(lib.hsa_system_extension_supported(lib.HSA_EXTENSION_AMD_PROFILER, 1, 0, NULL),
          lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    minor = ffi.new("uint16_t*")
    check(lib.hsa_system_major_extension_supported(lib.HSA_EXTENSION_AMD_PROFILER, 1, minor, result))
    assert result[0] and minor[0] == 0
    name = ffi.new("const char**")
    check(lib.hsa_extension_get_name(lib.HSA_EXTENSION_AMD_LOADER, name))
    assert ffi.string(name[0]) == b"HSA_EXTENSION_AMD_LOADER"
    check(lib.hsa_extension_get_name(0x300, name), lib.HSA_STATUS_ERROR_INVALID_ARGUMENT)
    assert ffi.string(name[0]) == b"HSA_EXTENSION_INVALID"


def test_unsimulated_functions_keep_the_generic_failure(rt):
    check(lib.hsa_system_get_extension_table(lib.HSA_EXTENSION_AMD_LOADER, 1, 0, OUT), lib.HSA_STATUS_ERROR)
    check(lib.hsa_soft_queue_create(R0, 64, 0, 1, S0, ffi.cast("hsa_queue_t**", OUT)), lib.HSA_STATUS_ERROR)
