/* The control entries of the stub's CPU builds (stub_cpukern.c; stub_cpukern.cdef). */
#ifndef ROCPY_STUB_CPUKERN_H
#define ROCPY_STUB_CPUKERN_H

#include <stddef.h>

/* Offer the CPU build a combined file (an offload bundle) carries, for a
 * loader that then hands the stub only one of its ELFs: loading one of the
 * bundle's amdgcn ELFs (byte for byte) while the offer is held gives its
 * code object this build.  NULL if `data` carries none.  Release the offer
 * (rocpy_stub_release_cpu_build) once loaded. */
void *rocpy_stub_offer_cpu_build(const void *data, size_t size);
void rocpy_stub_release_cpu_build(void *offer);
/* How many CPU builds some code object (a HIP module, a registered fat
 * binary, an HSA executable) or an offer holds now. */
size_t rocpy_stub_cpu_builds(void);

#endif
