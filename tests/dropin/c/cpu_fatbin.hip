// A hipcc program whose kernels run on the stub from a CPU build beside it
// (PROGRAM.cpukern, written by `rocpy cpukern build cpu_fatbin.hip --cpu-only`).
// The host half is left out of the CPU build (ROCPY_CPU_BUILD).  A shared
// memory reduction (barriers) launched with <<<>>>, and a template kernel
// through hipLaunchKernelGGL.  Prints "ok"; exit 1 on a wrong result.
#include <hip/hip_runtime.h>

__global__ void block_sum(const int *x, int *out) {
    __shared__ int part[256];
    part[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    for (int s = 128; s > 0; s /= 2) {
        if ((int)threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

template <typename T> __global__ void twice(T *p) { p[threadIdx.x] *= 2; }
template __global__ void twice<float>(float *);

#ifndef ROCPY_CPU_BUILD
#include <cstdio>
#include <vector>

#define CHECK(call)                                                         \
    do {                                                                    \
        hipError_t e_ = (call);                                             \
        if (e_ != hipSuccess) {                                             \
            std::printf("%s: %s\n", #call, hipGetErrorName(e_));            \
            return 1;                                                       \
        }                                                                   \
    } while (0)

int main() {
    const int blocks = 7, n = blocks * 256;
    std::vector<int> x(n), out(blocks);
    for (int i = 0; i < n; i++) x[i] = i % 13;
    int *dx, *dout;
    CHECK(hipMalloc(&dx, n * sizeof(int)));
    CHECK(hipMalloc(&dout, blocks * sizeof(int)));
    CHECK(hipMemcpy(dx, x.data(), n * sizeof(int), hipMemcpyHostToDevice));
    block_sum<<<blocks, 256>>>(dx, dout);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(out.data(), dout, blocks * sizeof(int), hipMemcpyDeviceToHost));
    for (int b = 0; b < blocks; b++) {
        int want = 0;
        for (int i = 0; i < 256; i++) want += x[b * 256 + i];
        if (out[b] != want) {
            std::printf("block %d: %d, not %d\n", b, out[b], want);
            return 1;
        }
    }
    std::vector<float> f(64);
    for (int i = 0; i < 64; i++) f[i] = float(i);
    float *df;
    CHECK(hipMalloc(&df, 64 * sizeof(float)));
    CHECK(hipMemcpy(df, f.data(), 64 * sizeof(float), hipMemcpyHostToDevice));
    hipLaunchKernelGGL(twice<float>, dim3(1), dim3(64), 0, 0, df);
    CHECK(hipGetLastError());
    CHECK(hipMemcpy(f.data(), df, 64 * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < 64; i++)
        if (f[i] != 2.0f * float(i)) {
            std::printf("twice[%d] = %g\n", i, f[i]);
            return 1;
        }
    CHECK(hipFree(dx));
    CHECK(hipFree(dout));
    CHECK(hipFree(df));
    std::printf("ok\n");
    return 0;
}
#endif
