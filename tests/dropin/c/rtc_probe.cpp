// A C++ program compiling a kernel at run time with hipRTC, then running it
// (hip-tests catch/unit/rtc saxpy.cc's flow, with a template kernel and a
// header).  On the stub's drop-in libraries hiprtcCompileProgram builds the
// CPU build too, so the kernel really runs.  Prints "ok"; exit 1 on failure.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cstdio>
#include <string>
#include <vector>

static const char *SRC = R"(
#include "axpy.h"
template <typename T> __global__ void axpy(T a, const T *x, T *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = AXPY(a, x[i], y[i]);
}
)";
static const char *HEADER = "#define AXPY(a, x, y) ((a) * (x) + (y))\n";

#define CHECK_RTC(call)                                                             \
    do {                                                                            \
        hiprtcResult r_ = (call);                                                   \
        if (r_ != HIPRTC_SUCCESS) {                                                 \
            std::printf("%s: %s\n", #call, hiprtcGetErrorString(r_));               \
            return 1;                                                               \
        }                                                                           \
    } while (0)
#define CHECK_HIP(call)                                                             \
    do {                                                                            \
        hipError_t e_ = (call);                                                     \
        if (e_ != hipSuccess) {                                                     \
            std::printf("%s: %s\n", #call, hipGetErrorName(e_));                    \
            return 1;                                                               \
        }                                                                           \
    } while (0)

int main() {
    hiprtcProgram prog;
    const char *headers[] = {HEADER}, *names[] = {"axpy.h"};
    CHECK_RTC(hiprtcCreateProgram(&prog, SRC, "axpy.hip", 1, headers, names));
    CHECK_RTC(hiprtcAddNameExpression(prog, "axpy<float>"));
    hiprtcResult rc = hiprtcCompileProgram(prog, 0, nullptr);
    size_t log_size = 0;
    CHECK_RTC(hiprtcGetProgramLogSize(prog, &log_size));
    if (rc != HIPRTC_SUCCESS) {
        std::string log(log_size, '\0');
        hiprtcGetProgramLog(prog, &log[0]);
        std::printf("compile: %s\n%s\n", hiprtcGetErrorString(rc), log.c_str());
        return 1;
    }
    const char *lowered = nullptr;
    CHECK_RTC(hiprtcGetLoweredName(prog, "axpy<float>", &lowered));
    std::string kernel = lowered;
    size_t size = 0;
    CHECK_RTC(hiprtcGetCodeSize(prog, &size));
    std::vector<char> code(size);
    CHECK_RTC(hiprtcGetCode(prog, code.data()));
    CHECK_RTC(hiprtcDestroyProgram(&prog));
    std::printf("lowered %s\n", kernel.c_str());

    hipModule_t module;
    hipFunction_t f;
    CHECK_HIP(hipModuleLoadData(&module, code.data()));
    CHECK_HIP(hipModuleGetFunction(&f, module, kernel.c_str()));
    const int n = 1000;
    std::vector<float> x(n), y(n);
    for (int i = 0; i < n; i++) {
        x[i] = float(i);
        y[i] = 1.0f;
    }
    float *dx, *dy;
    CHECK_HIP(hipMalloc(&dx, n * sizeof(float)));
    CHECK_HIP(hipMalloc(&dy, n * sizeof(float)));
    CHECK_HIP(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
    float a = 2.0f;
    int count = n;
    void *args[] = {&a, &dx, &dy, &count};
    CHECK_HIP(hipModuleLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    CHECK_HIP(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        if (y[i] != 2.0f * float(i) + 1.0f) {
            std::printf("y[%d] = %g, not %g\n", i, y[i], 2.0f * float(i) + 1.0f);
            return 1;
        }
    CHECK_HIP(hipFree(dx));
    CHECK_HIP(hipFree(dy));
    CHECK_HIP(hipModuleUnload(module));
    std::printf("ok\n");
    return 0;
}
