/* The kernel emulation registry: kernel name -> function that performs the
 * whole dispatch on the host.  Python registers through
 * rocpy_stub_register_kernel; built-in C emulations are added at start. */
#define _GNU_SOURCE  /* strdup, posix_memalign, strnlen under -std=c11 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

typedef struct entry {
    char *name;
    rocpy_stub_kernel_fn fn;
    void *user;
    struct entry *next;
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *entries;
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static entry_t **find(const char *name) {
    entry_t **e = &entries;
    while (*e && strcmp((*e)->name, name) != 0) e = &(*e)->next;
    return e;
}

static int set(const char *name, rocpy_stub_kernel_fn fn, void *user) {
    if (!name || !*name) return -1;
    pthread_mutex_lock(&lock);
    entry_t **slot = find(name);
    if (!fn) {
        if (*slot) {
            entry_t *dead = *slot;
            *slot = dead->next;
            free(dead->name);
            free(dead);
        }
    } else if (*slot) {
        (*slot)->fn = fn;
        (*slot)->user = user;
    } else {
        entry_t *e = calloc(1, sizeof *e);
        if (!e || !(e->name = strdup(name))) {
            free(e);
            pthread_mutex_unlock(&lock);
            return -1;
        }
        e->fn = fn;
        e->user = user;
        *slot = e;
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

int rocpy_stub_register_kernel(const char *name, rocpy_stub_kernel_fn fn, void *user) {
    pthread_once(&builtins_once, stub_register_builtin_kernels);
    return set(name, fn, user);
}

/* for the built-ins themselves, which run inside pthread_once */
int stub_kernel_register_builtin(const char *name, rocpy_stub_kernel_fn fn) {
    return set(name, fn, NULL);
}

bool stub_kernel_lookup(const char *name, rocpy_stub_kernel_fn *fn, void **user) {
    pthread_once(&builtins_once, stub_register_builtin_kernels);
    size_t len = strlen(name);
    char base[256];
    /* accept the descriptor symbol "k.kd" for kernel "k" */
    if (len > 3 && len < sizeof base && strcmp(name + len - 3, ".kd") == 0) {
        memcpy(base, name, len - 3);
        base[len - 3] = '\0';
        name = base;
    }
    pthread_mutex_lock(&lock);
    entry_t *e = *find(name);
    if (e) {
        *fn = e->fn;
        *user = e->user;
    }
    pthread_mutex_unlock(&lock);
    return e != NULL;
}

/* Faults are fatal (the runtime aborts, or a system event handler takes
 * over), so one process-wide slot is enough to say where. */
static _Atomic uint64_t fault_address;

bool stub_kernel_reach(const void *ptr, size_t size) {
    if (size == 0) return true;
    stub_alloc_t a;
    uintptr_t p = (uintptr_t)ptr;
    if (stub_mem_find(ptr, &a)) {
        if (size <= a.base + a.size - p) return true;
        p = a.base + a.size;   /* the first byte past the allocation */
    }
    atomic_store(&fault_address, (uint64_t)p);
    return false;
}

uint64_t stub_kernel_fault_address(void) { return atomic_load(&fault_address); }

int stub_kernel_run(const rocpy_stub_dispatch_t *d) {
    rocpy_stub_kernel_fn fn;
    void *user;
    if (!stub_kernel_lookup(d->name, &fn, &user)) return -1;
    return fn(d, user);
}
