/* The stub's own minimal reader of AMD code objects (C, so the stub, its C
 * benchmarks and its sanitizer runs need no Python): clang offload bundles
 * (plain; compressed "CCOB" bundles are refused with a clear status), AMDGPU
 * ELF files, their symbols, and the NT_AMDGPU_METADATA msgpack note, as far as
 * loading and launching kernels need.  Shared by HSA executables and HIP
 * modules.  rocpy.codeobject (Python) is the full reader; both are tested
 * against llvm-readelf's output for the same files. */
#ifndef ROCPY_STUB_CODEOBJECT_H
#define ROCPY_STUB_CODEOBJECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define STUB_CO_NAME_LEN 256
#define STUB_CO_MAX_ARGS 64
#define STUB_CO_MAX_KERNELS 65536

typedef enum stub_co_status {
    STUB_CO_OK = 0,
    STUB_CO_INVALID = 1,        /* not a code object, truncated or malformed */
    STUB_CO_NO_TARGET = 2,      /* a bundle without an entry for the target */
    STUB_CO_UNSUPPORTED = 3,    /* e.g. a compressed bundle */
    STUB_CO_NO_MEMORY = 4
} stub_co_status_t;

typedef enum stub_co_arg_kind {
    STUB_ARG_BY_VALUE = 0,
    STUB_ARG_GLOBAL_BUFFER = 1,
    STUB_ARG_DYNAMIC_SHARED_POINTER = 2,
    STUB_ARG_HIDDEN = 3          /* any hidden_* argument */
} stub_co_arg_kind_t;

typedef struct stub_co_arg {
    uint32_t offset, size;
    stub_co_arg_kind_t kind;
    char value_kind[40];         /* the metadata's .value_kind string */
} stub_co_arg_t;

typedef struct stub_co_kernel {
    char name[STUB_CO_NAME_LEN];     /* ".name" */
    char symbol[STUB_CO_NAME_LEN];   /* ".symbol", e.g. "vadd.kd" */
    uint32_t kernarg_segment_size, kernarg_segment_align;
    uint32_t group_segment_fixed_size, private_segment_fixed_size;
    uint32_t wavefront_size, sgpr_count, vgpr_count, max_flat_workgroup_size;
    uint32_t reqd_workgroup_size[3];   /* ".reqd_workgroup_size", zeros if absent */
    uint32_t uniform_work_group_size;  /* ".uniform_work_group_size" (1: uniform) */
    uint32_t num_args;               /* explicit + hidden, in metadata order */
    stub_co_arg_t args[STUB_CO_MAX_ARGS];
    uint64_t descriptor_offset;      /* file offset of the 64-byte .kd in the ELF */
    /* The whole ".name" and ".symbol" (name[] and symbol[] above keep at
     * most STUB_CO_NAME_LEN - 1 bytes of them; long mangled names do not
     * fit).  NUL-terminated, owned by the code object. */
    const char *full_name, *full_symbol;
} stub_co_kernel_t;

/* A variable: a defined, non-local STT_OBJECT symbol that is not a kernel
 * descriptor, from .symtab (else .dynsym), in symbol table order. */
typedef struct stub_co_variable {
    char name[STUB_CO_NAME_LEN];
    uint64_t size;
    uint64_t elf_offset;             /* where its initial bytes are in the ELF, 0 if bss */
    const char *full_name;           /* the whole name (name[] may be cut); owned by the
                                      * code object (it points into its ELF copy) */
} stub_co_variable_t;

/* A CPU build of the code object's kernels (stub_cpukern.c), opaque here. */
typedef struct stub_cpu_build stub_cpu_build_t;

typedef struct stub_codeobject {
    char target[64];                 /* target id from the ELF, "gfx90a:sramecc+:xnack-" */
    uint32_t version;                /* code object version: 3, 4, 5 */
    uint32_t num_kernels, num_variables;
    stub_co_kernel_t *kernels;
    stub_co_variable_t *variables;
    void *elf;                       /* a private copy of the ELF image */
    size_t elf_size;
    stub_cpu_build_t *cpu;           /* its CPU build (a reference), or NULL */
} stub_codeobject_t;

/* Parse `data` (an offload bundle or a bare ELF).  For a bundle, pick the
 * entry whose target id serves `device_target` (ROCm's xnack/sramecc any/on/
 * off rules; an exact match is preferred to one through 'any'); NULL
 * device_target takes the first amdgcn entry.  A bare ELF (or the chosen
 * entry) whose own target does not serve `device_target` gives
 * STUB_CO_NO_TARGET.  The result owns copies of everything it needs; free it
 * with stub_codeobject_free.  On any status but STUB_CO_OK, *out is NULL.
 * Limits (STUB_CO_UNSUPPORTED beyond them): STUB_CO_MAX_ARGS arguments per
 * kernel, STUB_CO_MAX_KERNELS kernels; code object v2 and non-HSA OS ABIs. */
stub_co_status_t stub_codeobject_parse(const void *data, size_t size,
                                       const char *device_target,
                                       stub_codeobject_t **out);
void stub_codeobject_free(stub_codeobject_t *co);
/* Lookups compare the whole names (full_name, full_symbol); NULL if absent. */
const stub_co_kernel_t *stub_codeobject_kernel(const stub_codeobject_t *co,
                                               const char *name_or_symbol);
const stub_co_variable_t *stub_codeobject_variable(const stub_codeobject_t *co,
                                                   const char *name);
/* True if a code object compiled for `code_target` runs on `device_target`.
 * Both are target ids ("gfx90a:sramecc+:xnack-"), optionally prefixed with
 * "amdgcn-amd-amdhsa--".  Same processor (or a generic target such as
 * "gfx10-3-generic" covering the device's); each of xnack/sramecc absent
 * from the code ('any') matches anything, '+'/'-' must equal the device's;
 * a device target that does not spell a feature does not support it. */
bool stub_target_matches(const char *code_target, const char *device_target);
/* Short name of a status ("ok", "invalid", ...), for messages. */
const char *stub_co_status_name(stub_co_status_t status);

#endif
