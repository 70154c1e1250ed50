// Kernels whose argument lists exercise the metadata readers: scalars of
// several widths, a struct passed by value, dynamic LDS and device globals.
#include <hip/hip_runtime.h>

struct triple {
    int a;
    double b;
    char c;
};

__device__ int counter = 3;
__device__ float table[16] = {1.0f, 2.0f, 3.0f};
__device__ double scratch[100];

extern "C" __global__ void scalars(char c, short s, int i, long long l,
                                   float f, double d, unsigned char uc,
                                   long long *out) {
    out[0] = c + s + i + l + (long long)f + (long long)d + uc + counter;
}

extern "C" __global__ void by_struct(triple t, int *out, triple u) {
    out[0] = t.a + (int)t.b + t.c + u.a;
    scratch[threadIdx.x] = t.b;
}

extern "C" __global__ void dyn_lds(float *out, int n) {
    extern __shared__ float lds[];
    lds[threadIdx.x] = table[threadIdx.x % 16];
    __syncthreads();
    if ((int)threadIdx.x < n) out[threadIdx.x] = lds[n - 1 - threadIdx.x];
}
