/* Weak stand-ins for the code object reader (stub_codeobject.h), so the HIP
 * half links and runs before the reader's branch is merged: without it,
 * every module load fails with hipErrorNotSupported.  The reader's strong
 * definitions replace these at link time; delete this file once merged. */
#include "hip_internal.h"
#include "stub_codeobject.h"

__attribute__((weak)) stub_co_status_t stub_codeobject_parse(const void *data, size_t size,
                                                             const char *device_target,
                                                             stub_codeobject_t **out) {
    (void)data;
    (void)size;
    (void)device_target;
    *out = NULL;
    return (stub_co_status_t)HIP_STUB_CO_NO_READER;
}

__attribute__((weak)) void stub_codeobject_free(stub_codeobject_t *co) { (void)co; }

__attribute__((weak)) const stub_co_kernel_t *stub_codeobject_kernel(const stub_codeobject_t *co,
                                                                     const char *name_or_symbol) {
    (void)co;
    (void)name_or_symbol;
    return NULL;
}

__attribute__((weak)) const stub_co_variable_t *stub_codeobject_variable(
    const stub_codeobject_t *co, const char *name) {
    (void)co;
    (void)name;
    return NULL;
}

__attribute__((weak)) bool stub_target_matches(const char *code_target, const char *device_target) {
    (void)code_target;
    (void)device_target;
    return false;
}
