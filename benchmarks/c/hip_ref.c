/* The C reference for rocpy's HIP benchmarks: the same HIP calls, made from C.
 *
 *   hip_ref KERNEL_FILE [--quick]     -> JSON on stdout
 *
 * KERNEL_FILE holds an `empty` kernel (a cubin on NVIDIA, a code object on
 * AMD/stub).  Arms (each a median over repetitions, microseconds):
 *   launch_enqueue  hipModuleLaunchKernel of `empty`, batched (per launch)
 *   launch_sync     one launch + hipStreamSynchronize
 *   launch4_enqueue, launch4_sync  the same for a 4-argument `vadd(a, b, c, n)` when
 *                   KERNEL_FILE has one (rocpy bench's kernels do): its arguments packed
 *                   once into one buffer passed through `extra`, as rocpy passes them
 *   copy_latency    4-byte pinned host-to-device hipMemcpy
 *   bandwidth_gbps  copies over sizes (GB/s): h2d/d2h pinned and pageable, d2d, the
 *                   operation of rocpy bench's copy cases (rocpy/bench/cases/copy.py): a
 *                   batch of hipMemcpyAsync on the non-blocking stream (as many as the
 *                   bench batches: ops_for) and one hipStreamSynchronize, from a pageable
 *                   buffer made as numpy makes a large array (malloc, MADV_HUGEPAGE from
 *                   4 MiB up: numpy's default on Linux), touched before timing
 *   pageable_experiment  64 and 256 MiB (--quick: 4 and 16) pageable copies each way, four ways: {malloc,
 *                   malloc + MADV_HUGEPAGE} x {hipMemcpy + hipDeviceSynchronize (what
 *                   this program timed before 2026-12-02 session 4), hipMemcpyAsync +
 *                   hipStreamSynchronize (the bench)}: which of the two explains pageable
 *                   copies in C being faster than every Python caller's; microseconds
 * Built by benchmarks/c/hip_ref.sh for the backend at hand.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdint.h>
#include <sys/mman.h>

#include "bench_ref.h"

/* A pageable buffer as numpy allocates a large array: malloc, then (numpy's
 * indicate_hugepages, from 4 MiB up, on by default on Linux) MADV_HUGEPAGE from the
 * first page boundary in it; or plain malloc.  Touched (memset) either way. */
static void *pageable_alloc(size_t size, int hugepage)
{
    char *p = malloc(size);
    if (!p) {
        fprintf(stderr, "malloc(%zu) failed\n", size);
        exit(1);
    }
#ifdef MADV_HUGEPAGE
    if (hugepage && size >= (4u << 20)) {
        size_t offset = 4096 - ((uintptr_t)p % 4096);
        madvise(p + offset, size - offset, MADV_HUGEPAGE);
    }
#else
    (void)hugepage;
#endif
    memset(p, 1, size);
    return p;
}

/* rocpy bench's copies per timed call (rocpy/bench/cases/copy.py ops_for) */
static int ops_for(size_t size)
{
    size_t n = (4u << 20) / (size ? size : 1);
    return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

/* One timed sample of a copy, microseconds per copy: `ops` hipMemcpyAsync on `stream`
 * and one hipStreamSynchronize (async), or one hipMemcpy and hipDeviceSynchronize. */
static double copy_sample(void *dst, void *src, size_t size, hipMemcpyKind kind, int ops,
                          int async, hipStream_t stream)
{
    double t0 = now_us();
    if (async) {
        for (int i = 0; i < ops; i++)
            CHECK(hipMemcpyAsync(dst, src, size, kind, stream));
        CHECK(hipStreamSynchronize(stream));
    } else {
        for (int i = 0; i < ops; i++)
            CHECK(hipMemcpy(dst, src, size, kind));
        /* a device-to-device hipMemcpy may return before the copy ends */
        CHECK(hipDeviceSynchronize());
    }
    return (now_us() - t0) / ops;
}

typedef struct { const char *name; hipMemcpyKind kind; int pinned; } direction_t;

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s KERNEL_FILE [--quick]\n", argv[0]);
        return 2;
    }
    int quick = argc > 2 && strcmp(argv[2], "--quick") == 0;
    int reps = quick ? 30 : 200, batch = quick ? 200 : 2000;
    size_t max_size = quick ? (16u << 20) : (1u << 30);
    double *samples = malloc(sizeof(double) * (size_t)(reps > batch ? reps : batch));

    CHECK(hipSetDevice(0));
    CHECK(hipFree(NULL));   /* make the device's context current (CUDA 11 is lazy) */
    hipModule_t module;
    hipFunction_t empty;
    CHECK(hipModuleLoad(&module, argv[1]));
    CHECK(hipModuleGetFunction(&empty, module, "empty"));
    hipStream_t stream;
    CHECK(hipStreamCreateWithFlags(&stream, hipStreamNonBlocking));

    printf("{\n  \"tool\": \"hip_ref.c\",\n");
    /* launch, batched enqueue */
    for (int i = 0; i < 100; i++)
        CHECK(hipModuleLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
    CHECK(hipStreamSynchronize(stream));
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        for (int i = 0; i < 100; i++)
            CHECK(hipModuleLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        samples[r] = (now_us() - t0) / 100;
        CHECK(hipStreamSynchronize(stream));
    }
    printf("  \"launch_enqueue_us\": %.3f,\n", median(samples, reps));
    /* launch + synchronize */
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        CHECK(hipModuleLaunchKernel(empty, 1, 1, 1, 32, 1, 1, 0, stream, NULL, NULL));
        CHECK(hipStreamSynchronize(stream));
        samples[r] = now_us() - t0;
    }
    printf("  \"launch_sync_us\": %.3f,\n", median(samples, reps));

    hipFunction_t vadd;
    if (hipModuleGetFunction(&vadd, module, "vadd") == hipSuccess) {
        void *bufs[3];
        for (int i = 0; i < 3; i++)
            CHECK(hipMalloc(&bufs[i], 4));
        struct { void *a, *b, *c; int n; } args = {bufs[0], bufs[1], bufs[2], 1};
        size_t args_size = 28;   /* 3 pointers and an int, no tail padding (the layout's size) */
        void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                         &args_size, HIP_LAUNCH_PARAM_END};
        for (int r = 0; r < reps; r++) {
            double t0 = now_us();
            for (int i = 0; i < 100; i++)
                CHECK(hipModuleLaunchKernel(vadd, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra));
            samples[r] = (now_us() - t0) / 100;
            CHECK(hipStreamSynchronize(stream));
        }
        printf("  \"launch4_enqueue_us\": %.3f,\n", median(samples, reps));
        for (int r = 0; r < reps; r++) {
            double t0 = now_us();
            CHECK(hipModuleLaunchKernel(vadd, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra));
            CHECK(hipStreamSynchronize(stream));
            samples[r] = now_us() - t0;
        }
        printf("  \"launch4_sync_us\": %.3f,\n", median(samples, reps));
        for (int i = 0; i < 3; i++)
            CHECK(hipFree(bufs[i]));
    } else {
        (void)hipGetLastError();
    }

    void *dev_a, *dev_b, *pinned, *pageable;
    CHECK(hipMalloc(&dev_a, max_size));
    CHECK(hipMalloc(&dev_b, max_size));
    CHECK(hipHostMalloc(&pinned, max_size, 0));
    pageable = pageable_alloc(max_size, 1);
    memset(pinned, 1, max_size);
    /* small-copy latency */
    for (int r = 0; r < reps; r++) {
        double t0 = now_us();
        CHECK(hipMemcpy(dev_a, pinned, 4, hipMemcpyHostToDevice));
        samples[r] = now_us() - t0;
    }
    printf("  \"copy_latency_us\": %.3f,\n", median(samples, reps));

    const direction_t dirs[] = {
        {"h2d_pinned", hipMemcpyHostToDevice, 1}, {"d2h_pinned", hipMemcpyDeviceToHost, 1},
        {"h2d_pageable", hipMemcpyHostToDevice, 0}, {"d2h_pageable", hipMemcpyDeviceToHost, 0},
        {"d2d", hipMemcpyDeviceToDevice, 0}};
    printf("  \"bandwidth_gbps\": {\n");
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        printf("    \"%s\": {", dirs[d].name);
        int first = 1;
        for (size_t size = 4096; size <= max_size; size *= 4) {
            void *host = dirs[d].pinned ? pinned : pageable;
            void *dst = dirs[d].kind == hipMemcpyDeviceToHost ? host : dev_b;
            void *src = dirs[d].kind == hipMemcpyHostToDevice ? host : dev_a;
            int n = size >= (64u << 20) ? (quick ? 3 : 10) : reps / 4 + 3;
            int ops = ops_for(size);
            copy_sample(dst, src, size, dirs[d].kind, ops, 1, stream);   /* warm-up */
            for (int r = 0; r < n; r++)
                samples[r] = copy_sample(dst, src, size, dirs[d].kind, ops, 1, stream);
            printf("%s\"%zu\": %.3f", first ? "" : ", ", size, size / median(samples, n) / 1e3);
            first = 0;
        }
        printf("}%s\n", d + 1 < sizeof dirs / sizeof dirs[0] ? "," : "");
    }
    printf("  },\n");

    /* which of buffer and call makes C's pageable copies faster than the bench's */
    printf("  \"pageable_experiment\": {");
    const char *thp_path = "/sys/kernel/mm/transparent_hugepage/enabled";
    char thp[128] = "";
    FILE *f = fopen(thp_path, "r");
    if (f) {
        if (!fgets(thp, sizeof thp, f))
            thp[0] = 0;
        fclose(f);
        thp[strcspn(thp, "\n\"")] = 0;
    }
    printf("\"thp\": \"%s\"", thp);
    for (int huge = 0; huge < 2; huge++) {
        size_t lo = quick ? (4u << 20) : (64u << 20), hi = quick ? (16u << 20) : (256u << 20);
        for (size_t size = lo; size <= hi && size <= max_size; size *= 4) {
            void *host = pageable_alloc(size, huge);
            for (int way = 0; way < 2; way++) {
                hipMemcpyKind kind = way ? hipMemcpyDeviceToHost : hipMemcpyHostToDevice;
                for (int async = 0; async < 2; async++) {
                    void *dst = way ? host : dev_b, *src = way ? dev_a : host;
                    int n = quick ? 3 : size > lo ? 5 : 10;
                    copy_sample(dst, src, size, kind, 1, async, stream);    /* warm-up */
                    for (int r = 0; r < n; r++)
                        samples[r] = copy_sample(dst, src, size, kind, 1, async, stream);
                    printf(", \"%s %s %s %zu MiB\": %.1f", way ? "d2h" : "h2d",
                           huge ? "hugepage" : "malloc", async ? "async" : "hipMemcpy",
                           size >> 20, median(samples, n));
                }
            }
            free(host);
        }
    }
    printf("}\n}\n");
    CHECK(hipFree(dev_a));
    CHECK(hipFree(dev_b));
    CHECK(hipHostFree(pinned));
    free(pageable);
    free(samples);
    CHECK(hipStreamDestroy(stream));
    CHECK(hipModuleUnload(module));
    return 0;
}
