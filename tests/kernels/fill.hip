#include <hip/hip_runtime.h>

extern "C" __global__ void fill(unsigned *p, unsigned value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}
