/* DLPack deleters and the capsule destructor of rocpy's exports, in C.
 *
 * A consumer calls a tensor's deleter whenever it is done with it, numpy
 * even while an exception propagates (np.add(np.from_dlpack(b), undefined),
 * a failed reshape).  A Python deleter run then raises SystemError ("a
 * function returned a result with an exception set") and can crash.  These
 * never run Python: the deleter pushes (token, manager_ctx) on rocpy's call
 * queue (callqueue.h), and the dispatcher thread drops the export's entry
 * (rocpy/hip/_dlpack.py), releasing the buffer's borrowed view there.  The
 * capsule destructor, for a capsule nobody consumed, calls the deleter.
 *
 * Parameters are void * so that the cdef needs no DLPack types: the layouts
 * below are DLPack 1.0's (dlpack.h of dmlc/dlpack), written out here.
 */
#ifndef ROCPY_FAST_DLPACK_H
#define ROCPY_FAST_DLPACK_H

#include <stdint.h>

/* The dispatcher token whose callable drops an export by its manager_ctx. */
void rocpy_dlpack_set_token(uint64_t token);
/* deleter of a DLManagedTensor (legacy) */
void rocpy_dlpack_deleter(void *managed);
/* deleter of a DLManagedTensorVersioned */
void rocpy_dlpack_deleter_versioned(void *managed);
/* PyCapsule_Destructor of "dltensor" / "dltensor_versioned" capsules */
void rocpy_dlpack_capsule_destructor(void *capsule);
/* How many deleter calls could not be queued (the dispatcher was shut down). */
uint64_t rocpy_dlpack_lost(void);

#endif
