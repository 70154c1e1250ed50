/* Libraries (headers of 7.2; clr hipamd/src/hip_library.cpp in rocm-systems
 * 2025: hip::LibraryContainer): a code object loaded lazily as a module.
 *
 * hipLibraryLoadData / LoadFromFile only record the image or the file name
 * (no JIT options: numJitOptions > 0 is hipErrorInvalidValue; library
 * options are not read); the first query builds it (BuildIt:
 * DynCO::loadCodeObject on the current device), so bytes that are no code
 * object load "successfully" and fail the first query with the module
 * loader's status.  A kernel is the module's hipFunction_t
 * (reinterpret_cast in hipamd), registered to its library when
 * hipLibraryGetKernel or hipLibraryEnumerateKernels returns it; only
 * registered kernels have a library and a name (hipKernelGetLibrary /
 * GetName: hipErrorInvalidHandle otherwise).  hipLibraryUnload unloads the
 * module: its kernels become invalid handles.
 *
 * Handles the stub did not make: hipamd casts and dereferences them; the
 * stub answers the status it gives a null one. */
#include <stdio.h>
#include <string.h>

#include "hip_fatbin.h"
#include "hip_internal.h"
#include "stub_codeobject.h"

#if defined(ROCPY_HAVE_hipLibraryLoadData) && defined(ROCPY_HAVE_hipLibraryUnload)
#define HIP_MAGIC_LIBRARY 0x4c494252u

struct ihipLibrary_t {
    uint32_t magic;
    pthread_mutex_t lock;
    const void *image;                /* hipLibraryLoadData: the caller's bytes */
    char *filename;                   /* hipLibraryLoadFromFile */
    bool built;
    hipModule_t module;
    hip_ptrvec_t kernels;             /* registered: returned by GetKernel/Enumerate */
};

static hip_registry_t libraries = HIP_REGISTRY_INIT;

static bool valid(hipLibrary_t l) { return l && hip_registry_contains(&libraries, l); }

static hipError_t read_file(const char *name, unsigned char **out, size_t *size) {
    FILE *f = fopen(name, "rb");
    if (!f) return hipErrorFileNotFound;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
    unsigned char *buf = n > 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n) : NULL;
    bool ok = buf && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(buf);
        return n == 0 ? hipErrorInvalidKernelFile : hipErrorFileNotFound;
    }
    *out = buf;
    *size = (size_t)n;
    return hipSuccess;
}

/* LibraryContainer::BuildIt: once, on the current device */
static hipError_t build(hipLibrary_t l) {
    pthread_mutex_lock(&l->lock);
    hipError_t status = hipSuccess;
    if (!l->built) {
        int device = hip_current_dev()->id;
        if (l->filename) {
            unsigned char *buf = NULL;
            size_t size = 0;
            status = read_file(l->filename, &buf, &size);
            if (status == hipSuccess) status = hip_module_load_sized(&l->module, buf, size, device);
            free(buf);
        } else {
            status = hip_module_load_image(&l->module, l->image, device);
        }
        l->built = status == hipSuccess;
    }
    pthread_mutex_unlock(&l->lock);
    return status;
}

static bool registered(hipLibrary_t l, hipKernel_t k) {
    return hip_ptrvec_contains(&l->kernels, k);
}

/* LibraryContainer::Register */
static hipError_t register_kernel(hipLibrary_t l, hipFunction_t f) {
    pthread_mutex_lock(&l->lock);
    bool ok = registered(l, (hipKernel_t)f) || hip_ptrvec_push(&l->kernels, f);
    pthread_mutex_unlock(&l->lock);
    return ok ? hipSuccess : hipErrorOutOfMemory;
}

static hipError_t create(hipLibrary_t *library, const void *image, const char *filename) {
    hipLibrary_t l = calloc(1, sizeof *l);
    if (!l) return hipErrorOutOfMemory;
    l->magic = HIP_MAGIC_LIBRARY;
    pthread_mutex_init(&l->lock, NULL);
    l->image = image;
    if (filename && !(l->filename = strdup(filename))) {
        free(l);
        return hipErrorOutOfMemory;
    }
    if (!hip_registry_add(&libraries, l)) {
        free(l->filename);
        free(l);
        return hipErrorOutOfMemory;
    }
    *library = l;
    return hipSuccess;
}

hipError_t hipLibraryLoadData(hipLibrary_t *library, const void *code, hipJitOption *jitOptions,
                              void **jitOptionsValues, unsigned int numJitOptions,
                              hipLibraryOption *libraryOptions, void **libraryOptionValues,
                              unsigned int numLibraryOptions) {
    (void)jitOptions, (void)jitOptionsValues, (void)libraryOptions, (void)libraryOptionValues;
    (void)numLibraryOptions;
    HIP_INIT_API();
    if (!library || !code) HIP_RETURN(hipErrorInvalidValue);
    if (numJitOptions > 0) HIP_RETURN(hipErrorInvalidValue);   /* "We do not support JIT options" */
    HIP_RETURN(create(library, code, NULL));
}

#ifdef ROCPY_HAVE_hipLibraryLoadFromFile
/* library null, no such file (std::filesystem::exists; a null name, which
 * hipamd would crash on, the same) or JIT options: hipErrorInvalidValue */
hipError_t hipLibraryLoadFromFile(hipLibrary_t *library, const char *fileName,
                                  hipJitOption *jitOptions, void **jitOptionsValues,
                                  unsigned int numJitOptions, hipLibraryOption *libraryOptions,
                                  void **libraryOptionValues, unsigned int numLibraryOptions) {
    (void)jitOptions, (void)jitOptionsValues, (void)libraryOptions, (void)libraryOptionValues;
    (void)numLibraryOptions;
    HIP_INIT_API();
    FILE *f = fileName ? fopen(fileName, "rb") : NULL;
    if (f) fclose(f);
    if (!library || !f || numJitOptions > 0) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(create(library, NULL, fileName));
}
#endif

hipError_t hipLibraryUnload(hipLibrary_t library) {
    HIP_INIT_API();
    if (!library || !hip_registry_remove(&libraries, library)) HIP_RETURN(hipErrorInvalidResourceHandle);
    if (library->module) hip_module_unload_image(library->module);
    hip_ptrvec_free(&library->kernels);
    pthread_mutex_destroy(&library->lock);
    free(library->filename);
    library->magic = 0;
    free(library);
    HIP_RETURN(hipSuccess);
}

#ifdef ROCPY_HAVE_hipLibraryGetKernelCount
hipError_t hipLibraryGetKernelCount(unsigned int *count, hipLibrary_t library) {
    HIP_INIT_API();
    if (!valid(library) || !count) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(build(library));
    *count = hip_module_function_count(library->module);
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipLibraryGetKernel
/* an unknown or empty name: DynCO::getDynFunc's hipErrorNotFound */
hipError_t hipLibraryGetKernel(hipKernel_t *pKernel, hipLibrary_t library, const char *name) {
    HIP_INIT_API();
    if (!valid(library) || !name || !pKernel) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(build(library));
    hipFunction_t f;
    HIP_RETURN_ONFAIL(hip_module_function(library->module, name, &f));
    HIP_RETURN_ONFAIL(register_kernel(library, f));
    *pKernel = (hipKernel_t)f;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipLibraryEnumerateKernels
/* the first min(numKernels, count) kernels, in the code object's order */
hipError_t hipLibraryEnumerateKernels(hipKernel_t *kernels, unsigned int numKernels,
                                      hipLibrary_t library) {
    HIP_INIT_API();
    if (!kernels || !valid(library)) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN_ONFAIL(build(library));
    uint32_t n = hip_module_function_count(library->module);
    for (uint32_t i = 0; i < n && i < numKernels; i++) {
        hipFunction_t f = hip_module_function_at(library->module, i);
        HIP_RETURN_ONFAIL(register_kernel(library, f));
        kernels[i] = (hipKernel_t)f;
    }
    HIP_RETURN(hipSuccess);
}
#endif

/* PlatformState::GetFunctionLibrary: the library a kernel was registered to */
struct owner_query { hipKernel_t kernel; hipLibrary_t found; };

static void find_owner(void *h, void *ctx) {
    struct owner_query *q = ctx;
    hipLibrary_t l = h;
    pthread_mutex_lock(&l->lock);
    if (!q->found && registered(l, q->kernel)) q->found = l;
    pthread_mutex_unlock(&l->lock);
}

static hipLibrary_t owner(hipKernel_t kernel) {
    struct owner_query q = {kernel, NULL};
    hip_registry_foreach(&libraries, find_owner, &q);
    return q.found;
}

#ifdef ROCPY_HAVE_hipKernelGetLibrary
hipError_t hipKernelGetLibrary(hipLibrary_t *library, hipKernel_t kernel) {
    HIP_INIT_API();
    if (!library || !kernel) HIP_RETURN(hipErrorInvalidValue);
    hipLibrary_t l = owner(kernel);
    if (!l) HIP_RETURN(hipErrorInvalidHandle);
    *library = l;
    HIP_RETURN(hipSuccess);
}
#endif

#ifdef ROCPY_HAVE_hipKernelGetName
/* the kernel's name as the code object spells it (LibraryContainer's key:
 * the name it was looked up by) */
hipError_t hipKernelGetName(const char **name, hipKernel_t kernel) {
    HIP_INIT_API();
    if (!name || !kernel) HIP_RETURN(hipErrorInvalidValue);
    if (!owner(kernel)) HIP_RETURN(hipErrorInvalidHandle);
    struct ihipModuleSymbol_t *sym;
    HIP_RETURN_ONFAIL(hip_function_resolve((hipFunction_t)kernel, &sym));
    *name = sym->kernel->name;
    HIP_RETURN(hipSuccess);
}
#endif
#endif
