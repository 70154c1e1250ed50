/* The stub's list of what it cannot model (hip_unsupported.c), for Python. */
#ifndef ROCPY_STUB_HIP_UNSUPPORTED_H
#define ROCPY_STUB_HIP_UNSUPPORTED_H

#include <stddef.h>

enum {
    ROCPY_UNSUPPORTED_TEXTURE, ROCPY_UNSUPPORTED_MIPMAP, ROCPY_UNSUPPORTED_GL,
    ROCPY_UNSUPPORTED_EXTERNAL, ROCPY_UNSUPPORTED_VMM, ROCPY_UNSUPPORTED_POOLSHARE,
    ROCPY_UNSUPPORTED_TRACE,
    ROCPY_UNSUPPORTED_RTC, ROCPY_UNSUPPORTED_IPC_PROCESS, ROCPY_UNSUPPORTED_DMABUF
};

/* The body of a function of the table (after hip_internal.h) */
#define UNSUPPORTED(group)                      \
    do {                                        \
        (void)(group);                          \
        HIP_INIT_API();                         \
        HIP_RETURN(hipErrorNotSupported);       \
    } while (0)

/* Exported to Python through hip_unsupported.cdef. */
size_t rocpy_stub_unsupported_count(void);
/* The i-th function name (NULL past the end), its reason, and whether the
 * whole function is unsupported (1) or one case of it (0). */
const char *rocpy_stub_unsupported_entry(size_t i, const char **reason, int *whole);

#endif
