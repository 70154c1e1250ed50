/* hiprtc linking (headers of 5.7 on; clr hipamd/src/hiprtc/hiprtc.cpp
 * hiprtcLink*, hiprtcInternal.cpp RTCLinkProgram, at rocm-6.2.0).
 *
 * The argument checks, the options (AddLinkerOptions: a null value for a
 * pointer option is HIPRTC_ERROR_INVALID_OPTION), the input types (the
 * CUDA-only ones are HIPRTC_ERROR_INVALID_INPUT; one with no comgr data kind,
 * or a file that cannot be read, HIPRTC_ERROR_PROGRAM_CREATION_FAILURE) and
 * the registry of link states (isLinkerValid) are hipamd's.  The link itself
 * is the stub's linker (hip_rtc_linker.c): inputs of the three bitcode kinds
 * are kept, and hiprtcLinkComplete links the units of the CPU build among
 * them (what the stub's hiprtc makes of -fgpu-rdc programs) into one code
 * object, owned by the state as hiprtc's executable_ is.  An input the stub
 * cannot link (LLVM bitcode from a compiler) fails it with
 * HIPRTC_ERROR_LINKING, hipamd's status for a failed link, and the reason in
 * the error log the options gave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"
#include "hip_rtc_linker.h"

#ifdef ROCPY_HAVE_hiprtcLinkCreate
#include <hip/hiprtc.h>

#include "hip_rtc.h"

typedef struct link_state {
    char *error_log;                  /* HIPRTC_JIT_ERROR_LOG_BUFFER, or NULL */
    size_t error_log_size;
    stub_linker_t linker;
} link_state_t;

static hip_registry_t links = HIP_REGISTRY_INIT;

static link_state_t *link_of(hiprtcLinkState h) {
    return h && hip_registry_contains(&links, h) ? (link_state_t *)(void *)h : NULL;
}

/* RTCLinkProgram::AddLinkerOptions: only the pointer options are checked */
static bool add_options(link_state_t *l, unsigned n, const hiprtcJIT_option *opts, void **vals) {
    for (unsigned i = 0; i < n; i++) {
        switch (opts[i]) {
        case HIPRTC_JIT_INFO_LOG_BUFFER: case HIPRTC_JIT_GLOBAL_SYMBOL_NAMES:
        case HIPRTC_JIT_GLOBAL_SYMBOL_ADDRESS: case HIPRTC_JIT_IR_TO_ISA_OPT_EXT:
            if (!vals[i]) return false;
            break;
        case HIPRTC_JIT_ERROR_LOG_BUFFER:
            if (!vals[i]) return false;
            l->error_log = vals[i];
            break;
        case HIPRTC_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
            l->error_log_size = (size_t)vals[i];
            break;
        default:
            break;
        }
    }
    return true;
}

hiprtcResult hiprtcLinkCreate(unsigned int num_options, hiprtcJIT_option *option_ptr,
                              void **option_vals_pptr, hiprtcLinkState *hip_link_state_ptr) {
    if (!hip_link_state_ptr) return HIPRTC_ERROR_INVALID_INPUT;
    if (num_options != 0 && (!option_ptr || !option_vals_pptr)) return HIPRTC_ERROR_INVALID_INPUT;
    link_state_t *l = calloc(1, sizeof *l);
    if (!l) return HIPRTC_ERROR_OUT_OF_MEMORY;
    /* hipamd leaks the program on a bad option; the stub frees it */
    if (!add_options(l, num_options, option_ptr, option_vals_pptr)) {
        free(l);
        return HIPRTC_ERROR_INVALID_OPTION;
    }
    if (!hip_registry_add(&links, l)) {
        free(l);
        return HIPRTC_ERROR_OUT_OF_MEMORY;
    }
    *hip_link_state_ptr = (hiprtcLinkState)(void *)l;
    return HIPRTC_SUCCESS;
}

static bool cuda_only(hiprtcJITInputType t) {
    return t == HIPRTC_JIT_INPUT_CUBIN || t == HIPRTC_JIT_INPUT_PTX ||
           t == HIPRTC_JIT_INPUT_FATBINARY || t == HIPRTC_JIT_INPUT_OBJECT ||
           t == HIPRTC_JIT_INPUT_LIBRARY || t == HIPRTC_JIT_INPUT_NVVM;
}

/* RTCLinkProgram::GetCOMGRDataKind: the three bitcode kinds */
static bool has_data_kind(hiprtcJITInputType t) {
    return t == HIPRTC_JIT_INPUT_LLVM_BITCODE || t == HIPRTC_JIT_INPUT_LLVM_BUNDLED_BITCODE ||
           t == HIPRTC_JIT_INPUT_LLVM_ARCHIVES_OF_BUNDLED_BITCODE;
}

hiprtcResult hiprtcLinkAddFile(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
                               const char *file_path, unsigned int num_options,
                               hiprtcJIT_option *options_ptr, void **option_values) {
    (void)num_options, (void)options_ptr, (void)option_values;
    if (!hip_link_state || cuda_only(input_type)) return HIPRTC_ERROR_INVALID_INPUT;
    link_state_t *l = link_of(hip_link_state);
    if (!l) return HIPRTC_ERROR_INVALID_INPUT;
    /* AddLinkerFile reads the file (a null path is no file), then the kind */
    char *data = NULL;
    size_t size = 0;
    if (!file_path || !stub_rtc_read_file(file_path, &data, &size))
        return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    bool added = has_data_kind(input_type) && stub_linker_add(&l->linker, data, size, file_path);
    free(data);
    return added ? HIPRTC_SUCCESS : HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
}

hiprtcResult hiprtcLinkAddData(hiprtcLinkState hip_link_state, hiprtcJITInputType input_type,
                               void *image, size_t image_size, const char *name,
                               unsigned int num_options, hiprtcJIT_option *options_ptr,
                               void **option_values) {
    (void)num_options, (void)options_ptr, (void)option_values;
    if (!image || image_size == 0 || cuda_only(input_type)) return HIPRTC_ERROR_INVALID_INPUT;
    link_state_t *l = link_of(hip_link_state);
    if (!l) return HIPRTC_ERROR_INVALID_INPUT;
    if (!has_data_kind(input_type) || !stub_linker_add(&l->linker, image, image_size, name))
        return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcLinkComplete(hiprtcLinkState hip_link_state, void **bin_out, size_t *size_out) {
    if (!bin_out || !size_out) return HIPRTC_ERROR_INVALID_INPUT;
    link_state_t *l = link_of(hip_link_state);
    if (!l) return HIPRTC_ERROR_INVALID_INPUT;
    char target[256];
    if (!stub_linker_complete(&l->linker, stub_linker_current_target(target, sizeof target))) {
        if (l->error_log && l->error_log_size)
            snprintf(l->error_log, l->error_log_size, "%s", l->linker.log ? l->linker.log : "");
        return HIPRTC_ERROR_LINKING;
    }
    *bin_out = l->linker.out;
    *size_out = l->linker.out_size;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcLinkDestroy(hiprtcLinkState hip_link_state) {
    if (!hip_link_state || !hip_registry_remove(&links, hip_link_state))
        return HIPRTC_ERROR_INVALID_INPUT;
    stub_linker_free(&((link_state_t *)(void *)hip_link_state)->linker);
    free(hip_link_state);
    return HIPRTC_SUCCESS;
}
#endif
