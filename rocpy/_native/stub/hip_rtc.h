/* hipRTC's compiler on the stub (hip_rtc_compile.c), for hip_rtc.c. */
#ifndef ROCPY_STUB_HIP_RTC_H
#define ROCPY_STUB_HIP_RTC_H

#include <stdbool.h>
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
    bool rdc;                         /* -fgpu-rdc: a unit for the link (hip_rtc_linker.c) */
} stub_rtc_input_t;

/* Compile with rocpy's compiler driver (`python3 -m rocpy cpukern build`):
 * the GPU code object (hipcc) and the CPU build in one bundle.  On
 * HIPRTC_SUCCESS *code (malloc'ed, *code_size bytes) is set; *log (malloc'ed,
 * NUL-terminated, possibly empty) always is, but for HIPRTC_ERROR_OUT_OF_MEMORY. */
hiprtcResult stub_rtc_compile(const stub_rtc_input_t *in, char **log, void **code,
                              size_t *code_size);

/* Run `$ROCPY_PYTHON -m rocpy cpukern ARGS...` in the folder `dir`, its output
 * into *log (malloc'ed, the folder's name left out; NULL only when out of
 * memory); true when it ran and exited 0. */
bool stub_rtc_driver(const char *dir, const char *const *args, size_t nargs, char **log);

/* The whole of a file (malloc'ed, NUL-terminated beyond *size); false if unreadable. */
bool stub_rtc_read_file(const char *path, char **data, size_t *size);

/* Remove a temporary folder and everything in it. */
void stub_rtc_remove_tree(const char *dir);

#endif
