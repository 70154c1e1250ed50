"""Every struct of the installed headers has the C compiler's size and alignment."""
from __future__ import annotations

from c_layout import c_values

# `typedef __attribute__((aligned(64))) struct X {...} X_t;` aligns the typedef,
# not the tag (GCC's rule); cffi has one alignment for both, the typedef's, so
# for these tags the alignment is compared with the typedef's.
TYPEDEF_ALIGNED = {"amd_control_directives_s": "amd_control_directives_t",
                   "amd_kernel_code_s": "amd_kernel_code_t"}


def test_struct_sizes_and_alignments_match_the_compiler(installed_api):
    import rocpy._lib_stub as mod
    names = sorted(installed_api.decls.structs)
    exprs = []
    for n in names:
        align_of = TYPEDEF_ALIGNED.get(n, f"struct {n}")
        exprs += [f"sizeof(struct {n})", f"_Alignof({align_of})"]
    expected = c_values(installed_api.install.include_dir, installed_api.platform.headers,
                        installed_api.platform.defines, exprs)
    got = []
    for n in names:
        got += [mod.ffi.sizeof(f"struct {n}"), mod.ffi.alignof(f"struct {n}")]
    mismatched = [n for i, n in enumerate(names) if got[2 * i:2 * i + 2] != expected[2 * i:2 * i + 2]]
    assert not mismatched


def test_real_aligned_structs_are_partial(installed_api):
    import rocpy._lib_stub as mod
    for tag in ("amd_queue_s", "amd_signal_s", "amd_kernel_code_s"):
        if tag in installed_api.decls.structs:
            assert tag in installed_api.decls.partial_structs
            assert mod.ffi.alignof(f"struct {tag}") == 64


def test_aql_packets_are_64_bytes():
    import rocpy._lib_stub as mod
    for t in ("hsa_kernel_dispatch_packet_t", "hsa_barrier_and_packet_t",
              "hsa_barrier_or_packet_t", "hsa_agent_dispatch_packet_t"):
        assert mod.ffi.sizeof(t) == 64
