/* C emulations of the kernels rocpy's tests and benchmarks use.  Their
 * argument layouts are those hipcc gives the sources in tests/kernels/:
 * explicit arguments first, at their natural alignment.  Every range they
 * touch is checked first (stub_kernel_reach): memory no allocation covers
 * (NULL, freed, forged) is a GPU memory fault, never a host crash. */
#include <string.h>

#include "stub_core.h"

int stub_kernel_register_builtin(const char *name, rocpy_stub_kernel_fn fn);

static uint64_t total(const rocpy_stub_dispatch_t *d) {
    return (uint64_t)d->grid[0] * d->grid[1] * d->grid[2];
}

/* empty(): does nothing; used for dispatch latency */
static int k_empty(const rocpy_stub_dispatch_t *d, void *u) { (void)d; (void)u; return 0; }

/* vadd(const float *a, const float *b, float *c, int n): c[i] = a[i] + b[i] */
static int k_vadd(const rocpy_stub_dispatch_t *d, void *u) {
    (void)u;
    if (d->kernarg_size < 28) return 1;
    const float *a, *b;
    float *c;
    int n;
    memcpy(&a, (char *)d->kernarg + 0, 8);
    memcpy(&b, (char *)d->kernarg + 8, 8);
    memcpy(&c, (char *)d->kernarg + 16, 8);
    memcpy(&n, (char *)d->kernarg + 24, 4);
    uint64_t t = total(d), count = (uint64_t)(n < 0 ? 0 : n);
    if (count > t) count = t;
    if (!stub_kernel_reach(a, count * sizeof *a) || !stub_kernel_reach(b, count * sizeof *b) ||
        !stub_kernel_reach(c, count * sizeof *c))
        return STUB_KERNEL_MEMORY_FAULT;
    for (uint64_t i = 0; i < count; i++) c[i] = a[i] + b[i];
    return 0;
}

/* fill(unsigned *p, unsigned value, int n): p[i] = value */
static int k_fill(const rocpy_stub_dispatch_t *d, void *u) {
    (void)u;
    if (d->kernarg_size < 16) return 1;
    unsigned *p, value;
    int n;
    memcpy(&p, (char *)d->kernarg + 0, 8);
    memcpy(&value, (char *)d->kernarg + 8, 4);
    memcpy(&n, (char *)d->kernarg + 12, 4);
    uint64_t t = total(d), count = (uint64_t)(n < 0 ? 0 : n);
    if (count > t) count = t;
    if (!stub_kernel_reach(p, count * sizeof *p)) return STUB_KERNEL_MEMORY_FAULT;
    for (uint64_t i = 0; i < count; i++) p[i] = value;
    return 0;
}

void stub_register_builtin_kernels(void) {
    stub_kernel_register_builtin("empty", k_empty);
    stub_kernel_register_builtin("vadd", k_vadd);
    stub_kernel_register_builtin("fill", k_fill);
}
