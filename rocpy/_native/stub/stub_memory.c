/* Allocation tracking: every pointer the stub hands out, with its size, kind,
 * device and access rights, kept sorted for lookups of interior pointers. */
#define _GNU_SOURCE  /* strdup, posix_memalign, strnlen under -std=c11 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static stub_alloc_t *table;
static size_t count, capacity;

/* index of the first entry with base > p */
static size_t upper_bound(uintptr_t p) {
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (table[mid].base <= p) lo = mid + 1; else hi = mid;
    }
    return lo;
}

static int find_index(uintptr_t p) {
    size_t i = upper_bound(p);
    if (i == 0) return -1;
    const stub_alloc_t *a = &table[i - 1];
    /* a zero-size entry never exists; p == base + size is one past the end */
    return p < a->base + a->size ? (int)(i - 1) : -1;
}

static int insert(const stub_alloc_t *a) {
    if (count == capacity) {
        size_t cap = capacity ? capacity * 2 : 256;
        stub_alloc_t *t = realloc(table, cap * sizeof *t);
        if (!t) return -1;
        table = t;
        capacity = cap;
    }
    size_t i = upper_bound(a->base);
    memmove(&table[i + 1], &table[i], (count - i) * sizeof *table);
    table[i] = *a;
    count++;
    return 0;
}

static void block_free(void *p) {
    if (stub_guard_enabled()) stub_guard_free(p);
    else free(p);
}

int stub_mem_alloc(size_t size, size_t align, stub_mem_kind_t kind, int device,
                   unsigned flags, void **out) {
    *out = NULL;
    if (size == 0) return -1;
    if (stub_fault_fire(ROCPY_STUB_FAULT_ALLOC)) return -1;
    if (align < 16) align = 16;
    pthread_mutex_lock(&lock);
    stub_device_t *dev = kind == STUB_MEM_DEVICE ? stub_device(device) : NULL;
    if (dev && (size > dev->global_mem_size || dev->mem_in_use > dev->global_mem_size - size)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    void *p = NULL;
    /* round up so aligned_alloc's size rule holds; never overflow */
    if (size > SIZE_MAX - align ||
        (stub_guard_enabled() ? !(p = stub_guard_alloc(size, align))
                              : posix_memalign(&p, align, (size + align - 1) / align * align) != 0)) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    stub_alloc_t a = {(uintptr_t)p, size, device, kind, flags, 0, NULL};
    a.access_mask = device >= 0 ? (1ull << device) : STUB_ACCESS_CPU;
    if (insert(&a) != 0) {
        pthread_mutex_unlock(&lock);
        block_free(p);
        return -1;
    }
    if (dev) dev->mem_in_use += size;
    pthread_mutex_unlock(&lock);
    *out = p;
    return 0;
}

int stub_mem_track(void *ptr, size_t size, stub_mem_kind_t kind, int device, unsigned flags) {
    if (!ptr || size == 0) return -1;
    pthread_mutex_lock(&lock);
    uintptr_t b = (uintptr_t)ptr;
    size_t i = upper_bound(b + size - 1);
    /* refuse overlap with an existing entry */
    if (i > 0 && table[i - 1].base + table[i - 1].size > b) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    stub_alloc_t a = {b, size, device, kind, flags, STUB_ACCESS_CPU, NULL};
    int rc = insert(&a);
    pthread_mutex_unlock(&lock);
    return rc;
}

bool stub_mem_find(const void *ptr, stub_alloc_t *info) {
    pthread_mutex_lock(&lock);
    int i = find_index((uintptr_t)ptr);
    if (i >= 0 && info) *info = table[i];
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

static bool update(const void *base, uint64_t *mask, void **tag) {
    pthread_mutex_lock(&lock);
    int i = find_index((uintptr_t)base);
    bool ok = i >= 0 && table[i].base == (uintptr_t)base;
    if (ok && mask) table[i].access_mask = *mask;
    if (ok && tag) table[i].tag = *tag;
    pthread_mutex_unlock(&lock);
    return ok;
}

bool stub_mem_set_access(const void *base, uint64_t access_mask) {
    return update(base, &access_mask, NULL);
}

bool stub_mem_set_tag(const void *base, void *tag) { return update(base, NULL, &tag); }

bool stub_mem_set_sync_memops(const void *ptr, bool on) {
    pthread_mutex_lock(&lock);
    int i = find_index((uintptr_t)ptr);
    if (i >= 0) table[i].sync_memops = on;
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

bool stub_mem_release(const void *base, unsigned kind_mask, stub_alloc_t *released) {
    pthread_mutex_lock(&lock);
    int i = find_index((uintptr_t)base);
    if (i < 0 || table[i].base != (uintptr_t)base || !(table[i].kind & kind_mask)) {
        pthread_mutex_unlock(&lock);
        return false;
    }
    stub_alloc_t a = table[i];
    memmove(&table[i], &table[i + 1], (count - (size_t)i - 1) * sizeof *table);
    count--;
    stub_device_t *dev = a.kind == STUB_MEM_DEVICE ? stub_device(a.device) : NULL;
    if (dev) dev->mem_in_use -= a.size;
    pthread_mutex_unlock(&lock);
    if (a.kind != STUB_MEM_REGISTERED) block_free((void *)a.base);
    if (released) *released = a;
    return true;
}

bool stub_mem_gpu_reaches(const stub_alloc_t *a, int device, uint64_t peers) {
    if (a->kind != STUB_MEM_DEVICE || a->device == device) return true;
    if (device >= 0 && device < 63 && (a->access_mask & (1ull << device))) return true;
    return a->device >= 0 && a->device < 64 && (peers & (1ull << a->device));
}

uint64_t stub_mem_used(int device) {
    pthread_mutex_lock(&lock);
    stub_device_t *dev = stub_device(device);
    uint64_t used = dev ? dev->mem_in_use : 0;
    pthread_mutex_unlock(&lock);
    return used;
}

size_t rocpy_stub_live_allocations(void) {
    pthread_mutex_lock(&lock);
    size_t n = count;
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---- added for the HIP stub (hipDeviceReset purges a device's memory) --- */

size_t stub_mem_release_where(bool (*pred)(const stub_alloc_t *a, void *ctx), void *ctx) {
    pthread_mutex_lock(&lock);
    size_t kept = 0, n = 0;
    void **dead = malloc((count ? count : 1) * sizeof *dead);
    if (!dead) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        stub_alloc_t *a = &table[i];
        if (!pred(a, ctx)) {
            table[kept++] = *a;
            continue;
        }
        stub_device_t *dev = a->kind == STUB_MEM_DEVICE ? stub_device(a->device) : NULL;
        if (dev) dev->mem_in_use -= a->size;
        if (a->kind != STUB_MEM_REGISTERED) dead[n++] = (void *)a->base;
    }
    size_t released = count - kept;
    count = kept;
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < n; i++) block_free(dead[i]);
    free(dead);
    return released;
}
