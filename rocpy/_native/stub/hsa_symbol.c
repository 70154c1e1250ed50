/* Executable symbols (ROCr loader SymbolImpl, KernelSymbol, VariableSymbol):
 * lookup by name, iteration, attributes, and the map from the kernel object
 * a dispatch packet carries back to its kernel.
 *
 * Kernel attributes come from the kernel descriptor, as ROCr takes them for
 * code object v3+ (ExecutableImpl::LoadDefinitionSymbol): kernarg size, group
 * and private segment sizes, the dynamic-stack and wave32 bits; the kernarg
 * alignment is ROCr's fixed 16. */
#include "hsa_executable.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KD_USES_DYNAMIC_STACK (1u << 11)
#define KD_WAVEFRONT_SIZE32 (1u << 10)
#define CODE_SYMBOL_INFO_KERNEL_WAVEFRONT_SIZE 19   /* answered by ROCr's KernelSymbol too */

/* caller holds stub_exec_lock */
symbol_t *stub_symbol_find(hsa_executable_symbol_t handle) {
    for (executable_t *e = stub_exec_first(); e; e = e->next)
        for (symbol_t *s = e->symbols; s; s = s->next)
            if ((uint64_t)(uintptr_t)s == handle.handle) return s;
    return NULL;
}

kd_fields_t stub_kd_fields(const symbol_t *s) {
    const unsigned char *kd = (const unsigned char *)(uintptr_t)s->address;
    kd_fields_t f;
    uint16_t props;
    memcpy(&f.group_size, kd + 0, 4);
    memcpy(&f.private_size, kd + 4, 4);
    memcpy(&f.kernarg_size, kd + 8, 4);
    memcpy(&props, kd + 56, 2);
    f.dynamic_stack = props & KD_USES_DYNAMIC_STACK;
    f.wave32 = props & KD_WAVEFRONT_SIZE32;
    return f;
}

/* ---- lookup ------------------------------------------------------------------- */

hsa_status_t hsa_executable_get_symbol_by_name(hsa_executable_t executable, const char *symbol_name,
                                               const hsa_agent_t *agent, hsa_executable_symbol_t *symbol) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(symbol_name);
    HSA_CHECK_PTR(symbol);
    pthread_rwlock_rdlock(&stub_exec_lock);
    executable_t *e = stub_exec_find(executable);
    symbol_t *found = NULL;
    /* code objects v3+ define agent symbols only: a NULL agent finds nothing */
    for (symbol_t *s = e && agent ? e->symbols : NULL; s && !found; s = s->next)
        if (stub_hsa_agent_handle(s->lco->agent).handle == agent->handle && strcmp(s->name, symbol_name) == 0)
            found = s;
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (!found) return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
    symbol->handle = (uint64_t)(uintptr_t)found;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_get_symbol(hsa_executable_t executable, const char *module_name,
                                       const char *symbol_name, hsa_agent_t agent, int32_t call_convention,
                                       hsa_executable_symbol_t *symbol) {
    HSA_CHECK_OPEN();
    (void)call_convention;
    HSA_CHECK_PTR(symbol_name);
    HSA_CHECK_PTR(symbol);
    if (!*symbol_name) return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
    char name[1024];
    if (module_name && *module_name) {
        if ((size_t)snprintf(name, sizeof name, "%s::%s", module_name, symbol_name) >= sizeof name)
            return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
        symbol_name = name;
    }
    return hsa_executable_get_symbol_by_name(executable, symbol_name, &agent, symbol);
}

/* ---- attributes -------------------------------------------------------------- */

static bool common_info(const symbol_t *s, int attribute, void *value) {
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
        *(hsa_symbol_kind_t *)value = s->is_kernel ? HSA_SYMBOL_KIND_KERNEL : HSA_SYMBOL_KIND_VARIABLE;
        return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH: *(uint32_t *)value = (uint32_t)strlen(s->name); return true;
    /* as ROCr: the name's bytes, no terminating NUL */
    case HSA_EXECUTABLE_SYMBOL_INFO_NAME: memcpy(value, s->name, strlen(s->name)); return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH: *(uint32_t *)value = 0; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME: return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE: *(hsa_symbol_linkage_t *)value = HSA_SYMBOL_LINKAGE_PROGRAM; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION: *(bool *)value = true; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_CALL_CONVENTION: *(uint32_t *)value = 0; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS: *(uint64_t *)value = s->address; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_AGENT: *(hsa_agent_t *)value = stub_hsa_agent_handle(s->lco->agent); return true;
    default: return false;
    }
}

static bool kernel_info(const symbol_t *s, int attribute, void *value) {
    kd_fields_t kd = stub_kd_fields(s);
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE: *(uint32_t *)value = kd.kernarg_size; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT: *(uint32_t *)value = 16; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE: *(uint32_t *)value = kd.group_size; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE: *(uint32_t *)value = kd.private_size; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK: *(bool *)value = kd.dynamic_stack; return true;
    case CODE_SYMBOL_INFO_KERNEL_WAVEFRONT_SIZE: *(uint32_t *)value = kd.wave32 ? 32 : 64; return true;
    default: return common_info(s, attribute, value);
    }
}

static bool variable_info(const symbol_t *s, int attribute, void *value) {
    const stub_co_variable_t *v = &s->lco->co->variables[s->index];
    switch (attribute) {
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION:
        *(hsa_variable_allocation_t *)value = HSA_VARIABLE_ALLOCATION_AGENT;
        return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT:
        *(hsa_variable_segment_t *)value = HSA_VARIABLE_SEGMENT_GLOBAL;
        return true;
    /* the reader does not report alignment: the stub places variables at 16 */
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT: *(uint32_t *)value = 16; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE: *(uint32_t *)value = (uint32_t)v->size; return true;
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST: *(bool *)value = false; return true;
    default: return common_info(s, attribute, value);
    }
}

hsa_status_t hsa_executable_symbol_get_info(hsa_executable_symbol_t executable_symbol,
                                            hsa_executable_symbol_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    pthread_rwlock_rdlock(&stub_exec_lock);
    symbol_t *s = stub_symbol_find(executable_symbol);
    bool ok = s && (s->is_kernel ? kernel_info(s, (int)attribute, value) : variable_info(s, (int)attribute, value));
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!s) return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
    return ok ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

/* ---- iteration: callbacks run on a snapshot, without the lock held ---------------- */

static hsa_status_t snapshot(hsa_executable_t executable, const stub_hsa_agent_t *agent, symbol_t ***out,
                             size_t *count) {
    pthread_rwlock_rdlock(&stub_exec_lock);
    executable_t *e = stub_exec_find(executable);
    size_t n = 0;
    for (symbol_t *s = e ? e->symbols : NULL; s; s = s->next) n += !agent || s->lco->agent == agent;
    symbol_t **list = e ? malloc((n ? n : 1) * sizeof *list) : NULL;
    size_t i = 0;
    for (symbol_t *s = list ? e->symbols : NULL; s; s = s->next)
        if (!agent || s->lco->agent == agent) list[i++] = s;
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (!list) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *out = list;
    *count = n;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_iterate_symbols(hsa_executable_t executable,
                                            hsa_status_t (*callback)(hsa_executable_t exec,
                                                                     hsa_executable_symbol_t symbol, void *data),
                                            void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    symbol_t **list;
    size_t n;
    hsa_status_t st = snapshot(executable, NULL, &list, &n);
    if (st != HSA_STATUS_SUCCESS) return st;
    for (size_t i = 0; st == HSA_STATUS_SUCCESS && i < n; i++)
        st = callback(executable, (hsa_executable_symbol_t){(uint64_t)(uintptr_t)list[i]}, data);
    free(list);
    return st;
}

hsa_status_t hsa_executable_iterate_agent_symbols(hsa_executable_t executable, hsa_agent_t agent,
                                                  hsa_status_t (*callback)(hsa_executable_t exec, hsa_agent_t agent,
                                                                           hsa_executable_symbol_t symbol,
                                                                           void *data),
                                                  void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    symbol_t **list;
    size_t n;
    hsa_status_t st = snapshot(executable, a, &list, &n);
    if (st != HSA_STATUS_SUCCESS) return st;
    for (size_t i = 0; st == HSA_STATUS_SUCCESS && i < n; i++)
        st = callback(executable, agent, (hsa_executable_symbol_t){(uint64_t)(uintptr_t)list[i]}, data);
    free(list);
    return st;
}

hsa_status_t hsa_executable_iterate_program_symbols(hsa_executable_t executable,
                                                    hsa_status_t (*callback)(hsa_executable_t exec,
                                                                             hsa_executable_symbol_t symbol,
                                                                             void *data),
                                                    void *data) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(callback);
    (void)data;
    pthread_rwlock_rdlock(&stub_exec_lock);
    bool ok = stub_exec_find(executable) != NULL;
    pthread_rwlock_unlock(&stub_exec_lock);
    return ok ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_EXECUTABLE;   /* v3+: no program symbols */
}

/* ---- kernel objects back to kernels (the packet processor) ---------------------- */

static bool hidden_kind(const char *value_kind, stub_hidden_kind_t *kind) {
    static const struct { const char *name; stub_hidden_kind_t kind; } kinds[] = {
        {"hidden_printf_buffer", STUB_HIDDEN_POINTER},   {"hidden_hostcall_buffer", STUB_HIDDEN_POINTER},
        {"hidden_heap_v1", STUB_HIDDEN_POINTER},         {"hidden_default_queue", STUB_HIDDEN_POINTER},
        {"hidden_completion_action", STUB_HIDDEN_POINTER}, {"hidden_queue_ptr", STUB_HIDDEN_QUEUE_PTR},
        {"hidden_private_base", STUB_HIDDEN_APERTURE},   {"hidden_shared_base", STUB_HIDDEN_APERTURE},
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(value_kind, kinds[i].name) == 0) {
            *kind = kinds[i].kind;
            return true;
        }
    return false;
}

bool stub_hsa_kernel_lookup(uint64_t kernel_object, stub_kernel_info_t *info) {
    if (!kernel_object) return false;
    pthread_rwlock_rdlock(&stub_exec_lock);
    const symbol_t *found = NULL;
    for (executable_t *e = stub_exec_first(); e && !found; e = e->next)
        for (symbol_t *s = e->symbols; s && !found; s = s->next)
            if (s->is_kernel && s->address == kernel_object) found = s;
    if (found) {
        const stub_co_kernel_t *k = &found->lco->co->kernels[found->index];
        kd_fields_t kd = stub_kd_fields(found);
        snprintf(info->name, sizeof info->name, "%s", k->full_name);
        info->agent = found->lco->agent;
        info->cpu = found->lco->co->cpu;
        info->kernarg_size = kd.kernarg_size;
        info->group_size = kd.group_size;
        info->private_size = kd.private_size;
        info->dynamic_stack = kd.dynamic_stack;
        info->max_flat_workgroup_size = k->max_flat_workgroup_size;
        memcpy(info->reqd_workgroup_size, k->reqd_workgroup_size, sizeof info->reqd_workgroup_size);
        info->uniform_work_group_size = k->uniform_work_group_size != 0;
        info->num_hidden = 0;
        for (uint32_t i = 0; i < k->num_args && info->num_hidden < 16; i++) {
            stub_hidden_kind_t kind;
            if (k->args[i].kind == STUB_ARG_HIDDEN && hidden_kind(k->args[i].value_kind, &kind) &&
                (k->args[i].size == 4 || k->args[i].size == 8)) {
                info->hidden[info->num_hidden].offset = k->args[i].offset;
                info->hidden[info->num_hidden].size = k->args[i].size;
                info->hidden[info->num_hidden++].kind = kind;
            }
        }
        info->num_buffers = 0;
        for (uint32_t i = 0; i < k->num_args && info->num_buffers < STUB_KERNEL_MAX_BUFFERS; i++)
            if (k->args[i].kind == STUB_ARG_GLOBAL_BUFFER) info->buffer_offsets[info->num_buffers++] = k->args[i].offset;
    }
    pthread_rwlock_unlock(&stub_exec_lock);
    return found != NULL;
}
