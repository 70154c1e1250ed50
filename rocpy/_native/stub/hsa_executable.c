/* Executables (ROCr loader/executable.cpp ExecutableImpl): creation, loading
 * a code object for an agent, freezing, queries, destruction.  Symbols are
 * in hsa_symbol.c.
 *
 * ROCr loads only ELF code objects (HIP unbundles first); the stub also takes
 * a clang offload bundle and picks the entry for the agent's target.  A code
 * object (or a bundle without an entry) for another target gives
 * HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS, as ROCr's ISA check does. */
#include "hsa_executable.h"

#include <stdlib.h>
#include <string.h>

pthread_rwlock_t stub_exec_lock = PTHREAD_RWLOCK_INITIALIZER;
static executable_t *executables;

executable_t *stub_exec_first(void) { return executables; }

executable_t *stub_exec_find(hsa_executable_t handle) {
    for (executable_t *e = executables; e; e = e->next)
        if ((uint64_t)(uintptr_t)e == handle.handle) return e;
    return NULL;
}

hsa_status_t hsa_executable_create_alt(hsa_profile_t profile, hsa_default_float_rounding_mode_t rounding,
                                       const char *options, hsa_executable_t *executable) {
    HSA_CHECK_OPEN();
    (void)options;
    if (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (rounding != HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT && rounding != HSA_DEFAULT_FLOAT_ROUNDING_MODE_ZERO &&
        rounding != HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    HSA_CHECK_PTR(executable);
    executable_t *e = calloc(1, sizeof *e);
    if (!e) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    e->profile = profile;
    e->rounding = rounding;
    e->state = HSA_EXECUTABLE_STATE_UNFROZEN;
    e->symbols_tail = &e->symbols;
    pthread_rwlock_wrlock(&stub_exec_lock);
    e->next = executables;
    executables = e;
    pthread_rwlock_unlock(&stub_exec_lock);
    executable->handle = (uint64_t)(uintptr_t)e;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create(hsa_profile_t profile, hsa_executable_state_t executable_state,
                                   const char *options, hsa_executable_t *executable) {
    HSA_CHECK_OPEN();
    if (profile != HSA_PROFILE_BASE && profile != HSA_PROFILE_FULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (executable_state != HSA_EXECUTABLE_STATE_FROZEN && executable_state != HSA_EXECUTABLE_STATE_UNFROZEN)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    HSA_CHECK_PTR(executable);
    hsa_status_t st = hsa_executable_create_alt(profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, options, executable);
    if (st == HSA_STATUS_SUCCESS && executable_state == HSA_EXECUTABLE_STATE_FROZEN)
        ((executable_t *)(uintptr_t)executable->handle)->state = HSA_EXECUTABLE_STATE_FROZEN;
    return st;
}

static void free_loaded(loaded_t *l) {
    if (l->image) stub_mem_release(l->image, STUB_MEM_DEVICE, NULL);
    if (l->bss) stub_mem_release(l->bss, STUB_MEM_DEVICE, NULL);
    stub_codeobject_free(l->co);
    free(l);
}

static void free_executable(executable_t *e) {
    for (symbol_t *s = e->symbols, *next; s; s = next) {
        next = s->next;
        free(s);
    }
    for (loaded_t *l = e->loaded, *next; l; l = next) {
        next = l->next;
        free_loaded(l);
    }
    free(e);
}

hsa_status_t hsa_executable_destroy(hsa_executable_t executable) {
    HSA_CHECK_OPEN();
    pthread_rwlock_wrlock(&stub_exec_lock);
    executable_t **p = &executables;
    while (*p && (uint64_t)(uintptr_t)*p != executable.handle) p = &(*p)->next;
    executable_t *e = *p;
    if (e) *p = e->next;
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    free_executable(e);
    return HSA_STATUS_SUCCESS;
}

void stub_hsa_executables_shutdown(void) {
    pthread_rwlock_wrlock(&stub_exec_lock);
    executable_t *list = executables;
    executables = NULL;
    pthread_rwlock_unlock(&stub_exec_lock);
    while (list) {
        executable_t *next = list->next;
        free_executable(list);
        list = next;
    }
    stub_readers_shutdown();
}

static hsa_status_t status_of(stub_co_status_t st) {
    switch (st) {
    case STUB_CO_OK: return HSA_STATUS_SUCCESS;
    case STUB_CO_NO_TARGET: return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
    case STUB_CO_NO_MEMORY: return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    default: return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;   /* malformed, compressed bundle, ... */
    }
}

/* Place the ELF and the bss variables in the agent's memory. */
static hsa_status_t place(loaded_t *l) {
    const stub_codeobject_t *co = l->co;
    int device = l->agent->device;
    if (stub_mem_alloc(co->elf_size, STUB_PAGE_SIZE, STUB_MEM_DEVICE, device, 0, (void **)&l->image) != 0)
        return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    memcpy(l->image, co->elf, co->elf_size);
    size_t bss = 0;
    for (uint32_t i = 0; i < co->num_variables; i++)
        if (!co->variables[i].elf_offset) bss += (co->variables[i].size + 15) / 16 * 16;
    if (bss) {
        if (stub_mem_alloc(bss, STUB_PAGE_SIZE, STUB_MEM_DEVICE, device, 0, (void **)&l->bss) != 0)
            return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        memset(l->bss, 0, bss);
    }
    return HSA_STATUS_SUCCESS;
}

/* caller holds the write lock */
static bool defined(const executable_t *e, const char *name, const stub_hsa_agent_t *agent) {
    for (const symbol_t *s = e->symbols; s; s = s->next)
        if (s->lco->agent == agent && strcmp(s->name, name) == 0) return true;
    return false;
}

/* Symbols for every kernel descriptor and variable; all or nothing. */
static hsa_status_t make_symbols(executable_t *e, loaded_t *l, symbol_t **out) {
    const stub_codeobject_t *co = l->co;
    symbol_t *list = NULL, **tail = &list;
    size_t bss = 0;
    for (uint32_t i = 0; i < co->num_kernels + co->num_variables; i++) {
        bool kernel = i < co->num_kernels;
        uint32_t index = kernel ? i : i - co->num_kernels;
        const char *name = kernel ? co->kernels[index].full_symbol : co->variables[index].full_name;
        symbol_t *s = calloc(1, sizeof *s);
        if (!s || defined(e, name, l->agent)) {
            free(s);
            for (symbol_t *t = list, *next; t; t = next) {
                next = t->next;
                free(t);
            }
            return s ? HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED : HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        }
        *s = (symbol_t){e, l, kernel, index, 0, name, NULL};
        if (kernel) {
            s->address = (uint64_t)(uintptr_t)(l->image + co->kernels[index].descriptor_offset);
        } else if (co->variables[index].elf_offset) {
            s->address = (uint64_t)(uintptr_t)(l->image + co->variables[index].elf_offset);
        } else {
            s->address = (uint64_t)(uintptr_t)(l->bss + bss);
            bss += (co->variables[index].size + 15) / 16 * 16;
        }
        *tail = s;
        tail = &s->next;
    }
    *out = list;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_load_agent_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                                   hsa_code_object_reader_t code_object_reader,
                                                   const char *options,
                                                   hsa_loaded_code_object_t *loaded_code_object) {
    HSA_CHECK_OPEN();
    (void)options;
    pthread_rwlock_rdlock(&stub_exec_lock);
    executable_t *e = stub_exec_find(executable);
    bool frozen = e && e->state == HSA_EXECUTABLE_STATE_FROZEN;
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!e) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    const void *data;
    size_t size;
    if (!stub_reader_data(code_object_reader, &data, &size)) return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
    if (frozen) return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (!a->is_gpu) return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;   /* the CPU has no ISA */
    loaded_t *l = calloc(1, sizeof *l);
    if (!l) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    l->agent = a;
    hsa_status_t st = status_of(stub_codeobject_parse(data, size, a->dev->arch, &l->co));
    if (st == HSA_STATUS_SUCCESS) st = place(l);
    symbol_t *symbols = NULL;
    pthread_rwlock_wrlock(&stub_exec_lock);
    /* re-checked: the executable may have been destroyed or frozen meanwhile */
    if (st == HSA_STATUS_SUCCESS && stub_exec_find(executable) != e) st = HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (st == HSA_STATUS_SUCCESS && e->state == HSA_EXECUTABLE_STATE_FROZEN) st = HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
    if (st == HSA_STATUS_SUCCESS) st = make_symbols(e, l, &symbols);
    if (st == HSA_STATUS_SUCCESS) {
        l->next = e->loaded;
        e->loaded = l;
        *e->symbols_tail = symbols;
        while (*e->symbols_tail) e->symbols_tail = &(*e->symbols_tail)->next;
    }
    pthread_rwlock_unlock(&stub_exec_lock);
    if (st != HSA_STATUS_SUCCESS) {
        free_loaded(l);
        return st;
    }
    if (loaded_code_object) loaded_code_object->handle = (uint64_t)(uintptr_t)l;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_freeze(hsa_executable_t executable, const char *options) {
    HSA_CHECK_OPEN();
    (void)options;
    pthread_rwlock_wrlock(&stub_exec_lock);
    executable_t *e = stub_exec_find(executable);
    hsa_status_t st = !e ? HSA_STATUS_ERROR_INVALID_EXECUTABLE
                      : e->state == HSA_EXECUTABLE_STATE_FROZEN ? HSA_STATUS_ERROR_FROZEN_EXECUTABLE
                                                                 : HSA_STATUS_SUCCESS;
    if (st == HSA_STATUS_SUCCESS) e->state = HSA_EXECUTABLE_STATE_FROZEN;
    pthread_rwlock_unlock(&stub_exec_lock);
    return st;
}

hsa_status_t hsa_executable_get_info(hsa_executable_t executable, hsa_executable_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    pthread_rwlock_rdlock(&stub_exec_lock);
    executable_t *e = stub_exec_find(executable);
    hsa_status_t st = e ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    if (e) {
        switch (attribute) {
        case HSA_EXECUTABLE_INFO_PROFILE: *(hsa_profile_t *)value = e->profile; break;
        case HSA_EXECUTABLE_INFO_STATE: *(hsa_executable_state_t *)value = e->state; break;
        case HSA_EXECUTABLE_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
            *(hsa_default_float_rounding_mode_t *)value = e->rounding;
            break;
        default: st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
        }
    }
    pthread_rwlock_unlock(&stub_exec_lock);
    return st;
}

hsa_status_t hsa_executable_validate(hsa_executable_t executable, uint32_t *result) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(result);
    pthread_rwlock_rdlock(&stub_exec_lock);
    bool ok = stub_exec_find(executable) != NULL;
    pthread_rwlock_unlock(&stub_exec_lock);
    if (!ok) return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    *result = 0;   /* everything the stub loads is resolved at load time */
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_validate_alt(hsa_executable_t executable, const char *options, uint32_t *result) {
    (void)options;
    return hsa_executable_validate(executable, result);
}
