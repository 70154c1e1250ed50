/* The stub runtime's shared core: what the HSA half and the HIP half both use.
 *
 * One device table, one allocation tracker, one kernel emulation registry, one
 * fault-injection switchboard, and a FIFO worker thread that streams, copy
 * engines and packet processors are built from.  Everything here is internal
 * to the stub (hidden visibility); Python reaches it through stub_control.h.
 */
#ifndef ROCPY_STUB_CORE_H
#define ROCPY_STUB_CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <pthread.h>

#include "stub_control.h"
#include "stub_version.h"

#define STUB_MAX_DEVICES 16
#define STUB_ARCH_LEN 64

/* ---- devices ---------------------------------------------------------- */

typedef struct stub_device {
    int index;                 /* visible ordinal (HIP device id) */
    int physical;              /* index before *_VISIBLE_DEVICES filtering */
    char arch[STUB_ARCH_LEN];  /* target id, e.g. "gfx90a:sramecc+:xnack-" */
    char gfx[16];              /* "gfx90a" */
    char name[64];             /* marketing name */
    uint32_t gfx_version;      /* major*10000 + minor*100 + stepping: gfx90a -> 90010 */
    uint32_t chip_id;
    uint32_t compute_units;
    uint32_t simds_per_cu;
    uint32_t wavefront_size;
    uint32_t max_clock_mhz;
    uint32_t memory_clock_mhz;
    uint32_t memory_bus_width;
    uint64_t global_mem_size;  /* bytes */
    uint64_t lds_size;         /* group segment per workgroup, bytes */
    uint32_t l2_cache_size;
    uint32_t pci_bus_id;
    int xnack;                 /* 1 on, 0 off */
    int sramecc;
    uint64_t mem_in_use;       /* device memory currently allocated */
} stub_device_t;

int stub_device_count(void);
stub_device_t *stub_device(int index);       /* NULL if out of range */

/* ---- time and diagnostics -------------------------------------------- */

uint64_t stub_now_ns(void);                  /* CLOCK_MONOTONIC */
/* Print "rocpy stub: CALL: message" and abort(), as the real runtime would
 * die on this input. */
void stub_abort(const char *call, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* ---- allocations ------------------------------------------------------ */

typedef enum stub_mem_kind {
    STUB_MEM_DEVICE = 1,       /* device-local (hipMalloc, coarse GPU pool) */
    STUB_MEM_HOST = 2,         /* pinned host (hipHostMalloc, system pool) */
    STUB_MEM_MANAGED = 4,      /* managed / fine-grained shared */
    STUB_MEM_REGISTERED = 8,   /* user memory registered or locked */
    STUB_MEM_KERNARG = 16,     /* kernarg pool */
    STUB_MEM_ANY = 31
} stub_mem_kind_t;

typedef struct stub_alloc {
    uintptr_t base;
    size_t size;
    int device;                /* owning device (HIP host memory: the current one
                                  when allocated; HSA system pools: -1) */
    stub_mem_kind_t kind;
    unsigned flags;            /* the API's own flags, kept for queries */
    uint64_t access_mask;      /* bit i: agent/device i may access; bit 63: CPU */
    void *tag;                 /* owner-specific (pool, ipc handle, ...) */
    bool sync_memops;          /* HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS (hipPointerSetAttribute) */
} stub_alloc_t;

#define STUB_ACCESS_CPU (1ull << 63)

/* Allocate `size` bytes (0 is refused with -1) aligned to `align`, tracked.
 * Returns 0 and the pointer, or -1 (fault injected or out of memory:
 * device memory is limited to the device's global_mem_size). */
int stub_mem_alloc(size_t size, size_t align, stub_mem_kind_t kind, int device,
                   unsigned flags, void **out);
/* Guard pages behind every allocation ($ROCPY_STUB_GUARD_PAGES; stub_guard.c):
 * blocks of stub_mem_alloc come from stub_guard_alloc and go back to
 * stub_guard_free.  align must be at most a page. */
bool stub_guard_enabled(void);
void *stub_guard_alloc(size_t size, size_t align);
void stub_guard_free(void *p);
/* Track memory the stub did not allocate (registered/locked user memory). */
int stub_mem_track(void *ptr, size_t size, stub_mem_kind_t kind, int device,
                   unsigned flags);
/* Find the allocation containing ptr; fills *info if non-NULL. */
bool stub_mem_find(const void *ptr, stub_alloc_t *info);
/* Update access mask / tag of the allocation starting exactly at base. */
bool stub_mem_set_access(const void *base, uint64_t access_mask);
bool stub_mem_set_tag(const void *base, void *tag);
/* Set sync_memops of the allocation holding ptr (interior pointers too). */
bool stub_mem_set_sync_memops(const void *ptr, bool on);
/* Free (or untrack) the allocation starting exactly at base whose kind is in
 * kind_mask.  Returns false for an unknown pointer, an interior pointer or a
 * kind not in the mask; nothing is freed then. */
bool stub_mem_release(const void *base, unsigned kind_mask, stub_alloc_t *released);
/* Whether a kernel running on GPU `device` may touch allocation a (whether
 * it is in that GPU's page tables): everything but device memory; device
 * memory of that GPU, of a GPU named in `peers` (bit i: device i, HIP peer
 * access enabled from `device`), or whose access mask names `device`
 * (hsa_amd_agents_allow_access). */
bool stub_mem_gpu_reaches(const stub_alloc_t *a, int device, uint64_t peers);
/* Bytes of device memory in use on a device. */
uint64_t stub_mem_used(int device);
/* Added for the HIP stub (hipDeviceReset): release every allocation for
 * which pred(alloc, ctx) is true, under the table lock (pred must not call
 * back into the allocator).  Returns how many were released. */
size_t stub_mem_release_where(bool (*pred)(const stub_alloc_t *a, void *ctx), void *ctx);

/* ---- FIFO worker thread ---------------------------------------------- */

typedef void (*stub_task_fn)(void *arg);
typedef struct stub_worker stub_worker_t;

stub_worker_t *stub_worker_create(const char *name);
/* Enqueue; tasks run one at a time in submission order.  Returns a ticket
 * (1, 2, ...) that stub_worker_wait_ticket can wait for. */
uint64_t stub_worker_submit(stub_worker_t *w, stub_task_fn fn, void *arg);
/* Block until every task submitted so far has run. */
void stub_worker_drain(stub_worker_t *w);
void stub_worker_wait_ticket(stub_worker_t *w, uint64_t ticket);
bool stub_worker_ticket_done(stub_worker_t *w, uint64_t ticket);
bool stub_worker_idle(stub_worker_t *w);
uint64_t stub_worker_last_ticket(stub_worker_t *w);
/* Drain, stop and free. */
void stub_worker_destroy(stub_worker_t *w);
/* True when called from this worker's own thread. */
bool stub_worker_is_current(stub_worker_t *w);

/* ---- kernel emulation ------------------------------------------------- */

/* rocpy_stub_dispatch_t and rocpy_stub_kernel_fn live in stub_control.h. */
typedef struct stub_cpu_build stub_cpu_build_t;   /* stub_codeobject.h */
/* Look up the emulation of a kernel by its name (without the ".kd" suffix);
 * `cpu` is the CPU build of the code object it is launched from (NULL: none). */
bool stub_kernel_lookup(const char *name, const stub_cpu_build_t *cpu, rocpy_stub_kernel_fn *fn,
                        void **user);
/* Run the emulation of d->name (`cpu` as for stub_kernel_lookup); returns 0,
 * or -1 if none is registered, or
 * the emulation's non-zero status.  For STUB_KERNEL_MEMORY_FAULT,
 * *fault_address is the first address out of reach the emulation met
 * (stub_kernel_reach), 0 if it named none; otherwise 0. */
int stub_kernel_run(const rocpy_stub_dispatch_t *d, const stub_cpu_build_t *cpu,
                    uint64_t *fault_address);
/* stub_kernel_run where, in addition, tracked memory the GPU d->device does
 * not map (stub_mem_gpu_reaches(a, d->device, peers) is false) is out of
 * reach (HIP launches: another GPU's memory without peer access). */
int stub_kernel_run_mapped(const rocpy_stub_dispatch_t *d, const stub_cpu_build_t *cpu,
                           uint64_t peers, uint64_t *fault_address);
/* Register the C emulations built into the stub (called once at start). */
void stub_register_builtin_kernels(void);
/* CPU builds of kernels (stub_cpukern.c): a code object's build (loading:
 * stub_co_internal.h); lookup finds a kernel of build `b` by name. */
bool stub_cpukern_lookup(const stub_cpu_build_t *b, const char *name, rocpy_stub_kernel_fn *fn,
                         void **user);
/* The symbol of build b's kernel `name` as the source names it ("scale<float>"):
 * mangled, or the name itself for extern "C"; NULL if b has no such kernel.
 * Owned by the build (which is never freed). */
const char *stub_cpukern_symbol(const stub_cpu_build_t *b, const char *name);
/* The CPU build beside the running program (a reference), or NULL: the file
 * $ROCPY_CPUKERN_BUILD, else <the executable>.cpukern, a bundle `rocpy
 * cpukern build --cpu-only` writes; read once.  For fat binaries (hipcc
 * programs), whose bundles hipcc writes without one. */
stub_cpu_build_t *stub_cpukern_program_build(void);
/* The CPU build of a bundle (a reference; stub_cpukern_release), or NULL. */
stub_cpu_build_t *stub_cpukern_offer_bundle(const void *data, size_t size);
void stub_cpukern_release(stub_cpu_build_t *b);
/* What an emulation returns when the kernel would touch memory no allocation
 * covers: a GPU memory fault for both runtimes (HSA: the system event
 * handlers, then abort; HIP: abort, as ROCclr does). */
#define STUB_KERNEL_MEMORY_FAULT 0x4d46
/* a trap (s_trap: a device assert): the queue fails with HSA_STATUS_ERROR_EXCEPTION */
#define STUB_KERNEL_TRAP 0x5452
/* For emulations: true when [ptr, ptr + size) lies inside one tracked
 * allocation (size 0: always) that the running GPU maps (under
 * stub_kernel_run_mapped); otherwise remembers the first address out of
 * reach (ptr itself for an allocation not mapped), for the run under way,
 * and returns false. */
bool stub_kernel_reach(const void *ptr, size_t size);

/* ---- fault injection -------------------------------------------------- */

/* True if a fault of `kind` is armed and fires at this call (then consumed). */
bool stub_fault_fire(rocpy_stub_fault_t kind);

#endif
