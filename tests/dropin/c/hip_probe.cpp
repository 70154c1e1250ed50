// A HIP host program in C++ written against the real headers, nothing of
// rocpy in it: devices, memory, copies in every direction (two devices, peer
// included), memset, streams, events, an error status.  Built by
// tests/dropin/test_programs.py with g++ (or hipcc), linked to the installed
// libamdhip64; run on whatever libamdhip64 the loader finds.  Prints the
// path of the one it loaded, then "ok".
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <hip/hip_runtime_api.h>

#define CHECK(call)                                                                     \
    do {                                                                                \
        hipError_t e_ = (call);                                                         \
        if (e_ != hipSuccess) {                                                         \
            std::fprintf(stderr, "line %d: %s: %s\n", __LINE__, #call, hipGetErrorName(e_)); \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

static void fail(const char *what) {
    std::fprintf(stderr, "%s\n", what);
    std::exit(1);
}

int main() {
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    if (count < 2) fail("need two devices");
    hipDeviceProp_t prop;
    CHECK(hipGetDeviceProperties(&prop, 0));
    std::printf("devices %d first %s %s\n", count, prop.name, prop.gcnArchName);

    const size_t n = 1 << 20;
    std::vector<unsigned char> src(n), dst(n);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 13 + 1);
    void *d0, *d1, *pinned;
    CHECK(hipSetDevice(0));
    CHECK(hipMalloc(&d0, n));
    CHECK(hipHostMalloc(&pinned, n, hipHostMallocDefault));
    CHECK(hipSetDevice(1));
    CHECK(hipMalloc(&d1, n));
    CHECK(hipSetDevice(0));

    CHECK(hipMemcpy(d0, src.data(), n, hipMemcpyHostToDevice));
    int can = 0;
    CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
    CHECK(hipMemcpyPeer(d1, 1, d0, 0, n));                       // device 0 -> device 1
    hipStream_t s;
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    hipEvent_t start, stop;
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    CHECK(hipEventRecord(start, s));
    CHECK(hipMemcpyAsync(pinned, d1, n, hipMemcpyDeviceToHost, s));   // device 1 -> pinned
    CHECK(hipMemcpyAsync(d0, d0, 0, hipMemcpyDeviceToDevice, s));
    CHECK(hipEventRecord(stop, s));
    CHECK(hipStreamSynchronize(s));
    CHECK(hipEventSynchronize(stop));
    float ms = -1;
    CHECK(hipEventElapsedTime(&ms, start, stop));
    if (ms < 0) fail("elapsed time");
    CHECK(hipMemcpy(dst.data(), pinned, n, hipMemcpyHostToHost));
    if (std::memcmp(src.data(), dst.data(), n) != 0) fail("copies differ");

    CHECK(hipMemsetAsync(d0, 0x5a, n, s));
    CHECK(hipMemcpyAsync(dst.data(), d0, n, hipMemcpyDefault, s));   // pageable: synchronous
    CHECK(hipStreamSynchronize(s));
    for (size_t i = 0; i < n; i++)
        if (dst[i] != 0x5a) fail("memset");

    size_t free_b = 0, total_b = 0;
    CHECK(hipMemGetInfo(&free_b, &total_b));
    if (free_b >= total_b) fail("memory info");

    // a bad pointer is a status, not a crash; it stays the last error
    if (hipFree((void *)0x1234) != hipErrorInvalidValue) fail("hipFree of a bad pointer");
    if (hipGetLastError() != hipErrorInvalidValue) fail("last error");
    if (hipGetLastError() != hipSuccess) fail("last error reset");

    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    CHECK(hipStreamDestroy(s));
    CHECK(hipFree(d0));
    CHECK(hipFree(d1));
    CHECK(hipHostFree(pinned));
    Dl_info info;
    if (!dladdr((void *)&hipGetDeviceCount, &info)) fail("dladdr");
    std::printf("lib %s\n", info.dli_fname);
    std::printf("ok\n");
    return 0;
}
