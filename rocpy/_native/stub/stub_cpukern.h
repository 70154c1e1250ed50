/* The control entry of the stub's CPU builds (stub_cpukern.c; stub_cpukern.cdef). */
#ifndef ROCPY_STUB_CPUKERN_H
#define ROCPY_STUB_CPUKERN_H

#include <stddef.h>

/* Load the CPU build a combined file (an offload bundle) carries, if any. */
void rocpy_stub_offer_cpu_build(const void *data, size_t size);
/* Forget every CPU build offered so far (test isolation: CPU builds are found
 * by kernel name for the whole process, so one test's build of `vadd` would
 * run another's `vadd`).  The libraries stay loaded; a later offer reloads. */
void rocpy_stub_forget_cpu_builds(void);

#endif
