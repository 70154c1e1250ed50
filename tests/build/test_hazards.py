"""The pipeline over a synthetic header tree holding every hazard of real ROCm headers.

Independent of the installed ROCm version: each hazard the real headers have
in one version or another is reproduced in tests/build/synthetic and must
come out of the pipeline usable.
"""
from __future__ import annotations

import os

import pytest

from c_layout import c_values
from module_builder import build_module

SYNTHETIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "synthetic")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return build_module(SYNTHETIC, str(tmp_path_factory.mktemp("synthetic")), "_rocpy_synth")


def test_attributes_and_visibility_macros_are_stripped(synthetic):
    api, mod = synthetic
    assert "hsa_init" in api.functions
    assert mod.lib.hsa_init() == mod.lib.HSA_STATUS_ERROR     # weak generic default
    assert "hipOldCall" in api.functions                      # was deprecated(...)


def test_aligned_structs_are_partial_and_take_the_compiler_layout(synthetic):
    api, mod = synthetic
    # the attribute before the tag, after `typedef`, and after the closing brace
    assert {"amd_queue_s", "amd_kernel_code_s", "amd_signal_s"} <= api.decls.partial_structs
    names = ("amd_queue_t", "amd_kernel_code_t", "amd_signal_t")
    exprs = [f(n) for n in names for f in (lambda n: f"sizeof({n})", lambda n: f"_Alignof({n})")]
    expected = c_values(SYNTHETIC, api.platform.headers, api.platform.defines,
                        exprs + ["offsetof(amd_queue_t, write_dispatch_id)"])
    got = [f(n) for n in names for f in (mod.ffi.sizeof, mod.ffi.alignof)]
    assert got + [mod.ffi.offsetof("amd_queue_t", "write_dispatch_id")] == expected
    assert mod.ffi.alignof("amd_queue_t") == 64


def test_bitfields_are_declared_whole(synthetic):
    api, mod = synthetic
    assert "hipDeviceArch_t" not in api.decls.partial_structs
    arch = mod.ffi.new("hipDeviceArch_t *")
    arch.hasWarpVote = 1
    assert (arch.hasDoubles, arch.hasWarpVote, arch.has3dGrid) == (0, 1, 0)
    assert mod.ffi.sizeof("hipDeviceArch_t") == 4


def test_anonymous_union_members_are_reachable(synthetic):
    _, mod = synthetic
    ev = mod.ffi.new("synth_event_t *")
    ev.memory_fault.address = 0xdead000
    assert ev.reserved == 0xdead000


def test_enum_member_equal_to_int32_max(synthetic):
    _, mod = synthetic
    assert mod.lib.SYNTH_FORCE_INT32 == 2**31 - 1
    assert mod.lib.HSA_STATUS_ERROR == 0x1000


def test_typedef_enum_with_two_names_keeps_one_body(synthetic):
    api, mod = synthetic
    assert api.cdef().count("SYNTH_MODE_B") == 1
    assert mod.lib.SYNTH_MODE_B == 8
    assert mod.ffi.sizeof("synth_mode_alias_t") == mod.ffi.sizeof("synth_mode_t")


def test_static_inline_helpers_are_callable(synthetic):
    api, mod = synthetic
    assert api.functions["make_hipExtent"].inline
    e = mod.lib.make_hipExtent(1, 2, 3)
    assert (e.width, e.height, e.depth) == (1, 2, 3)
    assert mod.lib.synth_flag_set64(1, 4) == 17


def test_renaming_macros_leave_documented_aliases(synthetic):
    api, mod = synthetic
    assert api.consts.function_aliases == {"hipGetDeviceProperties": "hipGetDevicePropertiesR0600"}
    assert api.consts.type_aliases == {"hipDeviceProp_t": "hipDeviceProp_tR0600"}
    prop = mod.ffi.new("hipDeviceProp_t *")
    assert mod.lib.hipGetDeviceProperties(prop, 0) == mod.lib.hipErrorNotSupported


def test_asm_labels_are_dropped_but_the_call_links(synthetic):
    _, mod = synthetic
    ev = mod.ffi.new("synth_event_t *")
    assert mod.lib.hsa_amd_synth_wait(ev, mod.lib.SYNTH_MODE_A) == mod.lib.HSA_STATUS_ERROR


def test_hsa_large_model_selects_64_bit_fields(synthetic):
    _, mod = synthetic
    assert mod.ffi.typeof("hsa_queue_t").fields[1][0] == "base_address"
    assert mod.ffi.offsetof("hsa_queue_t", "base_address") == 8


def test_define_constants_integer_and_pointer(synthetic):
    api, mod = synthetic
    assert mod.lib.hipHostMallocPortable == 1
    assert mod.lib.HIP_VERSION == 60300000
    assert int(mod.ffi.cast("uintptr_t", mod.lib.HIP_LAUNCH_PARAM_BUFFER_POINTER)) == 1
    assert "SYNTH_DEPRECATED" not in api.consts.integers


def test_generic_failures_by_return_type(synthetic):
    _, mod = synthetic
    assert mod.lib.hiprtcGetErrorString(0) == mod.ffi.NULL
    assert mod.lib.hipOldCall(1) == mod.lib.hipErrorNotSupported
