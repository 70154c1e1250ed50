/* A growable array of pointers: the HIP stub's lists (context stacks,
 * capture dependency sets, graph edges).  Not synchronised: the owner's lock
 * protects it. */
#ifndef ROCPY_STUB_HIP_PTRVEC_H
#define ROCPY_STUB_HIP_PTRVEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct hip_ptrvec {
    void **v;
    size_t n, cap;
} hip_ptrvec_t;

static inline bool hip_ptrvec_push(hip_ptrvec_t *p, void *x) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 8;
        void **v = realloc(p->v, cap * sizeof *v);
        if (!v) return false;
        p->v = v;
        p->cap = cap;
    }
    p->v[p->n++] = x;
    return true;
}

static inline bool hip_ptrvec_contains(const hip_ptrvec_t *p, const void *x) {
    for (size_t i = 0; i < p->n; i++)
        if (p->v[i] == x) return true;
    return false;
}

/* Remove the first occurrence, keeping the order. */
static inline bool hip_ptrvec_remove(hip_ptrvec_t *p, const void *x) {
    for (size_t i = 0; i < p->n; i++) {
        if (p->v[i] == x) {
            memmove(&p->v[i], &p->v[i + 1], (p->n - i - 1) * sizeof *p->v);
            p->n--;
            return true;
        }
    }
    return false;
}

static inline bool hip_ptrvec_copy(hip_ptrvec_t *dst, const hip_ptrvec_t *src) {
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++)
        if (!hip_ptrvec_push(dst, src->v[i])) return false;
    return true;
}

static inline void hip_ptrvec_free(hip_ptrvec_t *p) {
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

#endif
