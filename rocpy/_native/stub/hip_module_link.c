/* The driver API's linker, hipLink* (headers of 6.4 on; clr hipamd/src
 * hip_module.cpp hipLinkCreate/AddData/AddFile/Complete/Destroy over
 * hip_comgr_helper's LinkProgram, in ROCm/rocm-systems projects/clr).
 *
 * hipamd's order and statuses: every CUDA option (hipJitOption values below
 * hipJitOptionNumOptions) is hipErrorInvalidValue at hipLinkCreate; AddData
 * refuses no data with hipErrorInvalidImage; the CUDA input kinds and the
 * three LLVM bitcode kinds are hipErrorInvalidValue (hipLink takes SPIR-V,
 * hipJitInputSpirv, the only kind left with a comgr data kind: any other is
 * hipErrorInvalidConfiguration, as is a file that cannot be read); a state
 * not made by hipLinkCreate is hipErrorInvalidHandle for AddData and
 * hipErrorInvalidValue for the others (LinkProgram::isLinkerValid).
 *
 * The link is the stub's linker (hip_rtc_linker.c): it links units of the CPU
 * build given as hipJitInputSpirv (the stub's stand-in for the intermediate
 * code hipLink takes: what its hiprtc makes of a -fgpu-rdc program) into one
 * code object.  Real SPIR-V is no unit: hipLinkComplete fails with hipamd's
 * hipErrorInvalidConfiguration and says why on stderr (hipamd logs it;
 * hipLink has no log buffer option: they are CUDA options). */
#include <stdio.h>
#include <stdlib.h>

#include "hip_internal.h"

#ifdef ROCPY_HAVE_hipLinkCreate
#include "hip_rtc.h"
#include "hip_rtc_linker.h"

static hip_registry_t link_states = HIP_REGISTRY_INIT;

static stub_linker_t *linker_of(hipLinkState_t h) {
    return h && hip_registry_contains(&link_states, h) ? (stub_linker_t *)(void *)h : NULL;
}

hipError_t hipLinkCreate(unsigned int numOptions, hipJitOption *options, void **optionValues,
                         hipLinkState_t *stateOut) {
    HIP_INIT_API();
    if (!stateOut) HIP_RETURN(hipErrorInvalidValue);
    if (numOptions != 0) {
        if (!options || !optionValues) HIP_RETURN(hipErrorInvalidValue);
        for (unsigned i = 0; i < numOptions; i++)   /* the CUDA only options */
            if ((unsigned)options[i] <= (unsigned)hipJitOptionNumOptions)
                HIP_RETURN(hipErrorInvalidValue);
    }
    stub_linker_t *l = calloc(1, sizeof *l);
    if (!l) HIP_RETURN(hipErrorOutOfMemory);
    if (!hip_registry_add(&link_states, l)) {
        free(l);
        HIP_RETURN(hipErrorOutOfMemory);
    }
    *stateOut = (hipLinkState_t)(void *)l;
    HIP_RETURN(hipSuccess);
}

static bool refused_kind(hipJitInputType t) {
    return t == hipJitInputCubin || t == hipJitInputPtx || t == hipJitInputFatBinary ||
           t == hipJitInputObject || t == hipJitInputLibrary || t == hipJitInputNvvm ||
           t == hipJitInputLLVMBitcode || t == hipJitInputLLVMBundledBitcode ||
           t == hipJitInputLLVMArchivesOfBundledBitcode;
}

hipError_t hipLinkAddData(hipLinkState_t state, hipJitInputType type, void *data, size_t size,
                          const char *name, unsigned int numOptions, hipJitOption *options,
                          void **optionValues) {
    HIP_INIT_API();
    (void)numOptions, (void)options, (void)optionValues;
    if (!data || size == 0) HIP_RETURN(hipErrorInvalidImage);
    if (refused_kind(type)) HIP_RETURN(hipErrorInvalidValue);
    stub_linker_t *l = linker_of(state);
    if (!l) HIP_RETURN(hipErrorInvalidHandle);
    /* LinkProgram::GetCOMGRDataKind: UNDEF but for SPIR-V */
    if (type != hipJitInputSpirv) HIP_RETURN(hipErrorInvalidConfiguration);
    HIP_RETURN(stub_linker_add(l, data, size, name) ? hipSuccess : hipErrorOutOfMemory);
}

hipError_t hipLinkAddFile(hipLinkState_t state, hipJitInputType type, const char *path,
                          unsigned int numOptions, hipJitOption *options, void **optionValues) {
    HIP_INIT_API();
    (void)numOptions, (void)options, (void)optionValues;
    if (!state) HIP_RETURN(hipErrorInvalidHandle);
    if (refused_kind(type)) HIP_RETURN(hipErrorInvalidValue);
    stub_linker_t *l = linker_of(state);
    if (!l) HIP_RETURN(hipErrorInvalidValue);
    char *data = NULL;
    size_t size = 0;
    /* AddLinkerFile: an unreadable file, then the kind, fail alike */
    if (!path || !stub_rtc_read_file(path, &data, &size)) HIP_RETURN(hipErrorInvalidConfiguration);
    hipError_t st = type != hipJitInputSpirv ? hipErrorInvalidConfiguration
                    : stub_linker_add(l, data, size, path) ? hipSuccess : hipErrorOutOfMemory;
    free(data);
    HIP_RETURN(st);
}

hipError_t hipLinkComplete(hipLinkState_t state, void **hipBinOut, size_t *sizeOut) {
    HIP_INIT_API();
    if (!hipBinOut || !sizeOut) HIP_RETURN(hipErrorInvalidValue);
    stub_linker_t *l = linker_of(state);
    if (!l) HIP_RETURN(hipErrorInvalidValue);
    char target[256];
    if (!stub_linker_complete(l, stub_linker_current_target(target, sizeof target))) {
        fprintf(stderr, "%s", l->log ? l->log : "rocpy stub: hipLinkComplete failed\n");
        HIP_RETURN(hipErrorInvalidConfiguration);
    }
    *hipBinOut = l->out;
    *sizeOut = l->out_size;
    HIP_RETURN(hipSuccess);
}

hipError_t hipLinkDestroy(hipLinkState_t state) {
    HIP_INIT_API();
    stub_linker_t *l = linker_of(state);
    if (!l || !hip_registry_remove(&link_states, l)) HIP_RETURN(hipErrorInvalidValue);
    stub_linker_free(l);
    free(l);
    HIP_RETURN(hipSuccess);
}
#endif
