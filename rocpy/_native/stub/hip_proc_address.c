/* hipGetProcAddress (headers of 6.2 on; clr hipamd/src/hip_device.cpp, the same at rocm-6.2.0 and
 * amd-staging 2024-10): the address of a HIP function by name, looked up in
 * the runtime's own library -- here the generated table of every HIP
 * function the headers declare (rocpy/_build/backends.py proc_table_source),
 * so a name resolves to the stub's definition.  hipamd's rules:
 * hipErrorInvalidValue for a null or empty symbol or a null pfn (hipamd
 * builds a std::string from the symbol first: a null one crashes there; the
 * stub refuses it), hipGetDeviceProperties / hipChooseDevice mean their
 * R0600 forms for hipVersion >= 600, flags are not checked, and a name not
 * found is hipErrorInvalidValue with *pfn NULL and *symbolStatus
 * HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND (else HIP_GET_PROC_ADDRESS_SUCCESS). */
#include <string.h>

#include "hip_internal.h"

struct rocpy_stub_proc { const char *name; void *fn; };
extern const struct rocpy_stub_proc rocpy_stub_hip_procs[];

#ifdef ROCPY_HAVE_hipGetProcAddress
static void *lookup(const char *name) {
    for (const struct rocpy_stub_proc *p = rocpy_stub_hip_procs; p->name; p++)
        if (strcmp(p->name, name) == 0) return p->fn;
    return NULL;
}

hipError_t hipGetProcAddress(const char *symbol, void **pfn, int hipVersion, uint64_t flags,
                             hipDriverProcAddressQueryResult *symbolStatus) {
    (void)flags;
    HIP_INIT_API();
    if (!symbol || !*symbol || !pfn) HIP_RETURN(hipErrorInvalidValue);
    const char *name = symbol;
    if (hipVersion >= 600 && strcmp(symbol, "hipGetDeviceProperties") == 0)
        name = "hipGetDevicePropertiesR0600";
    else if (hipVersion >= 600 && strcmp(symbol, "hipChooseDevice") == 0)
        name = "hipChooseDeviceR0600";
    *pfn = lookup(name);
    if (!*pfn) {
        if (symbolStatus) *symbolStatus = HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        HIP_RETURN(hipErrorInvalidValue);
    }
    if (symbolStatus) *symbolStatus = HIP_GET_PROC_ADDRESS_SUCCESS;
    HIP_RETURN(hipSuccess);
}
#endif
