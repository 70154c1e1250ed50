/* CPU builds of HIP kernels (rocpy.cpukern): the stub's second way to run a
 * kernel, after a user's emulation and before the built-in ones
 * (stub_kernel_lookup).  A CPU build is a shared object carried in a code
 * object bundle as the entry ROCPY_CPUKERN_BUNDLE_ID.  A CPU build belongs to
 * the code objects it was bundled with: every bundle the stub parses (HIP
 * modules, registered fat binaries, HSA code objects: stub_codeobject_parse)
 * hands its code object a reference to its build (stub_codeobject_t.cpu),
 * and a dispatch looks its kernel up in the build of the code object it was
 * launched from, so two modules with kernels of the same name each run
 * their own.  A bare ELF (ROCr-style loaders get only the chosen ELF) finds
 * the build of a bundle that held the same ELF only while that bundle is
 * offered (rocpy_stub_offer_cpu_build, until released).
 *
 * A build is loaded once per content (dlopen of a memfd, kept open) and its
 * library stays mapped for the life of the process: its SIGSEGV handler may
 * sit under a later build's in the chain (hip_cpu.h install_fault_handler),
 * and a launch queued before its module was unloaded still runs it (hipamd's
 * queued commands retain their kernel's program).  References count the
 * code objects (and offers) that hold it; with none it is dead (no lookup of
 * a bare ELF finds it) until content equal to it is loaded again. */
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

typedef struct cpu_name {
    const char *name;                 /* identifier, or an owned copy of the symbol */
    bool owned;
    const rocpy_cpukern_kernel_t *kernel;
} cpu_name_t;

#define MAX_ELVES 64

struct stub_cpu_build {
    uint64_t hash, size;
    void *handle;
    long refs;                        /* code objects and offers holding it */
    long offers;                      /* rocpy_stub_offer_cpu_build's not yet released */
    size_t num_names;
    cpu_name_t *names;
    size_t num_elves;                 /* the amdgcn ELFs bundled with it (hash, size) */
    uint64_t elves[MAX_ELVES][2];
    struct stub_cpu_build *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static stub_cpu_build_t *builds;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static bool add_name(stub_cpu_build_t *b, const char *name, bool copy,
                     const rocpy_cpukern_kernel_t *k) {
    const char *n = copy ? strdup(name) : name;
    if (!n) return false;
    b->names[b->num_names++] = (cpu_name_t){n, copy, k};
    return true;
}

/* lock held: the library of `so`, loaded now or earlier; NULL if it cannot be */
static stub_cpu_build_t *load_build(const uint8_t *so, size_t size) {
    uint64_t h = fnv1a(so, size);
    for (stub_cpu_build_t *b = builds; b; b = b->next)
        if (b->hash == h && b->size == size) return b;
    int fd = memfd_create("rocpy-cpukern", MFD_CLOEXEC);
    if (fd < 0) return NULL;
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
        return NULL;
    }
    int (*abi)(void) = (int (*)(void))dlsym(handle, ROCPY_CPUKERN_ABI_SYMBOL);
    rocpy_cpukern_kernels_fn list =
        (rocpy_cpukern_kernels_fn)dlsym(handle, ROCPY_CPUKERN_KERNELS_SYMBOL);
    if (!abi || !list || abi() != ROCPY_CPUKERN_ABI) {
        fprintf(stderr, "rocpy stub: a CPU build of another rocpy version (ABI %d, this is %d) "
                        "is ignored: rebuild it\n", abi ? abi() : -1, ROCPY_CPUKERN_ABI);
        dlclose(handle);
        close(fd);
        return NULL;
    }
    size_t n = 0;
    const rocpy_cpukern_kernel_t *k = list(&n);
    stub_cpu_build_t *b = calloc(1, sizeof *b);
    if (b) b->names = calloc(2 * n + 1, sizeof *b->names);
    if (!b || !b->names) {
        free(b);
        dlclose(handle);
        close(fd);
        return NULL;
    }
    b->hash = h;
    b->size = size;
    b->handle = handle;
    for (size_t i = 0; i < n; i++) {
        add_name(b, k[i].name, false, &k[i]);
        Dl_info info;
        if (dladdr(k[i].address, &info) && info.dli_sname && strcmp(info.dli_sname, k[i].name))
            add_name(b, info.dli_sname, true, &k[i]);
    }
    b->next = builds;
    builds = b;
    return b;
}

/* lock held */
static void add_elf(stub_cpu_build_t *b, const uint8_t *elf, size_t size) {
    uint64_t h = fnv1a(elf, size);
    for (size_t i = 0; i < b->num_elves; i++)
        if (b->elves[i][0] == h && b->elves[i][1] == size) return;
    if (b->num_elves < MAX_ELVES) {
        b->elves[b->num_elves][0] = h;
        b->elves[b->num_elves++][1] = size;
    }
}

stub_cpu_build_t *stub_cpukern_offer_bundle(const void *data, size_t size) {
    const uint8_t *p = data;
    if (!stub_co_is_bundle(data, size) || size < 32) return NULL;
    uint64_t count = stub_co_le64(p + 24), pos = 32;
    size_t id_len = strlen(ROCPY_CPUKERN_BUNDLE_ID);
    const uint8_t *so = NULL;
    uint64_t so_len = 0;
    /* the amdgcn entries, remembered once the build is known */
    uint64_t elf_off[MAX_ELVES], elf_len[MAX_ELVES];
    size_t num_elves = 0;
    for (uint64_t i = 0; i < count; i++) {
        if (!stub_co_in_range(pos, 24, size)) return NULL;
        uint64_t off = stub_co_le64(p + pos), len = stub_co_le64(p + pos + 8);
        uint64_t n = stub_co_le64(p + pos + 16);
        pos += 24;
        if (!stub_co_in_range(pos, n, size) || !stub_co_in_range(off, len, size)) return NULL;
        char target[STUB_CO_TARGET_LEN];
        if (n == id_len && memcmp(p + pos, ROCPY_CPUKERN_BUNDLE_ID, n) == 0 && len) {
            so = p + off;
            so_len = len;
        } else if (len && num_elves < MAX_ELVES &&
                   stub_co_target_from_bundle_id((const char *)p + pos, (size_t)n, target)) {
            elf_off[num_elves] = off;
            elf_len[num_elves++] = len;
        }
        pos += n;
    }
    if (!so) return NULL;
    pthread_mutex_lock(&lock);
    stub_cpu_build_t *b = load_build(so, (size_t)so_len);
    if (b) {
        b->refs++;
        for (size_t i = 0; i < num_elves; i++) add_elf(b, p + elf_off[i], (size_t)elf_len[i]);
    }
    pthread_mutex_unlock(&lock);
    return b;
}

stub_cpu_build_t *stub_cpukern_for_elf(const void *elf, size_t size) {
    uint64_t h = fnv1a(elf, size);
    pthread_mutex_lock(&lock);
    stub_cpu_build_t *found = NULL;
    for (stub_cpu_build_t *b = builds; b && !found; b = b->next)
        for (size_t i = 0; b->offers > 0 && i < b->num_elves && !found; i++)
            if (b->elves[i][0] == h && b->elves[i][1] == size) found = b;
    if (found) found->refs++;
    pthread_mutex_unlock(&lock);
    return found;
}

void stub_cpukern_release(stub_cpu_build_t *b) {
    if (!b) return;
    pthread_mutex_lock(&lock);
    if (b->refs > 0) b->refs--;
    pthread_mutex_unlock(&lock);
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

/* A build's names never change once loaded: no lock. */
bool stub_cpukern_lookup(const stub_cpu_build_t *b, const char *name, rocpy_stub_kernel_fn *fn,
                         void **user) {
    if (!b) return false;
    for (size_t i = 0; i < b->num_names; i++)
        if (strcmp(b->names[i].name, name) == 0) {
            *fn = run_cpu;
            *user = (void *)b->names[i].kernel;
            return true;
        }
    return false;
}

const char *stub_cpukern_symbol(const stub_cpu_build_t *b, const char *name) {
    if (!b || !name) return NULL;
    for (size_t i = 0; i < b->num_names; i++) {
        if (b->names[i].owned || strcmp(b->names[i].name, name) != 0) continue;
        for (size_t j = 0; j < b->num_names; j++)   /* dladdr's, if it differs */
            if (b->names[j].owned && b->names[j].kernel == b->names[i].kernel) return b->names[j].name;
        return b->names[i].name;
    }
    return NULL;
}

static stub_cpu_build_t *program_build;
static pthread_once_t program_once = PTHREAD_ONCE_INIT;

static void find_program_build(void) {
    char path[4096];
    const char *env = getenv("ROCPY_CPUKERN_BUILD");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
        if (n <= 0) return;
        memcpy(path + n, ".cpukern", sizeof ".cpukern");
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (env && *env) fprintf(stderr, "rocpy stub: cannot read $ROCPY_CPUKERN_BUILD %s\n", path);
        return;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0, got;
    do {
        if (size == cap) {
            uint8_t *more = realloc(data, cap = cap ? 2 * cap : 1 << 20);
            if (!more) break;
            data = more;
        }
        got = fread(data + size, 1, cap - size, f);
        size += got;
    } while (got);
    fclose(f);
    /* its reference is the program's, for the life of the process */
    program_build = data ? stub_cpukern_offer_bundle(data, size) : NULL;
    if (!program_build) fprintf(stderr, "rocpy stub: %s holds no CPU build (write it with "
                                        "'rocpy cpukern build --cpu-only')\n", path);
    free(data);
}

stub_cpu_build_t *stub_cpukern_program_build(void) {
    pthread_once(&program_once, find_program_build);
    if (!program_build) return NULL;
    pthread_mutex_lock(&lock);
    program_build->refs++;
    pthread_mutex_unlock(&lock);
    return program_build;
}

/* rocpy.cpukern.offer_to_stub: a loader that passes the stub only the chosen
 * ELF (rocpy.hsa.Executable.load) offers the whole file first and releases
 * the offer once the ELF is loaded (its code object holds its own reference). */
void *rocpy_stub_offer_cpu_build(const void *data, size_t size) {
    stub_cpu_build_t *b = data ? stub_cpukern_offer_bundle(data, size) : NULL;
    if (b) {
        pthread_mutex_lock(&lock);
        b->offers++;
        pthread_mutex_unlock(&lock);
    }
    return b;
}

void rocpy_stub_release_cpu_build(void *offer) {
    stub_cpu_build_t *b = offer;
    if (!b) return;
    pthread_mutex_lock(&lock);
    if (b->offers > 0) b->offers--;
    pthread_mutex_unlock(&lock);
    stub_cpukern_release(b);
}

size_t rocpy_stub_cpu_builds(void) {
    size_t n = 0;
    pthread_mutex_lock(&lock);
    for (stub_cpu_build_t *b = builds; b; b = b->next) n += b->refs > 0;
    pthread_mutex_unlock(&lock);
    return n;
}
