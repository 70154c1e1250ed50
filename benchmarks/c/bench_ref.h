/* What the C references of rocpy's HIP benchmarks (hip_ref.c, peer_ref.c) share:
 * CHECK (a failed HIP call prints itself and exits 1), a monotonic clock in
 * microseconds, and the median of samples (sorts them in place).
 */
#ifndef ROCPY_BENCH_REF_H
#define ROCPY_BENCH_REF_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#define CHECK(call)                                                          \
    do {                                                                     \
        hipError_t err_ = (call);                                            \
        if (err_ != hipSuccess) {                                            \
            fprintf(stderr, "%s failed: %d at line %d\n", #call, (int)err_, __LINE__); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static inline double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
