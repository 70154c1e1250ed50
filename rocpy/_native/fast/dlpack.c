/* The DLPack deleters of dlpack.h: a push on the call queue, no Python. */
#include "dlpack.h"

#include <Python.h>
#include <stdatomic.h>

#include "callqueue.h"

typedef struct { int32_t device_type, device_id; } dl_device;
typedef struct { uint8_t code, bits; uint16_t lanes; } dl_dtype;
typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape, *strides;
    uint64_t byte_offset;
} dl_tensor;
typedef struct dl_managed {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *);
} dl_managed;
typedef struct dl_managed_versioned {
    struct { uint32_t major, minor; } version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_versioned *);
    uint64_t flags;
    dl_tensor dl_tensor;
} dl_managed_versioned;

static _Atomic uint64_t token, lost;

void rocpy_dlpack_set_token(uint64_t t) { atomic_store(&token, t); }

static void drop(void *manager_ctx)
{
    if (rocpy_callqueue_push(atomic_load(&token), (int64_t)(intptr_t)manager_ctx, 0) != 0)
        atomic_fetch_add(&lost, 1);     /* at exit: the entry is simply never dropped */
}

void rocpy_dlpack_deleter(void *managed) { drop(((dl_managed *)managed)->manager_ctx); }

void rocpy_dlpack_deleter_versioned(void *managed)
{
    drop(((dl_managed_versioned *)managed)->manager_ctx);
}

/* Python destroys the capsule (the GIL held, maybe with an exception set:
 * PyCapsule_IsValid and a valid PyCapsule_GetPointer leave it alone).  A
 * consumed capsule was renamed "used_..." by its consumer: not ours then. */
void rocpy_dlpack_capsule_destructor(void *capsule)
{
    PyObject *c = capsule;
    if (PyCapsule_IsValid(c, "dltensor")) {
        dl_managed *mt = PyCapsule_GetPointer(c, "dltensor");
        if (mt->deleter)
            mt->deleter(mt);
    } else if (PyCapsule_IsValid(c, "dltensor_versioned")) {
        dl_managed_versioned *mt = PyCapsule_GetPointer(c, "dltensor_versioned");
        if (mt->deleter)
            mt->deleter(mt);
    }
}

uint64_t rocpy_dlpack_lost(void) { return atomic_load(&lost); }
