/* Sets of live handles (streams, events, modules, graphs...): an open
 * addressing hash set of pointers, so validation costs O(1) per call. */
#include <string.h>

#include "hip_internal.h"

#define TOMBSTONE ((void *)1)

static size_t hash(const void *p, size_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static bool grow(hip_registry_t *r) {
    size_t cap = r->cap ? r->cap * 2 : 64;
    /* a table full of tombstones is rebuilt at the same size */
    if (r->cap && r->used * 4 < r->cap) cap = r->cap;
    void **slots = calloc(cap, sizeof *slots);
    if (!slots) return false;
    for (size_t i = 0; i < r->cap; i++) {
        void *h = r->slots[i];
        if (!h || h == TOMBSTONE) continue;
        size_t j = hash(h, cap);
        while (slots[j]) j = (j + 1) & (cap - 1);
        slots[j] = h;
    }
    free(r->slots);
    r->slots = slots;
    r->cap = cap;
    r->tombstones = 0;
    return true;
}

static size_t find(const hip_registry_t *r, const void *h) {
    if (!r->cap) return SIZE_MAX;
    size_t j = hash(h, r->cap);
    for (size_t n = 0; n < r->cap; n++) {
        void *s = r->slots[j];
        if (!s) return SIZE_MAX;
        if (s == h) return j;
        j = (j + 1) & (r->cap - 1);
    }
    return SIZE_MAX;
}

bool hip_registry_add(hip_registry_t *r, void *h) {
    pthread_mutex_lock(&r->lock);
    bool ok = true;
    if ((r->used + r->tombstones + 1) * 2 > r->cap) ok = grow(r);
    if (ok && find(r, h) == SIZE_MAX) {
        size_t j = hash(h, r->cap);
        while (r->slots[j] && r->slots[j] != TOMBSTONE) j = (j + 1) & (r->cap - 1);
        if (r->slots[j] == TOMBSTONE) r->tombstones--;
        r->slots[j] = h;
        r->used++;
    }
    pthread_mutex_unlock(&r->lock);
    return ok;
}

bool hip_registry_remove(hip_registry_t *r, void *h) {
    pthread_mutex_lock(&r->lock);
    size_t j = find(r, h);
    if (j != SIZE_MAX) {
        r->slots[j] = TOMBSTONE;
        r->used--;
        r->tombstones++;
    }
    pthread_mutex_unlock(&r->lock);
    return j != SIZE_MAX;
}

bool hip_registry_contains(hip_registry_t *r, const void *h) {
    if (!h || h == TOMBSTONE) return false;
    pthread_mutex_lock(&r->lock);
    bool found = find(r, h) != SIZE_MAX;
    pthread_mutex_unlock(&r->lock);
    return found;
}

bool hip_registry_remove_if(hip_registry_t *r, void *h, bool (*check)(void *h, void *ctx),
                            void *ctx) {
    pthread_mutex_lock(&r->lock);
    size_t j = find(r, h);
    bool removed = j != SIZE_MAX && check(h, ctx);
    if (removed) {
        r->slots[j] = TOMBSTONE;
        r->used--;
        r->tombstones++;
    }
    pthread_mutex_unlock(&r->lock);
    return removed;
}

void hip_registry_foreach(hip_registry_t *r, void (*fn)(void *h, void *ctx), void *ctx) {
    pthread_mutex_lock(&r->lock);
    for (size_t i = 0; i < r->cap; i++)
        if (r->slots[i] && r->slots[i] != TOMBSTONE) fn(r->slots[i], ctx);
    pthread_mutex_unlock(&r->lock);
}
