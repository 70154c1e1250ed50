/* Code object readers, executables and their symbols, private to
 * hsa_code_reader.c, hsa_executable.c and hsa_symbol.c. */
#ifndef ROCPY_STUB_HSA_EXECUTABLE_H
#define ROCPY_STUB_HSA_EXECUTABLE_H

#include "hsa_internal.h"
#include "stub_codeobject.h"

/* A code object loaded for one agent: the ELF is copied into memory of
 * that agent (as the loader places code in the agent's local memory), so
 * kernel objects are addresses of the .kd descriptors in that copy. */
typedef struct loaded {
    stub_codeobject_t *co;
    const stub_hsa_agent_t *agent;
    char *image;                 /* tracked device memory */
    char *bss;                   /* tracked device memory for bss variables, or NULL */
    struct loaded *next;
} loaded_t;

typedef struct symbol {
    struct executable *exec;
    loaded_t *lco;
    bool is_kernel;
    uint32_t index;              /* into lco->co->kernels or ->variables */
    uint64_t address;            /* kernel object or variable address */
    const char *name;            /* the ELF symbol name, owned by lco->co */
    struct symbol *next;
} symbol_t;

typedef struct executable {
    hsa_profile_t profile;
    hsa_default_float_rounding_mode_t rounding;
    hsa_executable_state_t state;
    loaded_t *loaded;
    symbol_t *symbols, **symbols_tail;
    struct executable *next;
} executable_t;

/* One lock for executables and symbols: loads and destroys write, lookups
 * (every dispatch among them) read. */
extern pthread_rwlock_t stub_exec_lock;
/* caller holds stub_exec_lock */
executable_t *stub_exec_first(void);
executable_t *stub_exec_find(hsa_executable_t handle);
symbol_t *stub_symbol_find(hsa_executable_symbol_t handle);

/* The data behind a live reader; false for an unknown handle. */
bool stub_reader_data(hsa_code_object_reader_t handle, const void **data, size_t *size);
void stub_readers_shutdown(void);

/* Fields of the 64-byte kernel descriptor (llvm::amdhsa::kernel_descriptor_t). */
typedef struct kd_fields {
    uint32_t group_size, private_size, kernarg_size;
    bool dynamic_stack, wave32;
} kd_fields_t;
kd_fields_t stub_kd_fields(const symbol_t *s);

#endif
