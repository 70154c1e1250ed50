/* Fat-binary registration (hipamd hip_platform.cpp __hipRegisterFatBinary,
 * __hipRegisterFunction, __hipRegisterVar, __hipRegisterManagedVar,
 * __hipUnregisterFatBinary; hip_fatbin.cpp, PlatformState/StatCO at
 * rocm-5.2.3).
 *
 * hipcc's generated constructor registers the program's offload bundle
 * (`__CudaFatBinaryWrapper`: magic "HIPF", version 1, the bundle), then
 * each kernel's host stub with its device name, each __device__ /
 * __constant__ variable with its name and size; its destructor unregisters.
 * As in hipamd the code object is loaded per device at first use (a launch,
 * a symbol copy), through the stub's module loader, so a bundle without a
 * code object for the device gives that use hipErrorNoBinaryForGpu (ROCm/clr;
 * 5.2 aborted at start).  Managed variables are allocated and initialised at
 * registration, as ihipMallocManaged + memcpy in __hipRegisterManagedVar.
 *
 * Kernels run as every stub kernel does (stub_kernel.c's lookup order):
 * registration gives them a name and a launch path, not a way to execute;
 * the CPU build their module runs is the one beside the program
 * (stub_cpukern_program_build: hipcc's bundle carries none). */
#include <stdio.h>
#include <string.h>

#include "hip_fatbin.h"
#include "hip_symbol.h"

#define HIP_FAT_MAGIC 0x48495046u   /* "HIPF": __hipFatMAGIC2 */

typedef struct fatbin_wrapper {     /* __CudaFatBinaryWrapper */
    unsigned int magic;
    unsigned int version;
    const void *binary;
    void *dummy;
} fatbin_wrapper_t;

typedef struct fatbin {
    const void *image;
    hipModule_t modules[STUB_MAX_DEVICES];
    hipError_t status[STUB_MAX_DEVICES];     /* hipSuccess: not tried or loaded */
    struct fatbin *next;
} fatbin_t;

typedef struct reg {                /* a function or a variable */
    const void *host;
    char *name;
    fatbin_t *fb;
    size_t size;                    /* variables */
    void *managed;                  /* managed variables: their one allocation */
    struct reg *next;
} reg_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static fatbin_t *fatbins;
static reg_t *functions, *variables;

/* hipamd returns a FatBinaryInfo** that hipcc's code passes back */
void **__hipRegisterFatBinary(const void *data) {
    const fatbin_wrapper_t *w = data;
    if (!w || w->magic != HIP_FAT_MAGIC || w->version != 1) {
        fprintf(stderr, "rocpy stub: __hipRegisterFatBinary: Cannot Register fat binary. "
                        "FatMagic: %u version: %u\n", w ? w->magic : 0, w ? w->version : 0);
        return NULL;
    }
    fatbin_t *fb = calloc(1, sizeof *fb);
    if (!fb) stub_abort("__hipRegisterFatBinary", "out of memory");
    fb->image = w->binary;
    pthread_mutex_lock(&lock);
    fb->next = fatbins;
    fatbins = fb;
    pthread_mutex_unlock(&lock);
    return (void **)fb;
}

static void add(reg_t **list, void **modules, const void *host, const char *name, size_t size,
                void *managed) {
    reg_t *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(name ? name : ""))) stub_abort("__hipRegister", "out of memory");
    r->host = host;
    r->fb = (fatbin_t *)modules;
    r->size = size;
    r->managed = managed;
    pthread_mutex_lock(&lock);
    r->next = *list;
    *list = r;
    pthread_mutex_unlock(&lock);
}

void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                           const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                           dim3 *blockDim, dim3 *gridDim, int *wSize) {
    (void)deviceFunction, (void)threadLimit, (void)tid, (void)bid, (void)blockDim, (void)gridDim,
        (void)wSize;
    if (!modules) return;     /* the fat binary was refused */
    add(&functions, modules, hostFunction, deviceName, 0, NULL);
}

void __hipRegisterVar(void **modules, void *var, char *hostVar, char *deviceVar, int ext,
                      size_t size, int constant, int global) {
    (void)hostVar, (void)ext, (void)constant, (void)global;
    if (!modules) return;
    add(&variables, modules, var, deviceVar, size, NULL);
}

void __hipRegisterManagedVar(void *hipModule, void **pointer, void *init_value, const char *name,
                             size_t size, unsigned align) {
    void *ptr = NULL;
    if (stub_mem_alloc(size ? size : 1, align ? align : 256, STUB_MEM_MANAGED, 0, 0, &ptr) != 0)
        stub_abort("__hipRegisterManagedVar", "cannot allocate %zu bytes for %s", size, name);
    if (init_value && size) memcpy(ptr, init_value, size);
    *pointer = ptr;
    add(&variables, hipModule, pointer, name, size, ptr);
}

void __hipRegisterSurface(void **modules, void *var, char *hostVar, char *deviceVar, int type,
                          int ext) {
    (void)modules, (void)var, (void)hostVar, (void)deviceVar, (void)type, (void)ext;
}

void __hipRegisterTexture(void **modules, void *var, char *hostVar, char *deviceVar, int type,
                          int norm, int ext) {
    (void)modules, (void)var, (void)hostVar, (void)deviceVar, (void)type, (void)norm, (void)ext;
}

static void drop(reg_t **list, const fatbin_t *fb) {
    for (reg_t **r = list; *r;) {
        if ((*r)->fb != fb) {
            r = &(*r)->next;
            continue;
        }
        reg_t *dead = *r;
        *r = dead->next;
        if (dead->managed) stub_mem_release(dead->managed, STUB_MEM_MANAGED, NULL);
        free(dead->name);
        free(dead);
    }
}

void __hipUnregisterFatBinary(void **modules) {
    fatbin_t *fb = (fatbin_t *)modules;
    if (!fb) return;
    pthread_mutex_lock(&lock);
    for (fatbin_t **p = &fatbins; *p; p = &(*p)->next)
        if (*p == fb) {
            *p = fb->next;
            break;
        }
    drop(&functions, fb);
    drop(&variables, fb);
    pthread_mutex_unlock(&lock);
    for (int d = 0; d < STUB_MAX_DEVICES; d++) hip_module_unload_image(fb->modules[d]);
    free(fb);
}

/* the fat binary's module for `device`, loaded once (lock held) */
static hipError_t module_for(fatbin_t *fb, int device, hipModule_t *out) {
    if (device < 0 || device >= STUB_MAX_DEVICES || !hip_dev(device)) return hipErrorInvalidDevice;
    if (!fb->modules[device] && fb->status[device] == hipSuccess) {
        fb->status[device] = hip_module_load_image(&fb->modules[device], fb->image, device);
        /* hipcc's bundle has no CPU build: the one beside the program, if any */
        if (fb->status[device] == hipSuccess)
            hip_module_adopt_cpu_build(fb->modules[device], stub_cpukern_program_build());
    }
    *out = fb->modules[device];
    return fb->status[device];
}

static reg_t *find(reg_t *list, const void *host) {
    while (list && list->host != host) list = list->next;
    return list;
}

hipError_t hip_fatbin_function(const void *host, int device, hipFunction_t *out) {
    pthread_mutex_lock(&lock);
    reg_t *r = host ? find(functions, host) : NULL;
    hipModule_t m = NULL;
    hipError_t status = r ? module_for(r->fb, device, &m) : hipErrorInvalidDeviceFunction;
    if (status == hipSuccess) status = hip_module_function(m, r->name, out);
    pthread_mutex_unlock(&lock);
    return status == hipErrorNotFound ? hipErrorInvalidDeviceFunction : status;
}

const char *hip_fatbin_function_name(const void *host) {
    pthread_mutex_lock(&lock);
    reg_t *r = host ? find(functions, host) : NULL;
    const char *name = r ? r->name : NULL;
    pthread_mutex_unlock(&lock);
    return name;
}

hipError_t hip_fatbin_variable(const void *host, int device, void **ptr, size_t *size) {
    pthread_mutex_lock(&lock);
    reg_t *r = host ? find(variables, host) : NULL;
    hipError_t status = r ? hipSuccess : hipErrorInvalidSymbol;
    if (r && r->managed) {
        *ptr = r->managed;
        *size = r->size;
    } else if (r) {
        hipModule_t m = NULL;
        status = module_for(r->fb, device, &m);
        if (status == hipSuccess && hip_module_global(m, r->name, ptr, size) != hipSuccess)
            status = hipErrorInvalidSymbol;
    }
    pthread_mutex_unlock(&lock);
    return status;
}
