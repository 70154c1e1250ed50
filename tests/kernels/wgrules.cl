// OpenCL kernels with workgroup rules HIP cannot spell (bare AMDGPU ELF, no
// device libraries; tests/hsa/test_rocr_rules.py).  `uniform` gets
// .uniform_work_group_size: 1 added to its metadata by the test (clang 15
// does not emit the key).
__kernel __attribute__((reqd_work_group_size(32, 1, 1))) void fixed32(__global int *o) {
    o[__builtin_amdgcn_workgroup_id_x() * 32 + __builtin_amdgcn_workitem_id_x()] = 32;
}

__kernel void uniform(__global int *o) {
    o[__builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x()] = 1;
}
