// OpenCL kernels built without device libraries (clang -nogpulib, then
// ld.lld -shared) into a bare AMDGPU ELF: a __local pointer argument gives a
// dynamic_shared_pointer in the metadata, which HIP kernels do not have.
__kernel void scale(__global float *p, float s, int n, __local float *tmp) {
    int l = __builtin_amdgcn_workitem_id_x();
    int i = __builtin_amdgcn_workgroup_id_x() * 64 + l;
    tmp[l] = p[i];
    if (i < n) p[i] = tmp[l] * s;
}

__constant int table[4] = {1, 2, 3, 4};

__kernel void lookup(__global int *o, __local int *a, __local short *b) {
    a[0] = table[o[1] & 3];
    b[0] = (short)o[2];
    o[0] = a[0] + b[0];
}
