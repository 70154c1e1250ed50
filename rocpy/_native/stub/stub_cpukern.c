/* CPU builds of HIP kernels (rocpy.cpukern): the stub's second way to run a
 * kernel, after a user's emulation and before the built-in ones
 * (stub_kernel_lookup).  A CPU build is a shared object carried in a code
 * object bundle as the entry ROCPY_CPUKERN_BUNDLE_ID; every bundle the stub
 * parses (HIP modules, HSA code object readers, registered fat binaries all
 * go through stub_codeobject_parse) offers its CPU build here.  It is loaded
 * once per content (dlopen of a memfd, kept open), stays loaded for the life of the
 * process, and its kernels are found by name (the source's identifier and
 * the symbol dladdr gives, mangled for kernels without extern "C"); a later
 * build's kernel of the same name replaces an earlier one. */
#define _GNU_SOURCE  /* memfd_create, dladdr */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stub_co_internal.h"
#include "stub_core.h"
#include "stub_cpukern.h"
#include "../cpukern/rocpy_cpukern.h"

typedef struct cpu_kernel {
    char *name;
    const rocpy_cpukern_kernel_t *kernel;
    struct cpu_kernel *next;
} cpu_kernel_t;

typedef struct cpu_build {
    uint64_t hash, size;
    void *handle;
    struct cpu_build *next;
} cpu_build_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cpu_kernel_t *kernels;
static cpu_build_t *builds;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static void add_name(const char *name, const rocpy_cpukern_kernel_t *k) {
    for (cpu_kernel_t *e = kernels; e; e = e->next)
        if (strcmp(e->name, name) == 0) {
            e->kernel = k;
            return;
        }
    cpu_kernel_t *e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(name))) {
        free(e);
        return;
    }
    e->kernel = k;
    e->next = kernels;
    kernels = e;
}

/* lock held */
static void load_build(const uint8_t *so, size_t size) {
    uint64_t h = fnv1a(so, size);
    for (cpu_build_t *b = builds; b; b = b->next)
        if (b->hash == h && b->size == size) return;
    int fd = memfd_create("rocpy-cpukern", MFD_CLOEXEC);
    if (fd < 0) return;
    void *handle = NULL;
    if (write(fd, so, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) fprintf(stderr, "rocpy stub: cannot load a CPU build: %s\n", dlerror());
    }
    /* the memfd stays open as long as the library is loaded: dlopen knows
     * objects by name, and a closed fd's number (so its /proc path) is reused */
    if (!handle) {
        close(fd);
        return;
    }
    int (*abi)(void) = (int (*)(void))dlsym(handle, ROCPY_CPUKERN_ABI_SYMBOL);
    rocpy_cpukern_kernels_fn list =
        (rocpy_cpukern_kernels_fn)dlsym(handle, ROCPY_CPUKERN_KERNELS_SYMBOL);
    if (!abi || !list || abi() != ROCPY_CPUKERN_ABI) {
        fprintf(stderr, "rocpy stub: a CPU build of another rocpy version (ABI %d, this is %d) "
                        "is ignored: rebuild it\n", abi ? abi() : -1, ROCPY_CPUKERN_ABI);
        dlclose(handle);
        return;
    }
    cpu_build_t *b = calloc(1, sizeof *b);
    if (!b) {
        dlclose(handle);
        return;
    }
    *b = (cpu_build_t){h, size, handle, builds};
    builds = b;
    size_t n = 0;
    const rocpy_cpukern_kernel_t *k = list(&n);
    for (size_t i = 0; i < n; i++) {
        add_name(k[i].name, &k[i]);
        Dl_info info;
        if (dladdr(k[i].address, &info) && info.dli_sname && strcmp(info.dli_sname, k[i].name))
            add_name(info.dli_sname, &k[i]);
    }
}

void stub_cpukern_offer_bundle(const void *data, size_t size) {
    const uint8_t *p = data;
    if (!stub_co_is_bundle(data, size) || size < 32) return;
    uint64_t count = stub_co_le64(p + 24), pos = 32;
    size_t id_len = strlen(ROCPY_CPUKERN_BUNDLE_ID);
    for (uint64_t i = 0; i < count; i++) {
        if (!stub_co_in_range(pos, 24, size)) return;
        uint64_t off = stub_co_le64(p + pos), len = stub_co_le64(p + pos + 8);
        uint64_t n = stub_co_le64(p + pos + 16);
        pos += 24;
        if (!stub_co_in_range(pos, n, size) || !stub_co_in_range(off, len, size)) return;
        if (n == id_len && memcmp(p + pos, ROCPY_CPUKERN_BUNDLE_ID, n) == 0 && len) {
            pthread_mutex_lock(&lock);
            load_build(p + off, (size_t)len);
            pthread_mutex_unlock(&lock);
        }
        pos += n;
    }
}

static unsigned workers(void) {
    const char *env = getenv("ROCPY_CPUKERN_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (unsigned)n;
}

static int run_cpu(const rocpy_stub_dispatch_t *d, void *user) {
    const rocpy_cpukern_kernel_t *k = user;
    rocpy_cpukern_launch_t L;
    memset(&L, 0, sizeof L);
    L.kernarg = d->kernarg;
    L.kernarg_size = d->kernarg_size;
    memcpy(L.grid, d->grid, sizeof L.grid);
    memcpy(L.block, d->block, sizeof L.block);
    for (int i = 0; i < 3; i++)
        if (!L.block[i]) return 1;
    L.shared_bytes = d->group_segment_size;
    stub_device_t *dev = stub_device(d->device);
    L.warp_size = dev && dev->wavefront_size ? dev->wavefront_size : 64;
    L.workers = workers();
    int rc = k->run(&L);
    if (rc == ROCPY_CPUKERN_OK) return 0;
    if (rc == ROCPY_CPUKERN_MEMORY_FAULT) {
        /* records the address as the dispatch's first fault (it is in no allocation) */
        stub_kernel_reach((const void *)(uintptr_t)L.fault_address, 1);
        return STUB_KERNEL_MEMORY_FAULT;
    }
    fprintf(stderr, "rocpy stub: kernel %s (CPU build) failed: %s\n", k->name, L.message);
    return rc == ROCPY_CPUKERN_TRAP ? STUB_KERNEL_TRAP : 1;
}

bool stub_cpukern_lookup(const char *name, rocpy_stub_kernel_fn *fn, void **user) {
    pthread_mutex_lock(&lock);
    cpu_kernel_t *e = kernels;
    while (e && strcmp(e->name, name) != 0) e = e->next;
    if (e) {
        *fn = run_cpu;
        *user = (void *)e->kernel;
    }
    pthread_mutex_unlock(&lock);
    return e != NULL;
}

/* rocpy.cpukern.offer_to_stub: a loader that passes the stub only the chosen
 * ELF (rocpy.hsa.Executable.load) offers the whole file's CPU build first. */
void rocpy_stub_offer_cpu_build(const void *data, size_t size) {
    if (data) stub_cpukern_offer_bundle(data, size);
}

void rocpy_stub_forget_cpu_builds(void) {
    pthread_mutex_lock(&lock);
    while (kernels) {
        cpu_kernel_t *e = kernels;
        kernels = e->next;
        free(e->name);
        free(e);
    }
    /* no dlclose: a kernel of a build may still be referenced by queued work */
    while (builds) {
        cpu_build_t *b = builds;
        builds = b->next;
        free(b);
    }
    pthread_mutex_unlock(&lock);
}
