// Kernels whose metadata carries limits the dispatch must respect
// (tests/hsa/test_kernel_rules.py, rocpy selftest).
#include <hip/hip_runtime.h>

// at most 64 work-items per group: .max_flat_workgroup_size 64
extern "C" __global__ void __launch_bounds__(64) bounded(int *out) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = blockDim.x;
}


// recursion: a dynamic call stack (.uses_dynamic_stack)
__device__ __attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

extern "C" __global__ void recursive(int *out, int n) {
    out[blockIdx.x * blockDim.x + threadIdx.x] = fib(n);
}
