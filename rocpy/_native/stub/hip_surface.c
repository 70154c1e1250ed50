/* Surface objects (hipamd hip_surface.cpp: ihipCreateSurfaceObject,
 * ihipDestroySurfaceObject).  hipamd's surface is a small fine-grained
 * allocation holding the array's image and the resource descriptor; the
 * stub makes the same (a tracked host allocation, so hipFree-style checks
 * and the live count see it).  Kernels read surfaces through the image's
 * hardware descriptor, which the stub's C emulations do not have: creation,
 * checks and destruction are real, reads and writes from kernels are not
 * modelled.  Stub devices report image support (hip_device_attr.c), so
 * hipamd's first check (hipErrorNotSupported without images) never fires. */
#include <string.h>

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipCreateSurfaceObject   /* declared for C (5.2: C++ only) */

typedef struct stub_surface {
    hipArray_t array;
    hipResourceDesc desc;
} stub_surface_t;

static char surface_tag;              /* marks the stub's surface allocations */

hipError_t hipCreateSurfaceObject(hipSurfaceObject_t *pSurfObject, const hipResourceDesc *pResDesc) {
    HIP_INIT_API();
    if (!pSurfObject || !pResDesc) HIP_RETURN(hipErrorInvalidValue);
    if (pResDesc->resType != hipResourceTypeArray || !pResDesc->res.array.array)
        HIP_RETURN(hipErrorInvalidValue);
    HIP_ARRAY3D_DESCRIPTOR d;
    hipChannelFormatDesc cd;
    /* hipamd reads array->flags, then is_valid(array->data) */
    if (!hip_array_describe(pResDesc->res.array.array, &d, &cd)) HIP_RETURN(hipErrorInvalidValue);
    if (d.Flags != hipArrayDefault && !(d.Flags & hipArraySurfaceLoadStore))
        HIP_RETURN(hipErrorInvalidValue);
    void *p;
    if (stub_mem_alloc(sizeof(stub_surface_t), 16, STUB_MEM_HOST, hip_current_dev()->id, 0, &p))
        HIP_RETURN(hipErrorOutOfMemory);
    stub_mem_set_tag(p, &surface_tag);
    stub_surface_t *s = p;
    s->array = pResDesc->res.array.array;
    s->desc = *pResDesc;
    *pSurfObject = (hipSurfaceObject_t)p;
    HIP_RETURN(hipSuccess);
}

/* ihipDestroySurfaceObject: null is fine; anything else goes to ihipFree,
 * which frees any memory hipamd knows (hipErrorInvalidValue otherwise) */
hipError_t hipDestroySurfaceObject(hipSurfaceObject_t surfaceObject) {
    HIP_INIT_API();
    if (!surfaceObject) HIP_RETURN(hipSuccess);
    stub_alloc_t a;
    if (stub_mem_find(surfaceObject, &a) && a.tag == &surface_tag &&
        a.base == (uintptr_t)surfaceObject) {
        stub_mem_release(surfaceObject, STUB_MEM_HOST, NULL);
        HIP_RETURN(hipSuccess);
    }
    HIP_RETURN(hipFree(surfaceObject));
}
#endif
