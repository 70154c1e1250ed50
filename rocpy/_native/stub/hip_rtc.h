/* hipRTC's compiler on the stub (hip_rtc_compile.c), for hip_rtc.c. */
#ifndef ROCPY_STUB_HIP_RTC_H
#define ROCPY_STUB_HIP_RTC_H

#include <stddef.h>

#include <hip/hiprtc.h>

typedef struct stub_rtc_input {
    const char *source, *name;        /* name: the program's, or NULL */
    int num_headers;
    char **headers, **include_names;
    int num_options;
    const char *const *options;
    int num_expressions;
    char **expressions;               /* as added, in order */
    const char *target;               /* the current device's, for no --offload-arch */
} stub_rtc_input_t;

/* Compile with rocpy's compiler driver (`python3 -m rocpy cpukern build`):
 * the GPU code object (hipcc) and the CPU build in one bundle.  On
 * HIPRTC_SUCCESS *code (malloc'ed, *code_size bytes) is set; *log (malloc'ed,
 * NUL-terminated, possibly empty) always is, but for HIPRTC_ERROR_OUT_OF_MEMORY. */
hiprtcResult stub_rtc_compile(const stub_rtc_input_t *in, char **log, void **code,
                              size_t *code_size);

#endif
