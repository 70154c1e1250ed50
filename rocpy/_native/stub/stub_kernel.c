/* The kernel emulation registry.  A dispatch of kernel N runs, in this order:
 *   1. the emulation a user registered for N (rocpy_stub_register_kernel:
 *      Python's rocpy.stub.register_kernel, C's rocpy_stub.h);
 *   2. the CPU build of N in the code object the dispatch comes from
 *      (stub_cpukern.c: a hipRTC program's or a combined bundle's, compiled
 *      from the kernel's HIP source for the host);
 *   3. a built-in emulation (stub_builtin_kernels.c), kept under its own
 *      namespaced name "rocpy.builtin.N" and taken only for names enabled
 *      with rocpy_stub_use_builtin / $ROCPY_STUB_BUILTINS (rocpy's own
 *      tests and benchmarks), so it never runs in place of a user's kernel
 *      that merely has the same name;
 *   4. nothing: the launch fails, and stderr says once per name which
 *      kernel and how to give it a way to run. */
#define _GNU_SOURCE  /* strdup, posix_memalign, strnlen under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

#define BUILTIN_PREFIX "rocpy.builtin."

typedef struct entry {
    char *name;
    rocpy_stub_kernel_fn fn;
    void *user;
    struct entry *next;
} entry_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry_t *entries;         /* users' and built-ins' (namespaced) emulations */
static entry_t *enabled;         /* names whose built-in may run (fn unused) */
static entry_t *reported;        /* names already reported as having no way to run */
static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

static entry_t **find_in(entry_t **list, const char *name) {
    entry_t **e = list;
    while (*e && strcmp((*e)->name, name) != 0) e = &(*e)->next;
    return e;
}

static int set_in(entry_t **list, const char *name, rocpy_stub_kernel_fn fn, void *user, bool remove) {
    if (!name || !*name) return -1;
    entry_t **slot = find_in(list, name);
    if (remove) {
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
            return -1;
        }
        e->fn = fn;
        e->user = user;
        *slot = e;
    }
    return 0;
}

static int set(const char *name, rocpy_stub_kernel_fn fn, void *user) {
    pthread_mutex_lock(&lock);
    int rc = set_in(&entries, name, fn, user, fn == NULL);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int enable(const char *name, bool on) {
    pthread_mutex_lock(&lock);
    int rc = set_in(&enabled, name, NULL, NULL, !on);
    pthread_mutex_unlock(&lock);
    return rc;
}

/* $ROCPY_STUB_BUILTINS: comma-separated names, or "all" */
static void init_builtins(void) {
    stub_register_builtin_kernels();
    const char *env = getenv("ROCPY_STUB_BUILTINS");
    char buf[512];
    if (!env || !*env || strlen(env) >= sizeof buf) return;
    strcpy(buf, env);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        enable(tok, true);
}

int rocpy_stub_register_kernel(const char *name, rocpy_stub_kernel_fn fn, void *user) {
    pthread_once(&builtins_once, init_builtins);
    if (name && strncmp(name, BUILTIN_PREFIX, strlen(BUILTIN_PREFIX)) == 0) return -1;
    return set(name, fn, user);
}

int rocpy_stub_use_builtin(const char *name, int on) {
    pthread_once(&builtins_once, init_builtins);
    char key[256];
    if (!name || snprintf(key, sizeof key, BUILTIN_PREFIX "%s", name) >= (int)sizeof key) return -1;
    pthread_mutex_lock(&lock);
    bool known = *find_in(&entries, key) != NULL;
    pthread_mutex_unlock(&lock);
    return known ? enable(name, on != 0) : -1;
}

/* for the built-ins themselves, which run inside pthread_once */
int stub_kernel_register_builtin(const char *name, rocpy_stub_kernel_fn fn) {
    char key[256];
    snprintf(key, sizeof key, BUILTIN_PREFIX "%s", name);
    return set(key, fn, NULL);
}

static void report_missing(const char *name) {
    pthread_mutex_lock(&lock);
    bool first = !*find_in(&reported, name) && set_in(&reported, name, NULL, NULL, false) == 0;
    pthread_mutex_unlock(&lock);
    if (first)
        fprintf(stderr,
                "rocpy stub: kernel '%s' has no way to run on the stub (it runs no GPU code): "
                "register an emulation for it (Python: rocpy.stub.register_kernel('%s', fn); "
                "C: rocpy_stub_register_emulation from rocpy_stub.h), or give it a CPU build; "
                "see docs/testing.md\n", name, name);
}

bool stub_kernel_lookup(const char *name, const stub_cpu_build_t *cpu, rocpy_stub_kernel_fn *fn,
                        void **user) {
    pthread_once(&builtins_once, init_builtins);
    size_t len = strlen(name);
    char base[256], key[256 + sizeof BUILTIN_PREFIX];
    /* accept the descriptor symbol "k.kd" for kernel "k" */
    if (len > 3 && len < sizeof base && strcmp(name + len - 3, ".kd") == 0) {
        memcpy(base, name, len - 3);
        base[len - 3] = '\0';
        name = base;
    }
    pthread_mutex_lock(&lock);
    entry_t *e = *find_in(&entries, name);                    /* 1. the user's */
    pthread_mutex_unlock(&lock);
    if (!e && stub_cpukern_lookup(cpu, name, fn, user)) return true;   /* 2. */
    if (!e) {                                                 /* 3. an enabled built-in */
        snprintf(key, sizeof key, BUILTIN_PREFIX "%s", name);
        pthread_mutex_lock(&lock);
        if (*find_in(&enabled, name)) e = *find_in(&entries, key);
        pthread_mutex_unlock(&lock);
    }
    if (!e) {                                                 /* 4. none */
        report_missing(name);
        return false;
    }
    *fn = e->fn;
    *user = e->user;
    return true;
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

static int run(const rocpy_stub_dispatch_t *d, const stub_cpu_build_t *cpu, const mapping_t *m,
               uint64_t *fault_address) {
    rocpy_stub_kernel_fn fn;
    void *user;
    *fault_address = 0;
    if (!stub_kernel_lookup(d->name, cpu, &fn, &user)) return -1;
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

int stub_kernel_run(const rocpy_stub_dispatch_t *d, const stub_cpu_build_t *cpu,
                    uint64_t *fault_address) {
    return run(d, cpu, NULL, fault_address);
}

int stub_kernel_run_mapped(const rocpy_stub_dispatch_t *d, const stub_cpu_build_t *cpu,
                           uint64_t peers, uint64_t *fault_address) {
    mapping_t m = {d->device, peers};
    return run(d, cpu, &m, fault_address);
}
