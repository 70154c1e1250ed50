/* Small copies through one CUDA library, loaded at run time: which library a caller
 * goes through, not the binding, is what sets the floor of a small copy on NVIDIA.
 *
 *   cuda_runtimes LIBRARY [--driver] [--reps N]    -> one line per case on stdout
 *
 * LIBRARY is a libcudart.so.* (its cudaMemcpyAsync / cudaMemcpy, the calls HIP's NVIDIA
 * headers make, CuPy's cupy.cuda.runtime and the C references make) or, with --driver,
 * libcuda.so.1 (cuMemcpyAsync / cuMemcpy: cuda.core's Buffer.copy_from).  The cases are
 * rocpy bench's small copies (rocpy/bench/cases/copy.py): 16 asynchronous 4 KiB copies on
 * a non-blocking stream and one synchronize, per copy, for H2D/D2H from pinned and
 * pageable memory and D2D; and one synchronous 64-byte copy from pinned memory each way.
 * Each figure is the median over N timed calls (2000 by default), microseconds.
 * rocpy's nvidia backend is built on CUDA 11's runtime (HIP 5.x's NVIDIA headers use
 * APIs CUDA 12 removed); CuPy and cuda.core come with CUDA 12 or 13.  Run by
 * benchmarks/device/h200.sh with each library it finds.  Plain C, no CUDA headers: the
 * few signatures it needs are the same in CUDA 11, 12 and 13.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OPS = 16, SMALL = 4096, TINY = 64 };
enum { H2D = 1, D2H = 2, D2D = 3 };        /* cudaMemcpyKind's values */

typedef int (*copy_async_fn)(void *dst, const void *src, size_t n, int kind, void *stream);
typedef int (*copy_fn)(void *dst, const void *src, size_t n, int kind);
typedef int (*sync_fn)(void *stream);

struct api {
    copy_async_fn copy_async;
    copy_fn copy;
    sync_fn sync;
    void *stream;
    int version;
};

static void *sym(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "cuda_runtimes: %s not found: %s\n", name, dlerror());
        exit(2);
    }
    return p;
}

static void check(int status, const char *what)
{
    if (status != 0) {
        fprintf(stderr, "cuda_runtimes: %s failed with status %d\n", what, status);
        exit(1);
    }
}

/* The driver's calls take no kind (unified addressing): adapters with the runtime's shape. */
static int (*cu_copy_async)(unsigned long long, unsigned long long, size_t, void *);
static int (*cu_copy)(unsigned long long, unsigned long long, size_t);
static int drv_copy_async(void *d, const void *s, size_t n, int kind, void *stream)
{
    (void)kind;
    return cu_copy_async((unsigned long long)d, (unsigned long long)s, n, stream);
}
static int drv_copy(void *d, const void *s, size_t n, int kind)
{
    (void)kind;
    return cu_copy((unsigned long long)d, (unsigned long long)s, n);
}

static void open_driver(void *lib, struct api *a, void **dev, void **pinned)
{
    int (*init)(unsigned) = sym(lib, "cuInit");
    int (*get)(int *, int) = sym(lib, "cuDeviceGet");
    int (*retain)(void **, int) = sym(lib, "cuDevicePrimaryCtxRetain");
    int (*set_current)(void *) = sym(lib, "cuCtxSetCurrent");
    int (*stream_create)(void **, unsigned) = sym(lib, "cuStreamCreate");
    int (*mem_alloc)(unsigned long long *, size_t) = sym(lib, "cuMemAlloc_v2");
    int (*host_alloc)(void **, size_t) = sym(lib, "cuMemAllocHost_v2");
    int (*version)(int *) = sym(lib, "cuDriverGetVersion");
    int device;
    void *ctx;
    unsigned long long d;
    check(init(0), "cuInit");
    check(get(&device, 0), "cuDeviceGet");
    check(retain(&ctx, device), "cuDevicePrimaryCtxRetain");
    check(set_current(ctx), "cuCtxSetCurrent");
    check(stream_create(&a->stream, 1), "cuStreamCreate");        /* CU_STREAM_NON_BLOCKING */
    check(mem_alloc(&d, 2 * SMALL), "cuMemAlloc");
    check(host_alloc(pinned, SMALL), "cuMemAllocHost");
    check(version(&a->version), "cuDriverGetVersion");
    cu_copy_async = sym(lib, "cuMemcpyAsync");
    cu_copy = sym(lib, "cuMemcpy");
    a->copy_async = drv_copy_async;
    a->copy = drv_copy;
    a->sync = (sync_fn)sym(lib, "cuStreamSynchronize");
    *dev = (void *)d;
}

static void open_runtime(void *lib, struct api *a, void **dev, void **pinned)
{
    int (*set_device)(int) = sym(lib, "cudaSetDevice");
    int (*stream_create)(void **, unsigned) = sym(lib, "cudaStreamCreateWithFlags");
    int (*mem_alloc)(void **, size_t) = sym(lib, "cudaMalloc");
    int (*host_alloc)(void **, size_t) = sym(lib, "cudaMallocHost");
    int (*version)(int *) = sym(lib, "cudaRuntimeGetVersion");
    check(set_device(0), "cudaSetDevice");
    check(stream_create(&a->stream, 1), "cudaStreamCreateWithFlags");  /* cudaStreamNonBlocking */
    check(mem_alloc(dev, 2 * SMALL), "cudaMalloc");
    check(host_alloc(pinned, SMALL), "cudaMallocHost");
    check(version(&a->version), "cudaRuntimeGetVersion");
    a->copy_async = (copy_async_fn)sym(lib, "cudaMemcpyAsync");
    a->copy = (copy_fn)sym(lib, "cudaMemcpy");
    a->sync = (sync_fn)sym(lib, "cudaStreamSynchronize");
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median microseconds per copy: `ops` copies (asynchronous and one sync when ops > 1). */
static double time_case(const struct api *a, void *dst, const void *src, size_t n, int kind,
                        int ops, int reps, double *samples)
{
    for (int r = -reps / 10; r < reps; r++) {       /* the first tenth warms up, untimed */
        double t0 = now_us();
        if (ops > 1) {
            for (int i = 0; i < ops; i++)
                check(a->copy_async(dst, src, n, kind, a->stream), "copy (async)");
            check(a->sync(a->stream), "synchronize");
        } else {
            check(a->copy(dst, src, n, kind), "copy");
        }
        if (r >= 0)
            samples[r] = (now_us() - t0) / ops;
    }
    qsort(samples, reps, sizeof *samples, by_value);
    return samples[reps / 2];
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int driver = 0, reps = 2000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--driver"))
            driver = 1;
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else
            path = argv[i];
    }
    if (!path || reps < 1) {
        fprintf(stderr, "usage: cuda_runtimes LIBRARY [--driver] [--reps N]\n");
        return 2;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "cuda_runtimes: %s\n", dlerror());
        return 2;
    }
    struct api a = {0};
    void *dev, *pinned;
    (driver ? open_driver : open_runtime)(lib, &a, &dev, &pinned);
    char *pageable = malloc(SMALL), *dev2 = (char *)dev + SMALL;
    double *samples = malloc(sizeof *samples * reps);
    memset(pageable, 1, SMALL);
    memset(pinned, 1, SMALL);
    struct { const char *name; void *dst; const void *src; size_t n; int kind, ops; } cases[] = {
        {"H2D pinned 4 KiB", dev, pinned, SMALL, H2D, OPS},
        {"H2D pageable 4 KiB", dev, pageable, SMALL, H2D, OPS},
        {"D2H pinned 4 KiB", pinned, dev, SMALL, D2H, OPS},
        {"D2H pageable 4 KiB", pageable, dev, SMALL, D2H, OPS},
        {"D2D device 4 KiB", dev2, dev, SMALL, D2D, OPS},
        {"H2D 64 B sync", dev, pinned, TINY, H2D, 1},
        {"D2H 64 B sync", pinned, dev, TINY, D2H, 1},
    };
    const char *label = driver ? "driver" : "runtime";
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        printf("%-8s %6d  %-20s %8.3f us\n", label, a.version, cases[i].name,
               time_case(&a, cases[i].dst, cases[i].src, cases[i].n, cases[i].kind,
                         cases[i].ops, reps, samples));
    return 0;
}
