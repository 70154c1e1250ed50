/* The stub's control surface for Python (declared in stub_control.cdef):
 * kernel emulation registry, fault injection, live counters, device config. */
#ifndef ROCPY_STUB_CONTROL_H
#define ROCPY_STUB_CONTROL_H

#include <stddef.h>
#include <stdint.h>

/* The dispatch and the emulation type: the installed C header's (one definition) */
#define ROCPY_STUB_INTERNAL
#include "../../include/rocpy_stub.h"

typedef enum rocpy_stub_fault {
    ROCPY_STUB_FAULT_ALLOC = 0,        /* the next allocation fails: out of memory */
    ROCPY_STUB_FAULT_QUEUE_ERROR = 1,  /* the next AQL packet / launch fails */
    ROCPY_STUB_FAULT_MEMORY_FAULT = 2, /* the next dispatch faults on memory */
    ROCPY_STUB_FAULT_COUNT = 3
} rocpy_stub_fault_t;

/* Register (fn != NULL) or remove (fn == NULL) an emulation; returns 0
 * (-1 for a name in the built-ins' namespace "rocpy.builtin."). */
int rocpy_stub_register_kernel(const char *name, rocpy_stub_kernel_fn fn, void *user);
/* Let (on != 0) or stop the built-in emulation `name` (empty, vadd, fill)
 * run kernels of that name that have no emulation of their own; -1 for a
 * name with no built-in.  Also $ROCPY_STUB_BUILTINS=empty,vadd,... */
int rocpy_stub_use_builtin(const char *name, int on);
/* Arm a fault: it fires at the (skip+1)-th matching call, `count` times. */
void rocpy_stub_inject(rocpy_stub_fault_t kind, int skip, int count);
/* Disarm every fault. */
void rocpy_stub_clear_faults(void);
/* Tracked allocations alive now (all kinds). */
size_t rocpy_stub_live_allocations(void);
/* Number of devices the stub exposes (after *_VISIBLE_DEVICES). */
int rocpy_stub_device_count(void);
/* HSA packet processors' overlap mode: 1 on, 0 off, -1 only asks; returns
 * the mode before the call.  On, kernel dispatch packets without the barrier
 * bit start before the packets ahead of them finish (the later first), as
 * hardware may run them concurrently.  The default is
 * $ROCPY_STUB_AQL_OVERLAP (on when "1"). */
int rocpy_stub_aql_overlap(int enable);
/* Nanoseconds HSA signal waits would have spent spinning on ROCr (its
 * interrupt wait turns the last partial millisecond of a finite timeout into
 * a busy loop; HSA_WAIT_STATE_ACTIVE spins throughout); cumulative. */
uint64_t rocpy_stub_hsa_busy_wait_ns(void);
/* Forget the HIP launches that failed and were not yet reported by a
 * synchronization (Python reports its emulations' exceptions itself). */
void rocpy_stub_clear_launch_failures(void);
/* The hipMemcpyKind the last linear copy (hipMemcpy*, hipMemcpyAsync*,
 * hipMemcpyWithStream) was called with, -1 before any; for tests of what
 * kind a binding passes (hipamd ignores it for known pointers, CUDA uses it). */
int rocpy_stub_last_memcpy_kind(void);

#endif
