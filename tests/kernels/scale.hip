#include <hip/hip_runtime.h>

// A kernel with no built-in stub emulation, LDS, and device variables
// (one initialised, one in .bss) for executable-symbol tests.
__device__ int counter = 7;
__device__ float table[16];

extern "C" __global__ void scale(float *p, float f, int n) {
    __shared__ float tile[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x % 64] = i < n ? p[i] : 0.f;
    __syncthreads();
    if (i < n) p[i] = tile[threadIdx.x % 64] * f + table[i % 16] + counter;
}
