// A hipcc program with kernels, built by tests/dropin/test_fatbin.py and run
// on the drop-in libraries.  `vadd` computes a - b (not rocpy's built-in
// a + b): with ROCPY_TEST_EMULATE=1 the program registers a C emulation of
// it through rocpy_stub.h; without, the launch must fail naming the kernel.
// `bias` is a __device__ variable reached with hipMemcpyToSymbol; `scale` is
// a C++ (mangled) kernel launched with hipLaunchKernelGGL.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "rocpy_stub.h"

__device__ float bias;

extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] - b[i] + bias;
}

__global__ void scale(float *p, float f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] *= f;
}

#define CHECK(call)                                                                      \
    do {                                                                                 \
        hipError_t e_ = (call);                                                          \
        if (e_ != hipSuccess) {                                                          \
            std::fprintf(stderr, "line %d: %s: %s\n", __LINE__, #call, hipGetErrorName(e_)); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// the emulations: the kernels' arguments at their offsets (explicit ones first)
static int emulate_vadd(const rocpy_stub_dispatch_t *d, void *user) {
    const float *a, *b;
    float *c;
    int n;
    std::memcpy(&a, (char *)d->kernarg + 0, 8);
    std::memcpy(&b, (char *)d->kernarg + 8, 8);
    std::memcpy(&c, (char *)d->kernarg + 16, 8);
    std::memcpy(&n, (char *)d->kernarg + 24, 4);
    const float *dev_bias = (const float *)user;    // the variable's device copy
    for (int i = 0; i < n && i < (int)d->grid[0]; i++) c[i] = a[i] - b[i] + *dev_bias;
    return 0;
}

static int emulate_scale(const rocpy_stub_dispatch_t *d, void *) {
    float *p, f;
    int n;
    std::memcpy(&p, (char *)d->kernarg + 0, 8);
    std::memcpy(&f, (char *)d->kernarg + 8, 4);
    std::memcpy(&n, (char *)d->kernarg + 12, 4);
    for (int i = 0; i < n && i < (int)d->grid[0]; i++) p[i] *= f;
    return 0;
}

int main() {
    const int n = 1000;
    float ha[n], hb[n], hc[n];
    for (int i = 0; i < n; i++) ha[i] = 3.0f * i, hb[i] = 1.0f * i;
    float *a, *b, *c;
    CHECK(hipMalloc(&a, n * sizeof(float)));
    CHECK(hipMalloc(&b, n * sizeof(float)));
    CHECK(hipMalloc(&c, n * sizeof(float)));
    CHECK(hipMemcpy(a, ha, sizeof ha, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(b, hb, sizeof hb, hipMemcpyHostToDevice));

    float one = 0.5f, back = 0;
    CHECK(hipMemcpyToSymbol(HIP_SYMBOL(bias), &one, sizeof one));
    CHECK(hipMemcpyFromSymbol(&back, HIP_SYMBOL(bias), sizeof back));
    void *bias_addr = nullptr;
    size_t bias_size = 0;
    CHECK(hipGetSymbolAddress(&bias_addr, HIP_SYMBOL(bias)));
    CHECK(hipGetSymbolSize(&bias_size, HIP_SYMBOL(bias)));
    std::printf("bias %g size %zu\n", back, bias_size);

    if (std::getenv("ROCPY_TEST_EMULATE")) {
        if (rocpy_stub_register_emulation("vadd", emulate_vadd, bias_addr) != 0 ||
            rocpy_stub_register_emulation("_Z5scalePffi", emulate_scale, nullptr) != 0) {
            std::fprintf(stderr, "not on the stub\n");
            return 1;
        }
    }
    vadd<<<dim3((n + 255) / 256), dim3(256)>>>(a, b, c, n);
    hipError_t launched = hipGetLastError();
    std::printf("launch %s\n", hipGetErrorName(launched));
    if (launched != hipSuccess) return 3;
    hipLaunchKernelGGL(scale, dim3((n + 127) / 128), dim3(128), 0, 0, c, 2.0f, n);
    CHECK(hipGetLastError());
    CHECK(hipDeviceSynchronize());
    CHECK(hipMemcpy(hc, c, sizeof hc, hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (hc[i] != 2.0f * (ha[i] - hb[i] + 0.5f)) {
            std::fprintf(stderr, "c[%d] = %g\n", i, hc[i]);
            return 1;
        }
    std::printf("name %s\n", hipKernelNameRefByPtr((const void *)vadd, 0));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipFree(c));
    std::printf("ok\n");
    return 0;
}
