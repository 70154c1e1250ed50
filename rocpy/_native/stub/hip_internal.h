/* The HIP half of the stub: what its files share.
 *
 * The semantics follow ROCm's hipamd (ROCm/hipamd at rocm-5.2.3, the version
 * of the installed headers; ROCm/clr where 5.2 has no defined behaviour, as
 * noted where it matters).  Every entry point starts with HIP_INIT_API() and
 * leaves through HIP_RETURN(), which stores the status as the calling
 * thread's last error whatever it is, hipSuccess included, as hipamd's
 * HIP_RETURN does.
 */
#ifndef ROCPY_STUB_HIP_INTERNAL_H
#define ROCPY_STUB_HIP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <hip/hip_runtime_api.h>

#include "rocpy_features.h"   /* generated: what these headers declare */
#include "stub_core.h"
#include "hip_ptrvec.h"

/* ---- errors, per-thread state, initialisation (hip_error.c) ----------- */

typedef struct hip_tls {
    int device;                       /* current device; -1 until first use */
    hipError_t last_error;
    hip_ptrvec_t ctx_stack;           /* hipCtx* stack (hip_dev_t *) */
    hipStreamCaptureMode capture_mode;    /* hipThreadExchangeStreamCaptureMode */
    hip_ptrvec_t captures;            /* capture sessions this thread began, non-relaxed */
    struct ihipStream_t *per_thread[STUB_MAX_DEVICES];
    uint64_t per_thread_id[STUB_MAX_DEVICES];
    /* streams and events the current API call resolved, each with a reference:
     * one destroyed by another thread meanwhile is freed when the call returns */
    struct hip_held {
        void *obj;
        void (*unref)(void *obj);
    } held[4];
    int nheld;
} hip_tls_t;

hip_tls_t *hip_tls(void);
/* Record the status as the thread's last error and drop the streams the call
 * held (hip_stream_resolve); every API call ends here (HIP_RETURN). */
hipError_t hip_set_error(hipError_t status);
/* Keep `obj` (the caller took a reference on it) until the current API call
 * returns, then call unref(obj). */
void hip_hold(void *obj, void (*unref)(void *obj));
/* Drop what the current call holds (done by hip_set_error). */
void hip_release_held(hip_tls_t *t);
/* Initialise once; hipErrorNoDevice when no device is visible (as ROCm/clr's
 * HIP_INIT_API; 5.2 would dereference a null device instead). */
hipError_t hip_init_api(void);
/* Initialise without failing for zero devices (hipGetDeviceCount & co). */
void hip_init_quiet(void);

#define HIP_RETURN(status) return hip_set_error(status)
#define HIP_INIT_API()                                    \
    do {                                                  \
        hipError_t hip_init_status_ = hip_init_api();     \
        if (hip_init_status_ != hipSuccess) HIP_RETURN(hip_init_status_); \
    } while (0)
#define HIP_RETURN_ONFAIL(expr)                           \
    do {                                                  \
        hipError_t hip_onfail_ = (expr);                  \
        if (hip_onfail_ != hipSuccess) HIP_RETURN(hip_onfail_); \
    } while (0)

/* ---- handle registry (hip_registry.c) --------------------------------- */

/* A set of live handles, so that a destroyed or foreign handle is refused
 * with a status instead of being dereferenced. */
typedef struct hip_registry {
    pthread_mutex_t lock;
    void **slots;
    size_t cap, used, tombstones;
} hip_registry_t;

#define HIP_REGISTRY_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0}
bool hip_registry_add(hip_registry_t *r, void *handle);
bool hip_registry_remove(hip_registry_t *r, void *handle);
bool hip_registry_contains(hip_registry_t *r, const void *handle);
/* Whether h is live and check(h, ctx) holds, atomically. */
bool hip_registry_contains_if(hip_registry_t *r, void *h, bool (*check)(void *h, void *ctx),
                              void *ctx);
/* Remove h if it is live and check(h, ctx) holds, atomically. */
bool hip_registry_remove_if(hip_registry_t *r, void *h, bool (*check)(void *h, void *ctx),
                            void *ctx);
/* Call fn on every live handle, with the registry locked (fn must not call
 * back into this registry). */
void hip_registry_foreach(hip_registry_t *r, void (*fn)(void *h, void *ctx), void *ctx);

/* ---- asynchronous operations (hip_op.c) ------------------------------- */

typedef struct hip_op hip_op_t;
typedef void (*hip_op_fn)(hip_op_t *op);

/* One unit of stream work.  Reference counted: the stream's worker holds one
 * reference, the stream's "last" pointer one, and every waiter its own. */
struct hip_op {
    atomic_int refs;
    atomic_int done;
    atomic_int waiters;
    uint64_t end_ns;                  /* when it completed (event timestamps) */
    hip_op_fn run;                    /* NULL: a marker (waits, then completes) */
    void (*fini)(hip_op_t *op);       /* frees what the payload owns */
    size_t ndeps;
    hip_op_t **deps;                  /* ops to wait for before running */
    _Alignas(max_align_t) unsigned char data[];   /* payload */
};

hip_op_t *hip_op_new(hip_op_fn run, size_t payload);
#define HIP_OP_DATA(op, type) ((type *)(void *)(op)->data)
hip_op_t *hip_op_ref(hip_op_t *op);
void hip_op_unref(hip_op_t *op);
/* Add a dependency (takes a new reference); false when out of memory. */
bool hip_op_add_dep(hip_op_t *op, hip_op_t *dep);
bool hip_op_done(const hip_op_t *op);
void hip_op_wait(hip_op_t *op);
/* The worker entry point: wait for deps, run, complete, drop a reference. */
void hip_op_execute(void *op);

/* ---- devices (hip_device.c) ------------------------------------------- */

typedef struct ihipStream_t hip_stream_t;

typedef struct hip_dev {
    int id;
    stub_device_t *info;
    pthread_mutex_t lock;
    atomic_uint flags;                /* hipSetDeviceFlags schedule bits */
    _Atomic uint64_t peers;           /* bit i: peer access to device i enabled from this
                                         device (its kernels may touch i's memory) */
    atomic_bool active;               /* a queue was used (primary ctx "active") */
    _Atomic uint64_t stack_size;      /* hipLimitStackSize (rocclr Device stack_size_, 1024) */
    hip_stream_t *null_stream;
} hip_dev_t;

void hip_device_init(void);
int hip_device_count(void);
hip_dev_t *hip_dev(int id);           /* NULL if out of range */
hip_dev_t *hip_current_dev(void);     /* the calling thread's device */
hipError_t hip_get_properties(hipDeviceProp_t *props, int device);
/* The devices whose memory kernels of `device` may touch (peers' bits). */
uint64_t hip_device_peers(int device);
/* Wait for every stream of the device (-1: of all devices), the null
 * streams included. */
void hip_device_sync(int device);

/* ---- streams (hip_stream.c) ------------------------------------------- */

struct ihipStream_t {
    uint32_t magic;
    atomic_int refs;                  /* the registry's, and calls using it (user streams) */
    uint64_t id;                      /* unique over the process */
    int device;
    unsigned flags;
    int priority;
    bool is_null;
    uint32_t *cu_mask;
    uint32_t cu_mask_size;
    int sync_policy;                  /* hipStreamSetAttribute's (0: never set, Auto) */
    pthread_mutex_t lock;             /* worker creation, order of submission */
    stub_worker_t *worker;
    hip_op_t *last;                   /* last op submitted (a reference) */
    /* capture state: guarded by hip_capture_lock */
    struct hip_capture *capture;
    hip_ptrvec_t capture_deps;        /* nodes the next captured node depends on */
    atomic_bool detached;             /* its execution context was destroyed (hip_exec_ctx.c) */
};

/* Resolve a handle: NULL -> the current device's null stream,
 * hipStreamPerThread -> the thread's default stream, else a live stream.
 * hipErrorContextIsDestroyed for anything else (hipamd's isValid).  A user
 * stream stays allocated until the calling API call returns (HIP_RETURN), even
 * if another thread destroys it meanwhile: its work then completes, and the
 * stream is freed by whichever of them finishes last. */
hipError_t hip_stream_resolve(hipStream_t handle, hip_stream_t **out);
bool hip_stream_valid(hipStream_t handle);
/* The handle to pass to stream callbacks for a stream (NULL for null streams). */
hipStream_t hip_stream_handle(hip_stream_t *s);
/* Enqueue, adding the legacy null stream's implicit dependencies; consumes
 * the caller's reference to op. */
void hip_stream_submit(hip_stream_t *s, hip_op_t *op);
/* Enqueue and wait for completion (synchronous APIs). */
void hip_stream_submit_wait(hip_stream_t *s, hip_op_t *op);
/* Host wait for all work submitted so far (with the implicit dependencies). */
void hip_stream_sync(hip_stream_t *s);
bool hip_stream_idle(hip_stream_t *s);
/* A new reference to the last op submitted, or NULL. */
hip_op_t *hip_stream_last(hip_stream_t *s);
/* A user stream on `device` (hipamd's ihipStreamCreate; hip_exec_ctx.c's
 * contexts make theirs so). */
hipError_t hip_stream_create_on(hipStream_t *out, int device, unsigned flags, int priority,
                                const uint32_t *cu_mask, uint32_t cu_mask_size);
void hip_stream_retain(hip_stream_t *s);
void hip_stream_release(hip_stream_t *s);
/* hipErrorStreamDetached for a live stream whose execution context was
 * destroyed (clr hip_internal.hpp CHECK_STREAM_DETACHED_API); hipSuccess
 * otherwise, and always where the headers have no hipErrorStreamDetached.
 * One line at the top of each entry point clr guards:
 * HIP_CHECK_STREAM_DETACHED(stream). */
hipError_t hip_stream_check_detached(hipStream_t handle);
/* hip::Stream::Detach: its capture invalidated, from now on detached. */
void hip_stream_detach(hip_stream_t *s);
#define HIP_CHECK_STREAM_DETACHED(stream) HIP_RETURN_ONFAIL(hip_stream_check_detached(stream))
/* Destroy every user stream of a device (hipDeviceReset). */
void hip_stream_destroy_device(int device);
hip_stream_t *hip_stream_new_null(int device);
/* A thread exits: destroy its per-thread default streams. */
void hip_stream_thread_exit(hip_tls_t *t);

/* ---- events (hip_event.c) --------------------------------------------- */

struct ihipEvent_t {
    uint32_t magic;
    atomic_int refs;                  /* the registry's, and calls using it */
    unsigned flags;
    int device;
    pthread_mutex_t lock;
    hip_op_t *rec;                    /* last record; NULL if never recorded */
    uint64_t rec_stream;              /* id of the stream it was recorded on */
    bool rec_on_null;                 /* ... which was a legacy null stream */
    /* capture state: guarded by hip_capture_lock */
    struct hip_capture *capture;
    hip_ptrvec_t capture_nodes;       /* nodes before the record in the capture */
    struct hip_ipc_event *ipc;        /* shared memory of an IPC event (hip_ipc.c) */
};

hipError_t hip_event_resolve(hipEvent_t handle, struct ihipEvent_t **out);
/* hipEventCreateWithFlags without the API frame (flags checked). */
hipError_t hip_event_create(hipEvent_t *event, unsigned flags);
/* IPC events (hip_ipc.c): a record also goes through the shared ring; an
 * event with a record pending there (any process's) is not complete. */
hipError_t hip_ipc_event_record(struct ihipEvent_t *e, hip_stream_t *s);
bool hip_ipc_event_pending(struct ihipEvent_t *e);
void hip_ipc_event_wait(struct ihipEvent_t *e);
void hip_ipc_event_close(struct hip_ipc_event *ipc);
/* Enqueue a record of e on s (the graph's event record node too). */
hipError_t hip_event_record_on(struct ihipEvent_t *e, hip_stream_t *s);
/* Make s wait for e's last record (the graph's event wait node too). */
void hip_event_wait_on(struct ihipEvent_t *e, hip_stream_t *s);

/* ---- allocations (hip_memory.c, hip_mempool.c) ------------------------ */

/* hipMalloc's allocation on a device (size 0: NULL and hipSuccess). */
hipError_t hip_device_alloc(void **ptr, size_t size, int device, unsigned flags);
/* hipFree of memory a pool handed out: the pool no longer counts it; false
 * when the memory is in a pool's free heap already (freed twice). */
bool hip_mempool_forget(void *ptr);
/* hipDeviceReset: the device's pools forget their blocks (the reset frees
 * the memory). */
void hip_mempool_device_reset(int device);
/* A stream, event or device synchronisation: the device's pools give back
 * freed memory down to their release thresholds (hip_mempool.c). */
void hip_mempool_release_freed(int device);
/* The device's graph memory pool (hip_mempool.c; NULL for no device). */
hipMemPool_t hip_mempool_graph_pool(int device);
/* Graph allocations mapped (bytes > 0) or unmapped (< 0) in the device's
 * graph pool, and hipDeviceGraphMemTrim's release of what is not mapped. */
void hip_mempool_graph_use(int device, int64_t bytes);
void hip_mempool_graph_trim(int device);
/* hipFree (s NULL) / hipFreeAsync of a graph allocation (hip_graph_memnode.c):
 * hipErrorInvalidValue for one not mapped or no graph allocation. */
hipError_t hip_graph_alloc_free(void *ptr, hip_stream_t *s);

/* ---- memory copies and fills (hip_memcpy.c, hip_memset.c) ------------- */

/* A strided 3D region, as ROCclr's BufferRect describes one. */
typedef struct hip_rect {
    size_t dst_pitch, dst_slice, src_pitch, src_slice;
    size_t width, height, depth;
} hip_rect_t;

/* Whether ptr (and size bytes from it) lies in stub-tracked memory. */
bool hip_mem_tracked(const void *ptr, stub_alloc_t *info);
hip_op_t *hip_copy_op(void *dst, const void *src, size_t size);
hip_op_t *hip_copy_rect_op(void *dst, const void *src, const hip_rect_t *r);
hip_op_t *hip_fill_op(void *dst, uint32_t value, size_t elem, size_t width,
                      size_t height, size_t pitch);
hipError_t hip_memcpy_validate(void *dst, const void *src, size_t size);
hipError_t hip_memcpy_on(hip_stream_t *s, void *dst, const void *src, size_t size,
                         hipMemcpyKind kind, bool async);
/* hipMemcpy2D / hipMemcpy2DAsync on a stream handle (arrays: hip_array.c) */
hipError_t hip_memcpy_2d(hipStream_t stream, void *dst, size_t dpitch, const void *src,
                         size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                         bool sync_api);
/* hipMemcpy3D / hipMemcpy3DAsync on a stream handle */
hipError_t hip_memcpy_3d(hipStream_t stream, const hipMemcpy3DParms *p, bool sync_api);
/* An array's packed storage (hip_array.c): false if `array` is no array. */
bool hip_array_storage(const void *array, char **data, size_t *row, size_t *rows, size_t *elem);
/* An array's descriptor and channel format (hip_array.c): false if `array`
 * is no array. */
bool hip_array_describe(const void *array, HIP_ARRAY3D_DESCRIPTOR *d, hipChannelFormatDesc *cd);
/* Validate a hipMemcpy3DParms (pointers, not arrays) and build its op. */
hipError_t hip_memcpy3d_op(const hipMemcpy3DParms *p, hip_op_t **out);
/* A stream wait (wait) or write of a size-byte word at ptr (tracked memory,
 * a known wait condition), not yet submitted (hip_stream_value.c). */
hipError_t hip_value_op(bool wait, void *ptr, uint64_t value, uint64_t mask, unsigned flags,
                        size_t size, hip_op_t **out);
/* A driver-style 3-D copy (HIP_MEMCPY3D) as hipMemcpy3D's parameters (hip_memcpy_param.c). */
hipError_t hip_drv_memcpy3d_parms(const HIP_MEMCPY3D *c, hipMemcpy3DParms *out);
hipError_t hip_memset_validate(void *dst, size_t elem, size_t width, size_t height,
                               size_t pitch);
/* hipMemset2D(Async)'s fill on a stream handle: capture, checks, the op
 * (width in elements, pitch in bytes; hip_memset.c) */
hipError_t hip_memset_fill(hipStream_t stream, void *dst, uint32_t value, size_t elem,
                           size_t width, size_t height, size_t pitch, bool sync_api);

/* A registered symbol's device address at offset, checked to hold size
 * bytes (hip_symbol.c): hipErrorInvalidSymbol, hipErrorInvalidValue. */
hipError_t hip_symbol_resolve(const void *symbol, size_t size, size_t offset, char **at);

/* ---- capture (hip_capture.c) ------------------------------------------ */

/* Resolve the stream of an asynchronous API and apply the capture rules:
 * *capturing is set when the op must be recorded instead of run;
 * hipErrorStreamCaptureInvalidated for an invalidated capture,
 * hipErrorStreamCaptureImplicit for the legacy null stream while a blocking
 * stream is capturing. */
hipError_t hip_stream_begin_op(hipStream_t handle, hip_stream_t **out, bool *capturing);
/* The same for copies and fills; a synchronous one (sync_api) is refused
 * while anything captures (hip_capture_check_sync) and never captures. */
hipError_t hip_stream_begin_transfer(hipStream_t handle, bool sync_api, hip_stream_t **out,
                                     bool *capturing);
/* Record a node built by make(graph, deps, ndeps, arg) on capturing s. */
typedef hipError_t (*hip_node_maker)(hipGraph_t graph, const hipGraphNode_t *deps,
                                     size_t ndeps, void *arg, hipGraphNode_t *node);
hipError_t hip_capture_node(hip_stream_t *s, hip_node_maker make, void *arg);
/* hipamd's CHECK_STREAM_CAPTURE_SUPPORTED (allocations and frees). */
hipError_t hip_capture_check_supported(void);
/* hipamd's CHECK_STREAM_CAPTURING (synchronous copies and fills). */
hipError_t hip_capture_check_sync(void);
/* hipamd's StreamCaptureOngoing (stream synchronize and query; s NULL: a
 * wait on no capturing stream, as hipEventSynchronize's). */
bool hip_capture_ongoing(hip_stream_t *s);
/* Any capture at all (hipDeviceSynchronize is refused during one). */
hipError_t hip_capture_check_device_sync(void);
/* True if a blocking stream (of any device) is capturing. */
bool hip_capture_blocking(void);
void hip_capture_invalidate(hip_stream_t *s);
void hip_capture_thread_exit(hip_tls_t *t);
/* A stream goes away: leave its capture. */
void hip_capture_stream_gone(hip_stream_t *s);
/* Event capture hooks (record on / wait from a capturing stream). */
hipError_t hip_capture_event_record(struct ihipEvent_t *e, hip_stream_t *s);
/* True if e belongs to an active capture: s joins it (*status says how). */
bool hip_capture_event_wait(struct ihipEvent_t *e, hip_stream_t *s, hipError_t *status);
/* hipErrorCapturedEvent when e was recorded in a capture still active. */
hipError_t hip_capture_event_check(struct ihipEvent_t *e);
void hip_capture_event_gone(struct ihipEvent_t *e);

/* ---- kernels and launches (hip_module.c, hip_launch.c) ---------------- */

struct ihipModuleSymbol_t {
    uint32_t magic;
    struct ihipModule_t *module;
    const struct stub_co_kernel *kernel;
};

#define HIP_LAUNCH_MAX_BUFFERS 64

/* A launch ready to run: the packed kernarg segment and the NDRange. */
typedef struct hip_launch {
    char name[256];
    uint32_t grid[3];                 /* work-items per dimension */
    uint32_t block[3];
    uint32_t group_segment;           /* static + dynamic LDS */
    int device;
    size_t kernarg_size;
    unsigned char *kernarg;
    uint32_t num_buffers;             /* global buffer arguments (the first 64) */
    uint32_t buffer_offsets[HIP_LAUNCH_MAX_BUFFERS];
    uint64_t peers;                   /* the device's peer access when it was enqueued */
    const struct stub_cpu_build *cpu; /* its module's CPU build, or NULL (never freed) */
} hip_launch_t;

/* hipErrorInvalidHandle unless f is a function of a loaded module; out may
 * be NULL. */
hipError_t hip_function_resolve(hipFunction_t f, struct ihipModuleSymbol_t **out);
/* The CPU build of a loaded module's code object, or NULL (hip_module.c). */
const struct stub_cpu_build *hip_module_cpu_build(const struct ihipModule_t *m);
/* Give a module whose code object has no CPU build `b` (a reference, which
 * it takes; released if it has one). */
void hip_module_adopt_cpu_build(struct ihipModule_t *m, struct stub_cpu_build *b);
/* Validate and pack (hipamd's ihipLaunchKernel_validate + argument capture). */
hipError_t hip_launch_prepare(hipFunction_t f, const uint32_t global[3],
                              const uint32_t block[3], uint32_t shared_bytes,
                              void **params, void **extra, int device,
                              hip_launch_t *out);
void hip_launch_release(hip_launch_t *l);
hipError_t hip_launch_copy(const hip_launch_t *src, hip_launch_t *dst);
/* Enqueue a prepared launch (the launch is copied). */
hipError_t hip_launch_enqueue(hip_stream_t *s, const hip_launch_t *l);

/* ---- graphs (hip_graph.c, hip_graph_exec.c) --------------------------- */

hipError_t hip_graph_new(hipGraph_t *out);
void hip_graph_free(hipGraph_t g);
bool hip_graph_valid(hipGraph_t g);
size_t hip_graph_leaves(hipGraph_t g, hipGraphNode_t **out);
/* Node makers (also used by capture): arg points to the node's parameters. */
hipError_t hip_make_kernel_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
hipError_t hip_make_memcpy_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
hipError_t hip_make_memcpy1d_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
hipError_t hip_make_memset_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
hipError_t hip_make_host_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
hipError_t hip_make_empty_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
/* arg: a prepared hip_launch_t (copied) */
hipError_t hip_make_launch_node(hipGraph_t, const hipGraphNode_t *, size_t, void *, hipGraphNode_t *);
/* Link a node made by its kind's file (calloc'ed, type and parameters set)
 * into graph; on failure the node and its parameters are released. */
struct hipGraphNode;
hipError_t hip_graph_add_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                              struct hipGraphNode *n, hipGraphNode_t *out);

typedef struct hip_memcpy1d_params {
    void *dst;
    const void *src;
    size_t count;
    hipMemcpyKind kind;
} hip_memcpy1d_params_t;

/* ---- user objects (hip_user_object.c) --------------------------------- */

/* The user-object references a graph or executable graph owns (NULL: none),
 * guarded by hip_user_object.c's lock. */
typedef struct hip_user_refs hip_user_refs_t;
/* The owner goes: release what it owns (destructors of the last references
 * run here) and set *refs to NULL. */
void hip_user_refs_free(hip_user_refs_t **refs);
/* A clone of the owner: one new reference of each object src owns. */
hipError_t hip_user_refs_clone(hip_user_refs_t *src, hip_user_refs_t **dst);

/* ---- misc ------------------------------------------------------------- */

#define HIP_MAGIC_STREAM 0x53545245u
#define HIP_MAGIC_EVENT 0x45564e54u
#define HIP_MAGIC_MODULE 0x4d4f444cu
#define HIP_MAGIC_FUNCTION 0x46554e43u
#define HIP_MAGIC_GRAPH 0x47524150u
#define HIP_MAGIC_NODE 0x4e4f4445u
#define HIP_MAGIC_EXEC 0x45584543u

#endif
