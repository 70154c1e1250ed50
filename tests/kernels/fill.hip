// nvcc (the nvidia backend) has __global__ and blockIdx built in
#ifndef __CUDACC__
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void fill(unsigned *p, unsigned value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}
