/* IPC of HSA memory and signals between real processes.
 *
 * ROCr (runtime.cpp IPCCreate/IPCAttach/IPCDetach over the thunk's
 * hsaKmtShareMemory / hsaKmtRegisterSharedHandle) shares the allocation's
 * buffer object; the importer maps it at an address of its own.  The stub
 * moves an exported allocation onto a memfd, at the same address with its
 * contents (stub_ipc_share), and the handle carries what an importer needs
 * to map it: the exporter's pid and fd (opened again through /proc), the
 * memfd's inode and the size.
 *
 * Lifetime (the documented rule, hsa_ext_amd.h at hsa_amd_ipc_memory_create:
 * "a handle is valid while the allocation it references remains accessible
 * in any process"; KFD reference-counts the shared buffer object, kfd_ioctl
 * IPC_EXPORT/IMPORT_HANDLE in the thunk's fmm.c): the exporter's free ends
 * its own mapping only; importers keep the memory until they detach, and the
 * handle attaches while any process still has it attached.  The stub keeps
 * a control page after the data in the memfd (importers count, exporter
 * alive); an exporter that freed keeps its fd open while importers remain
 * (closed at its next IPC call after the last detach), and an attach finding
 * neither exporter nor importer is refused (INVALID_ARGUMENT).
 *
 * IPC signals (ipc_signal.cpp): an IPC signal's ABI block lives in a 4 KiB
 * page exported like memory; attaching maps that page and checks it holds a
 * signal (INVALID_ARGUMENT otherwise).  The attached signal is a
 * BusyWaitSignal: its waits poll the shared value (hsa_signal.c).
 *
 * What the stub does not model: imported memory is tracked as registered
 * host memory (every GPU of the importer reaches it; the mapping agents set
 * its access mask for pointer info and copies only), and fragments of a
 * larger block (ROCr's 2 MiB fragment bit in handle[6]) do not occur. */
#define _GNU_SOURCE
#include "hsa_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define IPC_MAGIC 0x52504349u   /* "ICPR" */
#define SIG_MAGIC 0x47495352u   /* "RSIG": the page holds an IPC signal */
#define KIND_SIGNAL 0xFFu

typedef struct ctl {            /* the page after the data, shared by every process */
    uint32_t magic;
    _Atomic uint32_t importers;
    _Atomic uint32_t exporter_alive;
} ctl_t;

typedef struct export {         /* an exporter's memfd, here */
    int fd;
    size_t bytes;               /* data bytes (page multiple); the control page follows */
    ctl_t *ctl;
    struct export *next;
} export_t;

typedef struct ipc_page {       /* an IPC signal's shared page, here */
    void *map;
    export_t *exp;              /* the exporter's; NULL in an importer */
    ctl_t *ctl;                 /* an importer's view of the control page */
} ipc_page_t;

typedef struct sig_block {
    uint32_t magic, pad;
    _Atomic int64_t value;
} sig_block_t;

typedef struct import {
    void *ptr;
    size_t bytes;
    ctl_t *ctl;
    struct import *next;
} import_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static import_t *imports;
static export_t *exports;       /* live ones and freed ones importers still hold */

static size_t page_round(size_t n) { return (n + STUB_PAGE_SIZE - 1) / STUB_PAGE_SIZE * STUB_PAGE_SIZE; }

static uint64_t inode_of(int fd) {
    struct stat st;
    return fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static ctl_t *map_ctl(int fd, size_t bytes) {
    void *p = mmap(NULL, STUB_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)bytes);
    return p == MAP_FAILED ? NULL : p;
}

static void export_close(export_t *e) {
    munmap(e->ctl, STUB_PAGE_SIZE);
    close(e->fd);
    free(e);
}

/* caller holds lock: close the freed exports no importer holds any more */
static void sweep(void) {
    for (export_t **at = &exports; *at;) {
        export_t *e = *at;
        if (!atomic_load(&e->ctl->exporter_alive) && !atomic_load(&e->ctl->importers)) {
            *at = e->next;
            export_close(e);
        } else {
            at = &e->next;
        }
    }
}

static export_t *export_new(size_t bytes) {
    export_t *e = malloc(sizeof *e);
    int fd = e ? memfd_create("rocpy-hsa-ipc", MFD_CLOEXEC) : -1;
    ctl_t *ctl = fd >= 0 && ftruncate(fd, (off_t)(bytes + STUB_PAGE_SIZE)) == 0 ? map_ctl(fd, bytes) : NULL;
    if (!ctl) {
        if (fd >= 0) close(fd);
        free(e);
        return NULL;
    }
    ctl->magic = IPC_MAGIC;
    atomic_store(&ctl->exporter_alive, 1);
    *e = (export_t){fd, bytes, ctl, NULL};
    pthread_mutex_lock(&lock);
    sweep();
    e->next = exports;
    exports = e;
    pthread_mutex_unlock(&lock);
    return e;
}

/* The exporter lets go: closed now, or once the last importer detached. */
static void export_end(export_t *e) {
    pthread_mutex_lock(&lock);
    atomic_store(&e->ctl->exporter_alive, 0);
    sweep();
    pthread_mutex_unlock(&lock);
}

int stub_ipc_share(void *base, size_t bytes) {
    export_t *e = export_new(bytes);
    if (!e) return -1;
    void *tmp = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
    bool ok = tmp != MAP_FAILED;
    if (ok) {
        memcpy(tmp, base, bytes);
        munmap(tmp, bytes);
        ok = mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, e->fd, 0) != MAP_FAILED;
    }
    int fd = e->fd;
    if (!ok) {
        export_end(e);
        return -1;
    }
    return fd;
}

void stub_ipc_unshare(void *base, size_t bytes, int fd) {
    /* the allocator gets private memory back; importers keep the pages */
    if (mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
        stub_abort("hsa_amd_memory_pool_free", "cannot unmap exported memory at %p: %s", base, strerror(errno));
    pthread_mutex_lock(&lock);
    export_t *e = exports;
    while (e && e->fd != fd) e = e->next;
    pthread_mutex_unlock(&lock);
    if (e) export_end(e);
}

/* ---- handles -------------------------------------------------------------- */

static uint32_t checksum(const uint32_t *h) {
    uint32_t x = 2166136261u;
    for (int i = 0; i < 7; i++) x = (x ^ h[i]) * 16777619u;
    return x;
}

static void make_handle(uint32_t *h, int fd, uint64_t size, unsigned kind, int device) {
    memset(h, 0, 8 * sizeof *h);
    h[0] = IPC_MAGIC;
    h[1] = (uint32_t)getpid();
    h[2] = (uint32_t)fd;
    h[3] = (uint32_t)size;
    h[4] = (uint32_t)(size >> 32);
    h[5] = (kind & 0xFFu) | (uint32_t)(device + 1) << 8;
    h[6] = (uint32_t)inode_of(fd) & 0x7FFFFFFFu;   /* bit 31: ROCr's fragment flag, never set */
    h[7] = checksum(h);
}

/* Open what a handle names and take an importer's reference: -1 unless it
 * is a live export (right magic and checksum, the fd still that memfd, of
 * the size it claims, and some process still has the memory). */
static int open_handle(const uint32_t *h, uint64_t *size, ctl_t **ctl_out) {
    if (h[0] != IPC_MAGIC || h[7] != checksum(h) || (h[6] & 0x80000000u)) return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/fd/%u", h[1], h[2]);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    *size = (uint64_t)h[3] | (uint64_t)h[4] << 32;
    size_t bytes = page_round(*size);
    ctl_t *ctl = NULL;
    if (fstat(fd, &st) != 0 || ((uint32_t)st.st_ino & 0x7FFFFFFFu) != h[6] ||
        (uint64_t)st.st_size != bytes + STUB_PAGE_SIZE || !(ctl = map_ctl(fd, bytes)) || ctl->magic != IPC_MAGIC)
        goto refuse;
    uint32_t n = atomic_load(&ctl->importers);
    do {
        if (n == 0 && !atomic_load(&ctl->exporter_alive)) goto refuse;   /* nobody has it any more */
    } while (!atomic_compare_exchange_weak(&ctl->importers, &n, n + 1));
    *ctl_out = ctl;
    return fd;
refuse:
    if (ctl) munmap(ctl, STUB_PAGE_SIZE);
    close(fd);
    return -1;
}

static void drop_import(ctl_t *ctl) {
    atomic_fetch_sub(&ctl->importers, 1);
    munmap(ctl, STUB_PAGE_SIZE);
}

static void *map_fd(int fd, size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* ---- memory ------------------------------------------------------------- */

hsa_status_t hsa_amd_ipc_memory_create(void *ptr, size_t len, hsa_amd_ipc_memory_t *handle) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(ptr);
    HSA_CHECK_PTR(handle);
    if (len > 0x7FFFFFFF000ull) return HSA_STATUS_ERROR_INVALID_ARGUMENT;   /* the thunk's limit */
    memset(handle->handle, 0, sizeof handle->handle);
    stub_ipc_export_t e;
    hsa_status_t st = stub_hsa_mem_export(ptr, len, &e);
    if (st != HSA_STATUS_SUCCESS) return st;
    make_handle(handle->handle, e.fd, e.size, (unsigned)e.kind, e.device);
    return HSA_STATUS_SUCCESS;
}

static uint64_t all_gpu_bits(void) {
    uint64_t bits = 0;
    for (int i = 0; i < stub_hsa_gpu_count(); i++) bits |= 1ull << i;
    return bits;
}

/* ROCr maps the buffer at a new address in every attach, in the exporting
 * process too; len only matters for fragments (IPCAttach ignores it else). */
hsa_status_t hsa_amd_ipc_memory_attach(const hsa_amd_ipc_memory_t *ipc, size_t len, uint32_t num_agents,
                                       const hsa_agent_t *mapping_agents, void **mapped_ptr) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(mapped_ptr);
    if (num_agents != 0) HSA_CHECK_PTR(mapping_agents);
    uint64_t bits = num_agents == 0 ? all_gpu_bits() : 0;
    for (uint32_t i = 0; i < num_agents; i++) {
        stub_hsa_agent_t *a = stub_hsa_agent(mapping_agents[i]);
        if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
        bits |= stub_hsa_access_bit(a);
    }
    (void)len;
    if (!ipc) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    uint64_t size;
    ctl_t *ctl;
    int fd = open_handle(ipc->handle, &size, &ctl);
    if (fd < 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    size_t bytes = page_round(size);
    import_t *rec = malloc(sizeof *rec);
    void *p = rec ? map_fd(fd, bytes) : NULL;
    if (!rec) close(fd);
    if (!p || stub_mem_track(p, size, STUB_MEM_REGISTERED, -1, 0) != 0) {
        if (p) munmap(p, bytes);
        free(rec);
        drop_import(ctl);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    stub_mem_set_access(p, STUB_ACCESS_CPU | bits);
    *rec = (import_t){p, bytes, ctl, NULL};
    pthread_mutex_lock(&lock);
    sweep();
    rec->next = imports;
    imports = rec;
    pthread_mutex_unlock(&lock);
    *mapped_ptr = p;
    return HSA_STATUS_SUCCESS;
}

/* Anything but an attached base (the exporter's own allocation, a pointer
 * detached already, an interior pointer) fails in the thunk's unmap:
 * INVALID_ARGUMENT. */
hsa_status_t hsa_amd_ipc_memory_detach(void *mapped_ptr) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(mapped_ptr);
    pthread_mutex_lock(&lock);
    import_t **at = &imports;
    while (*at && (*at)->ptr != mapped_ptr) at = &(*at)->next;
    import_t *rec = *at;
    if (rec) *at = rec->next;
    pthread_mutex_unlock(&lock);
    if (!rec) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    stub_mem_release(rec->ptr, STUB_MEM_REGISTERED, NULL);
    munmap(rec->ptr, rec->bytes);
    drop_import(rec->ctl);
    free(rec);
    pthread_mutex_lock(&lock);
    sweep();
    pthread_mutex_unlock(&lock);
    return HSA_STATUS_SUCCESS;
}

/* ---- signals -------------------------------------------------------------- */

void *stub_ipc_signal_page_new(int64_t initial, _Atomic int64_t **value) {
    ipc_page_t *pg = malloc(sizeof *pg);
    export_t *e = pg ? export_new(STUB_PAGE_SIZE) : NULL;
    void *map = e ? mmap(NULL, STUB_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED) {
        if (e) export_end(e);
        free(pg);
        return NULL;
    }
    sig_block_t *b = map;
    b->magic = SIG_MAGIC;
    atomic_init(&b->value, initial);
    *pg = (ipc_page_t){map, e, NULL};
    *value = &b->value;
    return pg;
}

void stub_ipc_signal_page_release(void *page) {
    ipc_page_t *pg = page;
    munmap(pg->map, STUB_PAGE_SIZE);
    if (pg->exp) export_end(pg->exp);
    if (pg->ctl) drop_import(pg->ctl);
    free(pg);
}

hsa_status_t hsa_amd_ipc_signal_create(hsa_signal_t signal, hsa_amd_ipc_signal_t *handle) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(handle);
    hsa_status_t st = stub_sig_check(signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    stub_signal_t *s = stub_sig_retain(signal);
    if (!s) return HSA_STATUS_ERROR_INVALID_SIGNAL;
    /* IPCSignal::CreateHandle: "Signal must be IPC enabled."; a signal
     * attached from another process is one too (its page is re-exported
     * only by its owner here: the stub refuses, as it has no fd for it) */
    const ipc_page_t *pg = s->kind == STUB_SIG_IPC ? s->shared : NULL;
    if (!pg || !pg->exp) {
        stub_sig_release(s);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    make_handle(handle->handle, pg->exp->fd, STUB_PAGE_SIZE, KIND_SIGNAL, -1);
    stub_sig_release(s);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_ipc_signal_attach(const hsa_amd_ipc_signal_t *handle, hsa_signal_t *signal) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(handle);
    HSA_CHECK_PTR(signal);
    uint64_t size;
    ctl_t *ctl;
    int fd = open_handle(handle->handle, &size, &ctl);
    if (fd < 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (size < sizeof(sig_block_t)) {
        close(fd);
        drop_import(ctl);
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    void *map = map_fd(fd, STUB_PAGE_SIZE);
    if (!map) {
        drop_import(ctl);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    sig_block_t *b = map;
    bool is_signal = b->magic == SIG_MAGIC;
    ipc_page_t *pg = is_signal ? malloc(sizeof *pg) : NULL;
    if (!pg) {   /* "IPC memory does not contain an IPC signal abi block." */
        munmap(map, STUB_PAGE_SIZE);
        drop_import(ctl);
        return is_signal ? HSA_STATUS_ERROR_OUT_OF_RESOURCES : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    *pg = (ipc_page_t){map, NULL, ctl};
    stub_signal_t *s = stub_sig_create_shared(pg, &b->value, STUB_SIG_IPC);
    if (!s) {
        stub_ipc_signal_page_release(pg);
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    }
    *signal = stub_sig_handle(s);
    return HSA_STATUS_SUCCESS;
}
