/* The kernel emulation registry: kernel name -> function that performs the
 * whole dispatch on the host.  Python registers through
 * rocpy_stub_register_kernel; built-in C emulations are added at start. */
#define _GNU_SOURCE  /* strdup, posix_memalign, strnlen under -std=c11 */
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

typedef struct entry {
    char *name;
    rocpy_stub_kernel_fn fn;
    void *user;
    bool builtin;              /* a built-in emulation: a CPU build goes first */
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

static int set_kind(const char *name, rocpy_stub_kernel_fn fn, void *user, bool builtin) {
    int rc = set(name, fn, user);
    pthread_mutex_lock(&lock);
    if (rc == 0 && *find(name)) (*find(name))->builtin = builtin;
    pthread_mutex_unlock(&lock);
    return rc;
}

int rocpy_stub_register_kernel(const char *name, rocpy_stub_kernel_fn fn, void *user) {
    pthread_once(&builtins_once, stub_register_builtin_kernels);
    return set_kind(name, fn, user, false);
}

/* for the built-ins themselves, which run inside pthread_once */
int stub_kernel_register_builtin(const char *name, rocpy_stub_kernel_fn fn) {
    return set_kind(name, fn, NULL, true);
}

/* The order a kernel is looked up in: a user's emulation, the kernel's CPU
 * build (stub_cpukern.c), a built-in emulation. */
static bool lookup_cpu_build(const entry_t *e, const char *name, rocpy_stub_kernel_fn *fn,
                             void **user) {
    return (!e || e->builtin) && stub_cpukern_lookup(name, fn, user);
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
    bool cpu = lookup_cpu_build(e, name, fn, user);
    if (e && !cpu) {
        *fn = e->fn;
        *user = e->user;
    }
    pthread_mutex_unlock(&lock);
    return e != NULL || cpu;
}

/* Where the running emulation first met memory out of reach: one slot per
 * thread (emulations run on the thread that dispatches them), holding the
 * address + 1 so that 0 means none yet.  A pthread key, not _Thread_local:
 * the extension is dlopen'ed (see hip_error.c).  A second key holds what the
 * GPU of a stub_kernel_run_mapped maps (NULL: any tracked memory). */
typedef struct mapping {
    int device;
    uint64_t peers;
} mapping_t;

static pthread_key_t fault_key, mapping_key;
static pthread_once_t fault_once = PTHREAD_ONCE_INIT;

static void fault_key_init(void) {
    if (pthread_key_create(&fault_key, NULL) != 0 || pthread_key_create(&mapping_key, NULL) != 0)
        stub_abort("kernel emulation", "no thread-local key");
}

bool stub_kernel_reach(const void *ptr, size_t size) {
    if (size == 0) return true;
    stub_alloc_t a;
    uintptr_t p = (uintptr_t)ptr;
    pthread_once(&fault_once, fault_key_init);
    if (stub_mem_find(ptr, &a)) {
        const mapping_t *m = pthread_getspecific(mapping_key);
        bool mapped = !m || stub_mem_gpu_reaches(&a, m->device, m->peers);
        if (mapped && size <= a.base + a.size - p) return true;
        /* past the allocation: the first byte past it; not in this GPU's
         * page tables: the first byte touched */
        if (mapped) p = a.base + a.size;
    }
    if (!pthread_getspecific(fault_key)) pthread_setspecific(fault_key, (void *)(p + 1));
    return false;
}

static int run(const rocpy_stub_dispatch_t *d, const mapping_t *m, uint64_t *fault_address) {
    rocpy_stub_kernel_fn fn;
    void *user;
    *fault_address = 0;
    if (!stub_kernel_lookup(d->name, &fn, &user)) return -1;
    pthread_once(&fault_once, fault_key_init);
    /* an emulation that runs another dispatch inline gets its own slots */
    void *outer_fault = pthread_getspecific(fault_key);
    void *outer_mapping = pthread_getspecific(mapping_key);
    pthread_setspecific(fault_key, NULL);
    pthread_setspecific(mapping_key, m);
    int rc = fn(d, user);
    uintptr_t first = (uintptr_t)pthread_getspecific(fault_key);
    if (rc == STUB_KERNEL_MEMORY_FAULT && first) *fault_address = first - 1;
    pthread_setspecific(fault_key, outer_fault);
    pthread_setspecific(mapping_key, outer_mapping);
    return rc;
}

int stub_kernel_run(const rocpy_stub_dispatch_t *d, uint64_t *fault_address) {
    return run(d, NULL, fault_address);
}

int stub_kernel_run_mapped(const rocpy_stub_dispatch_t *d, uint64_t peers,
                           uint64_t *fault_address) {
    mapping_t m = {d->device, peers};
    return run(d, &m, fault_address);
}
