/* Modules (hipamd hip_module.cpp, hip_platform.cpp, hip_fatbin.cpp,
 * hip_code_object.cpp): code objects parsed by the stub's reader for the
 * current device's target, their kernels as hipFunction_t and their global
 * variables in device memory.
 *
 * Statuses: missing file hipErrorFileNotFound; empty file or bytes that are
 * neither an offload bundle nor an AMDGPU ELF hipErrorInvalidKernelFile (as
 * hipamd, which tries such bytes as an ELF and fails); a bundle without an
 * entry for the device, or an ELF for another target, hipErrorNoBinaryForGpu
 * (ROCm/clr; 5.2 aborted); unknown names hipErrorNotFound. */
#include <stdio.h>
#include <string.h>

#include "hip_internal.h"
#include "stub_codeobject.h"

struct ihipModule_t {
    uint32_t magic;
    int device;
    stub_codeobject_t *co;
    struct ihipModuleSymbol_t *funcs;
    void **globals;                   /* device copy of each variable, or NULL */
};

static hip_registry_t modules = HIP_REGISTRY_INIT;
static hip_registry_t functions = HIP_REGISTRY_INIT;

hipError_t hip_function_resolve(hipFunction_t f, struct ihipModuleSymbol_t **out) {
    if (!f || !hip_registry_contains(&functions, f)) return hipErrorInvalidHandle;
    if (out) *out = f;
    return hipSuccess;
}

const struct stub_cpu_build *hip_module_cpu_build(const struct ihipModule_t *m) {
    return m && m->co ? m->co->cpu : NULL;
}

void hip_module_adopt_cpu_build(struct ihipModule_t *m, struct stub_cpu_build *b) {
    if (m && m->co && !m->co->cpu) m->co->cpu = b;
    else stub_cpukern_release(b);
}

static void module_free(struct ihipModule_t *m) {
    if (m->co) {
        for (uint32_t i = 0; i < m->co->num_kernels; i++) hip_registry_remove(&functions, &m->funcs[i]);
        for (uint32_t i = 0; m->globals && i < m->co->num_variables; i++)
            if (m->globals[i]) stub_mem_release(m->globals[i], STUB_MEM_DEVICE, NULL);
        stub_codeobject_free(m->co);
    }
    free(m->funcs);
    free(m->globals);
    m->magic = 0;
    free(m);
}

static hipError_t map_status(stub_co_status_t st) {
    switch (st) {
    case STUB_CO_OK: return hipSuccess;
    case STUB_CO_INVALID: return hipErrorInvalidKernelFile;
    case STUB_CO_NO_TARGET: return hipErrorNoBinaryForGpu;
    case STUB_CO_UNSUPPORTED: return hipErrorInvalidKernelFile;   /* e.g. compressed bundles */
    case STUB_CO_NO_MEMORY: return hipErrorOutOfMemory;
    default: return hipErrorNotSupported;
    }
}

/* Variables live in device memory tagged with their module, so that
 * hipFree refuses them and hipDeviceReset leaves them to hipModuleUnload. */
static hipError_t load_globals(struct ihipModule_t *m) {
    const stub_codeobject_t *co = m->co;
    m->globals = calloc(co->num_variables ? co->num_variables : 1, sizeof *m->globals);
    if (!m->globals) return hipErrorOutOfMemory;
    for (uint32_t i = 0; i < co->num_variables; i++) {
        const stub_co_variable_t *v = &co->variables[i];
        if (!v->size) continue;
        if (stub_mem_alloc(v->size, 256, STUB_MEM_DEVICE, m->device, 0, &m->globals[i]) != 0)
            return hipErrorOutOfMemory;
        stub_mem_set_tag(m->globals[i], m);
        memset(m->globals[i], 0, v->size);
        if (v->elf_offset && v->elf_offset + v->size <= co->elf_size)
            memcpy(m->globals[i], (const char *)co->elf + v->elf_offset, v->size);
    }
    return hipSuccess;
}

static hipError_t load_on(hipModule_t *module, const void *data, size_t size, hip_dev_t *dev) {
    if (!module) return hipErrorInvalidValue;
    stub_codeobject_t *co = NULL;
    hipError_t status = map_status(stub_codeobject_parse(data, size, dev->info->arch, &co));
    if (status == hipSuccess && !stub_target_matches(co->target, dev->info->arch))
        status = hipErrorNoBinaryForGpu;
    struct ihipModule_t *m = status == hipSuccess ? calloc(1, sizeof *m) : NULL;
    if (status == hipSuccess && !m) status = hipErrorOutOfMemory;
    if (status != hipSuccess) {
        if (co) stub_codeobject_free(co);
        return status;
    }
    m->magic = HIP_MAGIC_MODULE;
    m->device = dev->id;
    m->co = co;
    m->funcs = calloc(co->num_kernels ? co->num_kernels : 1, sizeof *m->funcs);
    status = m->funcs ? load_globals(m) : hipErrorOutOfMemory;
    for (uint32_t i = 0; status == hipSuccess && i < co->num_kernels; i++) {
        m->funcs[i] = (struct ihipModuleSymbol_t){HIP_MAGIC_FUNCTION, m, &co->kernels[i]};
        if (!hip_registry_add(&functions, &m->funcs[i])) status = hipErrorOutOfMemory;
    }
    if (status == hipSuccess && !hip_registry_add(&modules, m)) status = hipErrorOutOfMemory;
    if (status != hipSuccess) {
        module_free(m);
        return status;
    }
    *module = m;
    return hipSuccess;
}

static hipError_t load(hipModule_t *module, const void *data, size_t size) {
    return load_on(module, data, size, hip_current_dev());
}

/* The size of an in-memory image: an offload bundle's last entry, or an
 * ELF's furthest section or header table.  0: not a code object.
 *
 * hipModuleLoadData has no size, so the headers are all there is; a header
 * whose numbers no compiler writes (an entry or section count, an id length,
 * an offset or size past IMAGE_MAX) makes the image invalid before anything
 * is read where it points, so garbage fails with a status, not a crash. */
#define IMAGE_MAX (1ull << 36)      /* 64 GiB: far past any real code object */
#define BUNDLE_MAX_ENTRIES 1024u
#define BUNDLE_MAX_ID 1024u
static size_t image_size(const unsigned char *p) {
    static const char bundle[] = "__CLANG_OFFLOAD_BUNDLE__";
    uint64_t end = 0, v[4];
    if (memcmp(p, bundle, sizeof bundle - 1) == 0) {
        uint64_t n;
        const unsigned char *q = p + sizeof bundle - 1;
        memcpy(&n, q, 8);
        q += 8;
        if (n > BUNDLE_MAX_ENTRIES) return 0;
        for (uint64_t i = 0; i < n; i++) {
            memcpy(v, q, 24);   /* offset, size, id length */
            if (v[0] > IMAGE_MAX || v[1] > IMAGE_MAX || v[2] > BUNDLE_MAX_ID) return 0;
            if (v[0] + v[1] > end) end = v[0] + v[1];
            q += 24 + v[2];
        }
        return (size_t)(end > (uint64_t)(q - p) ? end : (uint64_t)(q - p));
    }
    if (memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2) return 0;
    uint64_t shoff, phoff;
    uint16_t shentsize, shnum, phentsize, phnum;
    memcpy(&phoff, p + 32, 8);
    memcpy(&shoff, p + 40, 8);
    memcpy(&phentsize, p + 54, 2);
    memcpy(&phnum, p + 56, 2);
    memcpy(&shentsize, p + 58, 2);
    memcpy(&shnum, p + 60, 2);
    if (phoff > IMAGE_MAX || shoff > IMAGE_MAX || (shnum && shentsize < 64)) return 0;
    end = shoff + (uint64_t)shentsize * shnum;
    if (phoff + (uint64_t)phentsize * phnum > end) end = phoff + (uint64_t)phentsize * phnum;
    for (uint16_t i = 0; i < shnum; i++) {
        const unsigned char *sh = p + shoff + (uint64_t)i * shentsize;
        uint32_t type;
        memcpy(&type, sh + 4, 4);
        memcpy(v, sh + 24, 16);   /* sh_offset, sh_size */
        if (type != 8 /* SHT_NOBITS */ && (v[0] > IMAGE_MAX || v[1] > IMAGE_MAX)) return 0;
        if (type != 8 /* SHT_NOBITS */ && v[0] + v[1] > end) end = v[0] + v[1];
    }
    return (size_t)end;
}

hipError_t hipModuleLoad(hipModule_t *module, const char *fname) {
    HIP_INIT_API();
    if (!module || !fname) HIP_RETURN(hipErrorInvalidValue);
    FILE *f = fopen(fname, "rb");
    if (!f) HIP_RETURN(hipErrorFileNotFound);
    unsigned char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)size)) &&
        fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    hipError_t status = size == 0 ? hipErrorInvalidKernelFile
                        : !buf    ? hipErrorFileNotFound
                                  : load(module, buf, (size_t)size);
    free(buf);
    HIP_RETURN(status);
}

static hipError_t load_data(hipModule_t *module, const void *image) {
    if (!module || !image) return hipErrorInvalidValue;
    size_t size = image_size(image);
    if (!size) return hipErrorInvalidKernelFile;
    return load(module, image, size);
}

/* For fat-binary registration (hip_fatbin.c): no API status recorded. */
hipError_t hip_module_load_image(hipModule_t *module, const void *image, int device) {
    if (!module || !image) return hipErrorInvalidValue;
    size_t size = image_size(image);
    hip_dev_t *dev = hip_dev(device);
    if (!dev) return hipErrorInvalidDevice;
    return size ? load_on(module, image, size, dev) : hipErrorInvalidKernelFile;
}

hipError_t hip_module_load_sized(hipModule_t *module, const void *data, size_t size, int device) {
    hip_dev_t *dev = hip_dev(device);
    if (!dev) return hipErrorInvalidDevice;
    return load_on(module, data, size, dev);
}

void hip_module_unload_image(hipModule_t module) {
    if (module && hip_registry_remove(&modules, module)) module_free(module);
}

hipError_t hip_module_function(hipModule_t module, const char *name, hipFunction_t *out) {
    for (uint32_t i = 0; i < module->co->num_kernels; i++)
        if (strcmp(module->co->kernels[i].name, name) == 0) {
            *out = &module->funcs[i];
            return hipSuccess;
        }
    return hipErrorNotFound;
}

uint32_t hip_module_function_count(hipModule_t module) { return module->co->num_kernels; }

hipFunction_t hip_module_function_at(hipModule_t module, uint32_t i) {
    return i < module->co->num_kernels ? &module->funcs[i] : NULL;
}

hipError_t hip_module_global(hipModule_t module, const char *name, void **ptr, size_t *size) {
    for (uint32_t i = 0; i < module->co->num_variables; i++)
        if (strcmp(module->co->variables[i].name, name) == 0) {
            *ptr = module->globals[i];
            *size = module->co->variables[i].size;
            return hipSuccess;
        }
    return hipErrorNotFound;
}

hipError_t hipModuleLoadData(hipModule_t *module, const void *image) {
    HIP_INIT_API();
    HIP_RETURN(load_data(module, image));
}

hipError_t hipModuleLoadDataEx(hipModule_t *module, const void *image, unsigned int numOptions,
                               hipJitOption *options, void **optionsValues) {
    (void)numOptions;
    (void)options;
    (void)optionsValues;
    HIP_INIT_API();
    HIP_RETURN(load_data(module, image));
}

#ifdef ROCPY_HAVE_hipModuleLoadFatBinary
/* hipamd hip_module.cpp hipModuleLoadFatBinary: PlatformState::LoadModule(module, 0, fatbin),
 * hipModuleLoadData's path (a HIP fat binary is an offload bundle) */
hipError_t hipModuleLoadFatBinary(hipModule_t *module, const void *fatbin) {
    HIP_INIT_API();
    HIP_RETURN(load_data(module, fatbin));
}
#endif

#ifdef ROCPY_HAVE_hipModuleGetFunctionCount
/* hipamd hip_module.cpp hipModuleGetFunctionCount: a null module
 * hipErrorInvalidResourceHandle, PlatformState::GetFuncCount an unknown one
 * hipErrorNotFound, DynCO::getFuncCount a null count hipErrorInvalidValue */
hipError_t hipModuleGetFunctionCount(unsigned int *count, hipModule_t mod) {
    HIP_INIT_API();
    if (!mod) HIP_RETURN(hipErrorInvalidResourceHandle);
    if (!hip_registry_contains(&modules, mod)) HIP_RETURN(hipErrorNotFound);
    if (!count) HIP_RETURN(hipErrorInvalidValue);
    *count = mod->co->num_kernels;
    HIP_RETURN(hipSuccess);
}
#endif

hipError_t hipModuleUnload(hipModule_t module) {
    HIP_INIT_API();
    if (!module || !hip_registry_remove(&modules, module)) HIP_RETURN(hipErrorNotFound);
    module_free(module);
    HIP_RETURN(hipSuccess);
}

hipError_t hipModuleGetFunction(hipFunction_t *function, hipModule_t module, const char *kname) {
    HIP_INIT_API();
    if (!function || !kname) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_registry_contains(&modules, module) || !*kname) HIP_RETURN(hipErrorNotFound);
    for (uint32_t i = 0; i < module->co->num_kernels; i++) {
        if (strcmp(module->co->kernels[i].name, kname) == 0) {
            *function = &module->funcs[i];
            HIP_RETURN(hipSuccess);
        }
    }
    HIP_RETURN(hipErrorNotFound);
}

/* hipamd 5.2: a NULL dptr or bytes makes the call a successful no-op */
hipError_t hipModuleGetGlobal(hipDeviceptr_t *dptr, size_t *bytes, hipModule_t hmod,
                              const char *name) {
    HIP_INIT_API();
    if (!dptr || !bytes) HIP_RETURN(hipSuccess);
    if (!name) HIP_RETURN(hipErrorInvalidValue);
    if (!hip_registry_contains(&modules, hmod)) HIP_RETURN(hipErrorNotFound);
    for (uint32_t i = 0; i < hmod->co->num_variables; i++) {
        if (strcmp(hmod->co->variables[i].name, name) == 0) {
            *dptr = hmod->globals[i];
            *bytes = hmod->co->variables[i].size;
            HIP_RETURN(hipSuccess);
        }
    }
    HIP_RETURN(hipErrorNotFound);
}

static void attributes(const struct ihipModuleSymbol_t *f, hipFuncAttributes *a) {
    const stub_co_kernel_t *k = f->kernel;
    uint32_t lds = (uint32_t)hip_dev(f->module->device)->info->lds_size;
    memset(a, 0, sizeof *a);
    a->sharedSizeBytes = k->group_segment_fixed_size;
    a->binaryVersion = (int)f->module->co->version;
    a->localSizeBytes = k->private_segment_fixed_size;
    a->maxDynamicSharedSizeBytes = (int)(lds - k->group_segment_fixed_size);
    a->maxThreadsPerBlock = k->max_flat_workgroup_size ? (int)k->max_flat_workgroup_size : 1024;
    a->numRegs = (int)k->vgpr_count;
    a->ptxVersion = 30;   /* hipamd's constant */
}

hipError_t hipFuncGetAttribute(int *value, hipFunction_attribute attrib, hipFunction_t hfunc) {
    HIP_INIT_API();
    if (!value || !hfunc) HIP_RETURN(hipErrorInvalidValue);
    struct ihipModuleSymbol_t *f;
    HIP_RETURN_ONFAIL(hip_function_resolve(hfunc, &f));
    hipFuncAttributes a;
    attributes(f, &a);
    switch (attrib) {
    case HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = (int)a.sharedSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = a.maxThreadsPerBlock; break;
    case HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = 0; break;
    case HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = (int)a.localSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_NUM_REGS: *value = a.numRegs; break;
    case HIP_FUNC_ATTRIBUTE_PTX_VERSION: *value = a.ptxVersion; break;
    case HIP_FUNC_ATTRIBUTE_BINARY_VERSION: *value = a.binaryVersion; break;
    case HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = 0; break;
    case HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = a.maxDynamicSharedSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = 0; break;
    default: HIP_RETURN(hipErrorInvalidValue);
    }
    HIP_RETURN(hipSuccess);
}

/* hipamd looks func up among registered host functions (hipErrorInvalidSymbol
 * when unknown).  The stub registers none, so it also accepts a
 * hipFunction_t here: a stub-only convenience. */
hipError_t hipFuncGetAttributes(hipFuncAttributes *attr, const void *func) {
    HIP_INIT_API();
    if (!attr || !func) HIP_RETURN(hipErrorInvalidValue);
    struct ihipModuleSymbol_t *f;
    if (hip_function_resolve((hipFunction_t)func, &f) != hipSuccess) HIP_RETURN(hipErrorInvalidSymbol);
    attributes(f, attr);
    HIP_RETURN(hipSuccess);
}
