/* hipGetProcAddress and hipGetDriverEntryPoint(_spt) (below) (headers of 6.2 on; clr hipamd/src/hip_device.cpp, the same at rocm-6.2.0 and
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
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"

struct rocpy_stub_proc { const char *name; void *fn; };
extern const struct rocpy_stub_proc rocpy_stub_hip_procs[];

#if defined(ROCPY_HAVE_hipGetProcAddress) || defined(ROCPY_HAVE_hipGetDriverEntryPoint)
static void *lookup(const char *name) {
    for (const struct rocpy_stub_proc *p = rocpy_stub_hip_procs; p->name; p++)
        if (strcmp(p->name, name) == 0) return p->fn;
    return NULL;
}
#endif

#ifdef ROCPY_HAVE_hipGetProcAddress
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

#ifdef ROCPY_HAVE_hipGetDriverEntryPoint
/* hipGetDriverEntryPoint_common (clr hipamd/src/hip_device_runtime.cpp,
 * 7.x): a null or empty symbol or a null funcPtr hipErrorInvalidValue
 * (hipamd builds a std::string from the symbol first), flags other than
 * hipEnableDefault / hipEnableLegacyStream / hipEnablePerThreadDefaultStream
 * hipErrorInvalidValue; with hipEnablePerThreadDefaultStream the name's
 * "_spt" form when there is one, else the name; not found:
 * hipErrorInvalidValue, *funcPtr NULL, *driverStatus
 * hipDriverEntryPointSymbolNotFound (else hipDriverEntryPointSuccess).
 * Unlike hipGetProcAddress no R0600 renaming. */
static hipError_t entry_point(const char *symbol, void **funcPtr, unsigned long long flags,
                              hipDriverEntryPointQueryResult *driverStatus) {
    if (!symbol || !*symbol || !funcPtr) return hipErrorInvalidValue;
    if (flags != hipEnableDefault && flags != hipEnableLegacyStream &&
        flags != hipEnablePerThreadDefaultStream)
        return hipErrorInvalidValue;
    *funcPtr = NULL;
    if (flags == hipEnablePerThreadDefaultStream) {
        size_t n = strlen(symbol);
        char *spt = malloc(n + 5);
        if (!spt) return hipErrorOutOfMemory;
        memcpy(spt, symbol, n);
        memcpy(spt + n, "_spt", 5);
        *funcPtr = lookup(spt);
        free(spt);
    }
    if (!*funcPtr) *funcPtr = lookup(symbol);
    if (driverStatus)
        *driverStatus = *funcPtr ? hipDriverEntryPointSuccess : hipDriverEntryPointSymbolNotFound;
    return *funcPtr ? hipSuccess : hipErrorInvalidValue;
}

hipError_t hipGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                  hipDriverEntryPointQueryResult *driverStatus) {
    HIP_INIT_API();
    HIP_RETURN(entry_point(symbol, funcPtr, flags, driverStatus));
}
#endif

#if defined(ROCPY_HAVE_hipGetDriverEntryPoint_spt) && defined(ROCPY_HAVE_hipGetDriverEntryPoint)
/* the default flag means hipEnablePerThreadDefaultStream here */
hipError_t hipGetDriverEntryPoint_spt(const char *symbol, void **funcPtr, unsigned long long flags,
                                      hipDriverEntryPointQueryResult *driverStatus) {
    HIP_INIT_API();
    HIP_RETURN(entry_point(symbol, funcPtr, flags == hipEnableDefault ? hipEnablePerThreadDefaultStream
                                                                      : flags, driverStatus));
}
#endif
