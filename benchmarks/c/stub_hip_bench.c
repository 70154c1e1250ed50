/* Throughput of the stub's HIP half, in C (no Python in the loop):
 * kernel launches of an empty kernel and copies H2D/D2H/D2D at a few sizes.
 *
 *   benchmarks/c/stub_hip_bench.sh            # builds the kernel and this, runs it
 *   stub_hip_bench EMPTY.hsaco [--json]       # the empty kernel's code object
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        hipError_t e_ = (call);                                                  \
        if (e_ != hipSuccess) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,         \
                    hipGetErrorName(e_));                                        \
            exit(1);                                                             \
        }                                                                        \
    } while (0)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int json;

static void report(const char *what, const char *unit, double value, double per_us) {
    if (json)
        printf("  {\"name\": \"%s\", \"value\": %.3f, \"unit\": \"%s\", \"us_per_op\": %.3f},\n",
               what, value, unit, per_us);
    else
        printf("%-34s %12.2f %-10s %10.3f us/op\n", what, value, unit, per_us);
}

static void bench_launch(hipFunction_t f, hipStream_t s) {
    const int warm = 1000, n = 200000, lat = 20000;
    void *extra_none[] = {NULL};
    (void)extra_none;
    for (int i = 0; i < warm; i++)
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
    CHECK(hipStreamSynchronize(s));
    double t0 = now();
    for (int i = 0; i < n; i++)
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
    double t1 = now();
    CHECK(hipStreamSynchronize(s));
    double t2 = now();
    report("launch: enqueue rate", "launch/s", n / (t1 - t0), (t1 - t0) / n * 1e6);
    report("launch: executed rate", "launch/s", n / (t2 - t0), (t2 - t0) / n * 1e6);
    t0 = now();
    for (int i = 0; i < lat; i++) {
        CHECK(hipModuleLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, NULL));
        CHECK(hipStreamSynchronize(s));
    }
    t1 = now();
    report("launch + synchronize latency", "launch/s", lat / (t1 - t0), (t1 - t0) / lat * 1e6);
}

static void bench_copy(const char *name, void *dst, const void *src, size_t size,
                       hipMemcpyKind kind, hipStream_t s, int async) {
    size_t total = (size_t)1 << 31;   /* ~2 GiB moved per measurement */
    int iters = (int)(total / size);
    if (iters > 100000) iters = 100000;
    if (iters < 4) iters = 4;
    CHECK(hipMemcpy(dst, src, size, kind));
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        if (async)
            CHECK(hipMemcpyAsync(dst, src, size, kind, s));
        else
            CHECK(hipMemcpy(dst, src, size, kind));
    }
    CHECK(hipStreamSynchronize(s));
    double t = now() - t0;
    char label[64];
    if (size >= (1 << 20))
        snprintf(label, sizeof label, "%s %zu MiB%s", name, size >> 20, async ? " async" : "");
    else
        snprintf(label, sizeof label, "%s %zu KiB%s", name, size >> 10, async ? " async" : "");
    report(label, "GB/s", (double)size * iters / t / 1e9, t / iters * 1e6);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s EMPTY.hsaco [--json]\n", argv[0]);
        return 2;
    }
    json = argc > 2 && strcmp(argv[2], "--json") == 0;
    hipModule_t m;
    hipFunction_t f;
    hipStream_t s;
    CHECK(hipModuleLoad(&m, argv[1]));
    CHECK(hipModuleGetFunction(&f, m, "empty"));
    CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
    if (json) printf("{\"benchmark\": \"stub_hip_bench\", \"results\": [\n");
    bench_launch(f, s);

    const size_t sizes[] = {4 << 10, 1 << 20, 64 << 20};
    size_t max = sizes[2];
    void *d0, *d1, *pinned;
    void *pageable = malloc(max);
    CHECK(hipMalloc(&d0, max));
    CHECK(hipMalloc(&d1, max));
    CHECK(hipHostMalloc(&pinned, max, 0));
    memset(pageable, 1, max);
    memset(pinned, 1, max);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        bench_copy("H2D pageable", d0, pageable, n, hipMemcpyHostToDevice, s, 0);
        bench_copy("H2D pinned", d0, pinned, n, hipMemcpyHostToDevice, s, 1);
        bench_copy("D2H pageable", pageable, d0, n, hipMemcpyDeviceToHost, s, 0);
        bench_copy("D2H pinned", pinned, d0, n, hipMemcpyDeviceToHost, s, 1);
        bench_copy("D2D", d1, d0, n, hipMemcpyDeviceToDevice, s, 1);
    }
    if (json) printf("  {\"name\": \"end\", \"value\": 0, \"unit\": \"\", \"us_per_op\": 0}\n]}\n");
    CHECK(hipFree(d0));
    CHECK(hipFree(d1));
    CHECK(hipHostFree(pinned));
    free(pageable);
    CHECK(hipStreamDestroy(s));
    CHECK(hipModuleUnload(m));
    return 0;
}
