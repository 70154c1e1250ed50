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
 *   copy_<dir>      hipMemcpy over sizes (GB/s): h2d/d2h pinned and pageable, d2d
 * Built by benchmarks/c/hip_ref.sh for the backend at hand.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ref.h"

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
    pageable = malloc(max_size);
    memset(pageable, 1, max_size);
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
            CHECK(hipMemcpy(dst, src, size, dirs[d].kind));       /* warm-up */
            CHECK(hipDeviceSynchronize());
            for (int r = 0; r < n; r++) {
                double t0 = now_us();
                CHECK(hipMemcpy(dst, src, size, dirs[d].kind));
                /* a device-to-device hipMemcpy may return before the copy ends */
                CHECK(hipDeviceSynchronize());
                samples[r] = now_us() - t0;
            }
            printf("%s\"%zu\": %.3f", first ? "" : ", ", size, size / median(samples, n) / 1e3);
            first = 0;
        }
        printf("}%s\n", d + 1 < sizeof dirs / sizeof dirs[0] ? "," : "");
    }
    printf("  }\n}\n");
    CHECK(hipFree(dev_a));
    CHECK(hipFree(dev_b));
    CHECK(hipHostFree(pinned));
    free(pageable);
    free(samples);
    CHECK(hipStreamDestroy(stream));
    CHECK(hipModuleUnload(module));
    return 0;
}
