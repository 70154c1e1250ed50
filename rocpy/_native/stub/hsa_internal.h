/* The HSA half of the stub runtime: what its files share.
 *
 * Handles are checked the way ROCr checks them (IS_OPEN, IS_BAD_PTR,
 * IS_VALID in ROCR-Runtime core/runtime/hsa.cpp and hsa_ext_amd.cpp), with the
 * same statuses, but every stub handle can be validated without touching
 * freed memory: agents and pools live in static tables, signals in slabs that
 * are never freed, everything else in registries.
 */
#ifndef ROCPY_STUB_HSA_INTERNAL_H
#define ROCPY_STUB_HSA_INTERNAL_H

/* POSIX and GNU interfaces (pthread rwlocks, pread, sysconf cache sizes):
 * every hsa_*.c includes its local header first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "rocpy_features.h"   /* generated: what these headers declare */
#include "stub_core.h"

/* Attributes and event kinds newer than the oldest headers we build with
 * (ROCm 5.2): matched by value so every header version compiles. */
#define STUB_AMD_AGENT_INFO_MEMORY_AVAIL 0xA015
#define STUB_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY 0xA016
#define STUB_AMD_AGENT_INFO_ASIC_FAMILY_ID 0xA107
#define STUB_AMD_AGENT_INFO_UCODE_VERSION 0xA108
#define STUB_AMD_AGENT_INFO_SDMA_UCODE_VERSION 0xA109
#define STUB_AMD_AGENT_INFO_NUM_SDMA_ENG 0xA10A
#define STUB_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG 0xA10B
#define STUB_AMD_AGENT_INFO_IOMMU_SUPPORT 0xA110
#define STUB_AMD_AGENT_INFO_NUM_XCC 0xA111
#define STUB_AMD_AGENT_INFO_DRIVER_UID 0xA112
#define STUB_AMD_AGENT_INFO_NEAREST_CPU 0xA113
#define STUB_AMD_AGENT_INFO_MEMORY_PROPERTIES 0xA114
#define STUB_AMD_MEMORY_POOL_INFO_LOCATION 17
#define STUB_AMD_MEMORY_POOL_INFO_ALLOC_REC_GRANULE 18
#define STUB_AMD_SYSTEM_INFO_MWAITX_ENABLED 0x203
#define STUB_AMD_SYSTEM_INFO_DMABUF_SUPPORTED 0x204
#define STUB_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED 0x205
#define STUB_AMD_SYSTEM_INFO_XNACK_ENABLED 0x206
#define STUB_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR 0x207
#define STUB_AMD_SYSTEM_INFO_EXT_VERSION_MINOR 0x208

#define STUB_PAGE_SIZE 4096u
#define STUB_QUEUE_MIN_PACKETS 0x40u      /* ROCr GpuAgent minAqlSize_ */
#define STUB_QUEUE_MAX_PACKETS 0x20000u   /* ROCr GpuAgent maxAqlSize_ */
#define STUB_QUEUES_MAX 128u

/* ---- runtime state (hsa_init.c) --------------------------------------- */

bool stub_hsa_is_open(void);

#define HSA_CHECK_OPEN()                                                     \
    do {                                                                     \
        if (!stub_hsa_is_open()) return HSA_STATUS_ERROR_NOT_INITIALIZED;    \
    } while (0)
#define HSA_CHECK_PTR(p)                                                     \
    do {                                                                     \
        if ((p) == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;           \
    } while (0)

/* ---- memory orders (hsa_signal_ops.c, hsa_queue.c) -------------------- */

/* The memory-order suffixes hsa.h declares for signal values and queue
 * indices (acquire, release and acq_rel are the deprecated spellings of
 * scacquire, screlease and scacq_screl), as X-macros: X(args..., suffix,
 * order) for loads and stores, X(args..., suffix, order, failure order) for
 * read-modify-writes, where a failed compare-and-swap is a load and drops
 * the release half. */
#define HSA_LOAD_ORDERS(X, ...)                                              \
    X(__VA_ARGS__, relaxed, memory_order_relaxed)                            \
    X(__VA_ARGS__, scacquire, memory_order_acquire)                          \
    X(__VA_ARGS__, acquire, memory_order_acquire)
#define HSA_STORE_ORDERS(X, ...)                                             \
    X(__VA_ARGS__, relaxed, memory_order_relaxed)                            \
    X(__VA_ARGS__, screlease, memory_order_release)                          \
    X(__VA_ARGS__, release, memory_order_release)
#define HSA_RMW_ORDERS(X, ...)                                               \
    X(__VA_ARGS__, relaxed, memory_order_relaxed, memory_order_relaxed)      \
    X(__VA_ARGS__, scacquire, memory_order_acquire, memory_order_acquire)    \
    X(__VA_ARGS__, screlease, memory_order_release, memory_order_relaxed)    \
    X(__VA_ARGS__, scacq_screl, memory_order_acq_rel, memory_order_acquire)  \
    X(__VA_ARGS__, acquire, memory_order_acquire, memory_order_acquire)      \
    X(__VA_ARGS__, release, memory_order_release, memory_order_relaxed)      \
    X(__VA_ARGS__, acq_rel, memory_order_acq_rel, memory_order_acquire)

/* ---- agents (hsa_agent.c) --------------------------------------------- */

typedef struct stub_hsa_agent {
    bool is_gpu;
    int device;              /* stub device index, -1 for the CPU */
    uint32_t node;           /* KFD node id: CPU 0, GPU i -> i + 1 */
    stub_device_t *dev;      /* NULL for the CPU */
} stub_hsa_agent_t;

/* NULL for a handle that is not an agent of this runtime. */
stub_hsa_agent_t *stub_hsa_agent(hsa_agent_t handle);
hsa_agent_t stub_hsa_agent_handle(const stub_hsa_agent_t *agent);
stub_hsa_agent_t *stub_hsa_cpu_agent(void);
stub_hsa_agent_t *stub_hsa_gpu_agent(int device);   /* NULL if out of range */
int stub_hsa_gpu_count(void);
/* The access_mask bit of the core allocation tracker for this agent. */
uint64_t stub_hsa_access_bit(const stub_hsa_agent_t *agent);
void stub_hsa_agents_init(void);

/* ---- ISAs (hsa_isa.c) ------------------------------------------------- */

hsa_isa_t stub_hsa_agent_isa(const stub_hsa_agent_t *agent);

/* ---- memory pools and regions (hsa_pool.c) ---------------------------- */

typedef enum stub_pool_kind {
    STUB_POOL_SYS_FINE,
    STUB_POOL_SYS_KERNARG,
    STUB_POOL_SYS_COARSE,
    STUB_POOL_GPU_COARSE,
    STUB_POOL_GPU_FINE,
    STUB_POOL_GPU_LDS
} stub_pool_kind_t;

typedef struct stub_hsa_pool {
    stub_pool_kind_t kind;
    stub_hsa_agent_t *owner;
} stub_hsa_pool_t;

stub_hsa_pool_t *stub_hsa_pool(uint64_t handle);      /* NULL if invalid */
uint64_t stub_hsa_pool_handle(const stub_hsa_pool_t *pool);
bool stub_pool_is_system(const stub_hsa_pool_t *pool);
bool stub_pool_fine_grained(const stub_hsa_pool_t *pool);
size_t stub_pool_size(const stub_hsa_pool_t *pool);
/* hsa_region_get_info and hsa_amd_memory_pool_get_info share these. */
hsa_status_t stub_pool_region_info(const stub_hsa_pool_t *pool, int attribute, void *value);

/* ---- allocations (hsa_memory.c) --------------------------------------- */

/* Allocate from a pool as hsa_amd_memory_pool_allocate (restricted = true:
 * only the owner may access) or hsa_memory_allocate (system memory mapped to
 * every GPU) do. */
hsa_status_t stub_hsa_allocate(const stub_hsa_pool_t *pool, size_t size, bool restricted,
                               void **ptr);
/* True if [ptr, ptr+size) lies in one tracked allocation that `agent` may
 * access; for the CPU, untracked (plain host) memory counts too. */
bool stub_hsa_accessible(const stub_hsa_agent_t *agent, const void *ptr, size_t size);
/* Fills *info for ptr; false if no tracked allocation contains it. */
bool stub_hsa_find(const void *ptr, stub_alloc_t *info);

/* ---- IPC (hsa_ipc.c; the export check in hsa_memory.c) ----------------- */

typedef struct stub_ipc_export {
    int fd;                 /* the memory it is mapped from */
    size_t size;            /* as allocated */
    stub_mem_kind_t kind;
    int device;
} stub_ipc_export_t;
/* Validate an IPC export of the allocation at ptr (ROCr IPCCreate) and make
 * it shareable once; INVALID_ARGUMENT for anything but a pool allocation's
 * base and size. */
hsa_status_t stub_hsa_mem_export(void *ptr, size_t len, stub_ipc_export_t *out);
/* Move [base, base+bytes) onto memory other processes can map, contents kept,
 * at the same address; the fd, or -1. */
int stub_ipc_share(void *base, size_t bytes);
/* Before the allocation is freed: back to private memory, no new attaches. */
void stub_ipc_unshare(void *base, size_t bytes, int fd);

/* ---- signals (hsa_signal.c) ------------------------------------------- */

typedef struct stub_signal stub_signal_t;

/* The status ROCr's Signal::Convert gives a handle: SUCCESS, or
 * INVALID_ARGUMENT for the null handle, INVALID_SIGNAL for any other. */
hsa_status_t stub_sig_check(hsa_signal_t handle);
/* Take a reference on a live signal (NULL if the handle is not live); the
 * object outlives hsa_signal_destroy until released. */
stub_signal_t *stub_sig_retain(hsa_signal_t handle);
void stub_sig_release(stub_signal_t *s);
bool stub_sig_alive(const stub_signal_t *s);
hsa_signal_t stub_sig_handle(const stub_signal_t *s);
int64_t stub_sig_load(stub_signal_t *s);
void stub_sig_store(stub_signal_t *s, int64_t value);
void stub_sig_add(stub_signal_t *s, int64_t value);
/* A signal for the runtime's own use (doorbells, control), retained once. */
stub_signal_t *stub_sig_create_internal(int64_t initial);
void stub_sig_destroy_internal(stub_signal_t *s);
/* Called (from the modifying thread) after every change of the value. */
void stub_sig_set_hook(stub_signal_t *s, void (*hook)(void *), void *arg);

#define STUB_WAIT_TIMEOUT (-1)
#define STUB_WAIT_DEAD (-2)
/* Block (no spinning) until signal i meets conds[i]/values[i]; returns i, or
 * STUB_WAIT_TIMEOUT, or STUB_WAIT_DEAD if a signal was destroyed meanwhile.
 * timeout_ns UINT64_MAX waits forever. */
int stub_sig_wait_any(uint32_t n, stub_signal_t *const *sigs, const hsa_signal_condition_t *conds,
                      const hsa_signal_value_t *values, uint64_t timeout_ns,
                      hsa_signal_value_t *value);

/* Count what a waiter of ROCr's interrupt signals would spend spinning in a
 * public wait of `timeout_ns` that took `elapsed_ns` (hsa_signal_ops.c). */
void stub_sig_account_wait(uint64_t timeout_ns, hsa_wait_state_t hint, uint64_t elapsed_ns);

/* Profiling timestamps kept with the signal, as the agent recorded them
 * (GPU ticks for dispatches and GPU copies, system ns for CPU copies). */
void stub_sig_set_dispatch_time(stub_signal_t *s, uint64_t start, uint64_t end);
void stub_sig_set_copy_time(stub_signal_t *s, const stub_hsa_agent_t *agent, uint64_t start,
                            uint64_t end);
void stub_sig_get_times(stub_signal_t *s, uint64_t *start, uint64_t *end,
                        const stub_hsa_agent_t **copy_agent);

/* ---- the async handler thread (hsa_async.c) --------------------------- */

/* Run fn(arg) on the runtime's one async-handler thread. */
hsa_status_t stub_hsa_async_post(void (*fn)(void *), void *arg);
/* A GPU memory fault: system event handlers, then abort unless one of them
 * returned HSA_STATUS_SUCCESS (ROCr Runtime::VMFaultHandler). */
void stub_hsa_memory_fault(const stub_hsa_agent_t *agent, uint64_t address, uint32_t reason);
bool stub_hsa_async_is_current(void);
void stub_hsa_async_shutdown(void);

/* ---- copies (hsa_copy.c) ---------------------------------------------- */

void stub_hsa_copy_shutdown(void);
/* Run fn(arg, stop) on `agent`'s first copy engine (in its FIFO order);
 * `stop` becomes non-zero at shutdown, when fn must give up waiting. */
hsa_status_t stub_hsa_engine_post(const stub_hsa_agent_t *agent, void (*fn)(void *arg, stub_signal_t *stop),
                                  void *arg);
/* Whether GPU `agent` may reach [ptr, ptr+size) of memory the runtime did not
 * allocate, through SVM attributes (hsa_svm.c). */
bool stub_hsa_svm_gpu_access(const stub_hsa_agent_t *agent, const void *ptr, size_t size);
/* Likewise through hsa_amd_vmem_set_access (hsa_vmem.c; false where the headers have no vmem). */
bool stub_hsa_vmem_gpu_access(const stub_hsa_agent_t *agent, const void *ptr, size_t size);
bool stub_hsa_vmem_supported(void);

/* ---- queues (hsa_queue.c) --------------------------------------------- */

hsa_status_t stub_hsa_queue_set_profiling(hsa_queue_t *queue, int enable);
void stub_hsa_queues_shutdown(void);

/* ---- executables (hsa_executable.c) ----------------------------------- */

#define STUB_KERNEL_MAX_BUFFERS 64
/* Hidden arguments a GPU dereferences or relies on (code object v5), and
 * what ROCclr fills them with (VirtualGPU::submitKernelInternal). */
typedef enum stub_hidden_kind {
    STUB_HIDDEN_POINTER,     /* printf, hostcall, heap, default queue, completion action: a buffer */
    STUB_HIDDEN_QUEUE_PTR,   /* the dispatching queue's amd_queue_t */
    STUB_HIDDEN_APERTURE     /* private/shared aperture base (high half), from the queue */
} stub_hidden_kind_t;
/* What a dispatch needs to know about the kernel a kernel_object names. */
typedef struct stub_kernel_info {
    char name[256];                  /* without ".kd" */
    const stub_hsa_agent_t *agent;   /* the agent it was loaded for */
    uint32_t kernarg_size, group_size, private_size;
    bool dynamic_stack;              /* the descriptor's uses-dynamic-stack bit */
    uint32_t max_flat_workgroup_size;   /* metadata; 0 if absent */
    uint32_t reqd_workgroup_size[3];    /* metadata; zeros if absent */
    bool uniform_work_group_size;       /* metadata */
    uint32_t num_hidden;             /* hidden arguments whose value matters on hardware */
    struct { uint32_t offset, size; stub_hidden_kind_t kind; } hidden[16];
    uint32_t num_buffers;            /* global buffer arguments */
    uint32_t buffer_offsets[STUB_KERNEL_MAX_BUFFERS];
    const struct stub_cpu_build *cpu;   /* its code object's CPU build, or NULL (never freed) */
} stub_kernel_info_t;

bool stub_hsa_kernel_lookup(uint64_t kernel_object, stub_kernel_info_t *info);
void stub_hsa_executables_shutdown(void);

/* ---- profiling (hsa_profiling.c) -------------------------------------- */

bool stub_hsa_copy_profiling_enabled(void);
/* The GPU's timestamp counter at system time `system_ns` (its own domain). */
uint64_t stub_hsa_gpu_ticks(const stub_hsa_agent_t *gpu, uint64_t system_ns);
#define STUB_GPU_TICK_HZ 100000000ull

#endif
