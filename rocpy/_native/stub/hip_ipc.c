/* IPC memory and event handles (hipamd hip_memory.cpp hipIpc*MemHandle,
 * hip_event_ipc.cpp at rocm-5.2.3).
 *
 * Memory: a handle names a device allocation of this process (its base,
 * size and the pointer's offset, as ihipIpcMemHandle_t's psize/poffset).
 * hipIpcOpenMemHandle in the process that made the handle maps the same
 * memory up to 5.4 (the stub returns the allocation's own address where ROCr
 * maps a second one), is refused from 5.5 (stub_version.c); a handle from another process cannot be opened: the stub's
 * device memory is private to its process (hipErrorNotSupported, listed in
 * hip_unsupported.c).
 *
 * Events: as hipamd's IPCEvent, shared memory named in the handle
 * ("/hip_XXXXXX") holds a ring of 32 signals; a record sets the next one and
 * the stream clears it when it reaches the record, so any process that
 * opened the handle sees the record complete (query, synchronize, stream
 * waits, which wait on the host as hipamd's awaitCompletion does).  Opening
 * one's own event handle is hipErrorInvalidContext, as in hipamd. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "hip_internal.h"

/* ---- memory ----------------------------------------------------------- */

#define IPC_MEM_MAGIC 0x49504d48u

typedef struct ipc_mem_handle {
    uint32_t magic;
    int32_t pid;
    uint64_t base;
    uint64_t psize;                   /* the allocation's size (0: no handle) */
    uint64_t poffset;                 /* the pointer's offset in it */
} ipc_mem_handle_t;

_Static_assert(sizeof(ipc_mem_handle_t) <= HIP_IPC_HANDLE_SIZE, "IPC handle too large");

/* pointers opened by hipIpcOpenMemHandle and not yet closed (with repeats) */
static pthread_mutex_t opened_lock = PTHREAD_MUTEX_INITIALIZER;
static hip_ptrvec_t opened;

hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *handle, void *devPtr) {
    HIP_INIT_API();
    if (!handle || !devPtr) HIP_RETURN(hipErrorInvalidValue);
    stub_alloc_t a;
    /* ROCclr's IpcCreate: device memory only */
    if (!stub_mem_find(devPtr, &a) || a.kind != STUB_MEM_DEVICE || a.tag)
        HIP_RETURN(stub_rule(STUB_RULE_IPC_GET_MEM_HANDLE_INVALID_VALUE) ? hipErrorInvalidValue
                                                                         : hipErrorInvalidDevicePointer);
    ipc_mem_handle_t h = {IPC_MEM_MAGIC, (int32_t)getpid(), a.base, a.size,
                          (uintptr_t)devPtr - a.base};
    memset(handle, 0, sizeof *handle);
    memcpy(handle, &h, sizeof h);
    HIP_RETURN(hipSuccess);
}

hipError_t hipIpcOpenMemHandle(void **devPtr, hipIpcMemHandle_t handle, unsigned int flags) {
    HIP_INIT_API();
    if (!devPtr || flags != hipIpcMemLazyEnablePeerAccess) HIP_RETURN(hipErrorInvalidValue);
    ipc_mem_handle_t h;
    memcpy(&h, &handle, sizeof h);
    if (h.psize == 0) HIP_RETURN(hipErrorInvalidValue);
    if (h.magic != IPC_MEM_MAGIC) HIP_RETURN(hipErrorInvalidDevicePointer);
    bool own = h.pid == (int32_t)getpid();
    if (own && stub_rule(STUB_RULE_IPC_OPEN_OWN_MEM_HANDLE_REFUSED)) HIP_RETURN(hipErrorInvalidContext);
    if (!own) HIP_RETURN(hipErrorNotSupported);
    stub_alloc_t a;
    /* IpcAttach fails for memory freed since (or a forged handle) */
    if (!stub_mem_find((void *)(uintptr_t)h.base, &a) || a.base != h.base || a.size != h.psize)
        HIP_RETURN(hipErrorInvalidDevicePointer);
    void *p = (char *)(uintptr_t)h.base + h.poffset;
    pthread_mutex_lock(&opened_lock);
    bool ok = hip_ptrvec_push(&opened, p);
    pthread_mutex_unlock(&opened_lock);
    if (!ok) HIP_RETURN(hipErrorOutOfMemory);
    *devPtr = p;
    HIP_RETURN(hipSuccess);
}

/* the null stream finishes first; a pointer not opened fails IpcDetach */
hipError_t hipIpcCloseMemHandle(void *devPtr) {
    HIP_INIT_API();
    hip_stream_sync(hip_current_dev()->null_stream);
    if (!devPtr) HIP_RETURN(hipErrorInvalidValue);
    pthread_mutex_lock(&opened_lock);
    bool found = hip_ptrvec_remove(&opened, devPtr);
    pthread_mutex_unlock(&opened_lock);
    if (found) HIP_RETURN(hipSuccess);
    HIP_RETURN(stub_rule(STUB_RULE_IPC_CLOSE_UNKNOWN_INVALID_VALUE) ? hipErrorInvalidValue
                                                                    : hipErrorInvalidHandle);
}

/* ---- events ----------------------------------------------------------- */

#define IPC_SIGNALS 32
#define IPC_NAME_LEN 32

typedef struct ipc_shmem {
    atomic_int owners;
    atomic_int owner_pid;
    atomic_int owner_device;
    atomic_int read_index;            /* the last record (-1: none) */
    atomic_int write_index;
    atomic_uint signal[IPC_SIGNALS];  /* 1 while a record is pending */
} ipc_shmem_t;

struct hip_ipc_event {
    char name[IPC_NAME_LEN];
    ipc_shmem_t *shm;
};

static ipc_shmem_t *map_shm(const char *name, bool create) {
    int fd = shm_open(name, create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, 0600);
    if (fd < 0) return NULL;
    if (create && ftruncate(fd, sizeof(ipc_shmem_t)) != 0) {
        close(fd);
        shm_unlink(name);
        return NULL;
    }
    void *p = mmap(NULL, sizeof(ipc_shmem_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

/* IPCEvent::createIpcEventShmemIfNeeded */
static hipError_t ipc_event_shm(struct ihipEvent_t *e) {
    if (e->ipc) return hipSuccess;
    struct hip_ipc_event *ie = calloc(1, sizeof *ie);
    if (!ie) return hipErrorOutOfMemory;
    static atomic_uint counter;
    for (int tries = 0; tries < 16 && !ie->shm; tries++) {
        snprintf(ie->name, sizeof ie->name, "/hip_%d_%u", (int)getpid(),
                 atomic_fetch_add(&counter, 1));
        ie->shm = map_shm(ie->name, true);
    }
    if (!ie->shm) {
        free(ie);
        return hipErrorInvalidConfiguration;
    }
    atomic_store(&ie->shm->owners, 1);
    atomic_store(&ie->shm->read_index, -1);
    e->ipc = ie;
    return hipSuccess;
}

hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t *handle, hipEvent_t event) {
    HIP_INIT_API();
    if (!handle || !event) HIP_RETURN(hipErrorInvalidValue);
    struct ihipEvent_t *e;
    HIP_RETURN_ONFAIL(hip_event_resolve(event, &e));
    if (!(e->flags & hipEventInterprocess)) HIP_RETURN(hipErrorInvalidConfiguration);
    pthread_mutex_lock(&e->lock);
    hipError_t status = ipc_event_shm(e);
    if (status == hipSuccess) {
        atomic_store(&e->ipc->shm->owner_device, e->device);
        atomic_store(&e->ipc->shm->owner_pid, (int)getpid());
        memset(handle, 0, sizeof *handle);
        memcpy(handle->reserved, e->ipc->name, strlen(e->ipc->name));
    }
    pthread_mutex_unlock(&e->lock);
    HIP_RETURN(status);
}

hipError_t hipIpcOpenEventHandle(hipEvent_t *event, hipIpcEventHandle_t handle) {
    HIP_INIT_API();
    if (!event) HIP_RETURN(hipErrorInvalidValue);
    char name[IPC_NAME_LEN];
    memcpy(name, handle.reserved, IPC_NAME_LEN - 1);
    name[IPC_NAME_LEN - 1] = 0;
    ipc_shmem_t *shm = name[0] == '/' ? map_shm(name, false) : NULL;
    if (!shm) HIP_RETURN(hipErrorInvalidValue);
    if (atomic_load(&shm->owner_pid) == (int)getpid()) {
        munmap(shm, sizeof *shm);
        HIP_RETURN(hipErrorInvalidContext);
    }
    struct hip_ipc_event *ie = calloc(1, sizeof *ie);
    hipEvent_t h = NULL;
    hipError_t status = ie ? hip_event_create(&h, hipEventDisableTiming | hipEventInterprocess)
                           : hipErrorOutOfMemory;
    if (status != hipSuccess) {
        free(ie);
        munmap(shm, sizeof *shm);
        HIP_RETURN(status);
    }
    memcpy(ie->name, name, IPC_NAME_LEN);
    ie->shm = shm;
    atomic_fetch_add(&shm->owners, 1);
    h->ipc = ie;
    h->device = atomic_load(&shm->owner_device);
    *event = h;
    HIP_RETURN(hipSuccess);
}

void hip_ipc_event_close(struct hip_ipc_event *ie) {
    if (atomic_fetch_sub(&ie->shm->owners, 1) == 1) shm_unlink(ie->name);
    munmap(ie->shm, sizeof *ie->shm);
    free(ie);
}

typedef struct clear_args {
    atomic_uint *signal;
} clear_args_t;

static void run_clear(hip_op_t *op) {
    atomic_store(HIP_OP_DATA(op, clear_args_t)->signal, 0);
}

/* IPCEvent::enqueueRecordCommand: wait for the ring slot, set it, and let the
 * stream clear it after the record */
hipError_t hip_ipc_event_record(struct ihipEvent_t *e, hip_stream_t *s) {
    pthread_mutex_lock(&e->lock);
    hipError_t status = ipc_event_shm(e);
    pthread_mutex_unlock(&e->lock);
    if (status != hipSuccess) return status;
    ipc_shmem_t *shm = e->ipc->shm;
    int w = atomic_fetch_add(&shm->write_index, 1);
    atomic_uint *sig = &shm->signal[w % IPC_SIGNALS];
    while (atomic_load(sig) != 0) nanosleep(&(struct timespec){0, 1000000}, NULL);
    atomic_store(sig, 1);
    atomic_store(&shm->owner_device, e->device);
    status = hip_event_record_on(e, s);
    if (status == hipSuccess) {
        hip_op_t *op = hip_op_new(run_clear, sizeof(clear_args_t));
        if (!op) stub_abort("hipEventRecord", "out of memory");
        HIP_OP_DATA(op, clear_args_t)->signal = sig;
        hip_stream_submit(s, op);
    } else {
        atomic_store(sig, 0);
    }
    int expected = w - 1;
    while (!atomic_compare_exchange_weak(&shm->read_index, &expected, w)) {
        expected = w - 1;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return status;
}

/* IPCEvent::query */
bool hip_ipc_event_pending(struct ihipEvent_t *e) {
    if (!e->ipc) return false;
    int r = atomic_load(&e->ipc->shm->read_index);
    return r >= 0 && atomic_load(&e->ipc->shm->signal[r % IPC_SIGNALS]) != 0;
}

/* IPCEvent::synchronize: poll every millisecond as hipamd does (the record
 * may be another process's) */
void hip_ipc_event_wait(struct ihipEvent_t *e) {
    while (hip_ipc_event_pending(e)) nanosleep(&(struct timespec){0, 1000000}, NULL);
}
