/* The stub's linker (hip_rtc_linker.c): the one link behind hiprtcLink*
 * (hip_rtc_link.c) and hipLink* (hip_module_link.c). */
#ifndef ROCPY_STUB_HIP_RTC_LINKER_H
#define ROCPY_STUB_HIP_RTC_LINKER_H

#include <stdbool.h>
#include <stddef.h>

typedef struct stub_linker {
    void **inputs;                    /* copies, as hiprtc's comgr data set holds them */
    size_t *sizes;
    char **names;
    size_t count;
    void *out;                        /* the linked code, owned until the state is freed */
    size_t out_size;
    char *log;                        /* the last link's output, NUL-terminated, or NULL */
} stub_linker_t;

/* Whether data is a unit of the CPU build (rocpy.cpukern.compile_unit: what
 * the stub's hiprtc makes of a -fgpu-rdc program). */
bool stub_linker_is_unit(const void *data, size_t size);

/* Keep a copy of one input; false when out of memory. */
bool stub_linker_add(stub_linker_t *l, const void *data, size_t size, const char *name);

/* Link every input into one code object (`rocpy cpukern link`) for the GPU
 * `target` (the CPU build and, with a target, the units' sources linked by
 * hipcc -fgpu-rdc: the stub reads kernel metadata from that code object): true
 * and l->out/out_size set, or false with l->log saying why (an input that is
 * no unit, such as LLVM bitcode from a compiler; no inputs; the linker's
 * errors). */
bool stub_linker_complete(stub_linker_t *l, const char *target);

/* The current device's target (hiprtc's findIsa: hipGetDeviceProperties), or NULL. */
const char *stub_linker_current_target(char *buf, size_t size);

void stub_linker_free(stub_linker_t *l);

#endif
