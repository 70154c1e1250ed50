/* rocpy_stub.h: kernel emulations in C for programs that run on rocpy's stub
 * runtime (its drop-in libhsa-runtime64 / libamdhip64: `rocpy stub run --
 * PROGRAM`).  Installed with rocpy: `python3 -c "import rocpy.stub.dropin as
 * d; print(d.include_dir())"`.  See docs/testing.md.
 *
 * The stub runs no GPU code: a kernel runs as an emulation, a host function
 * that performs the whole dispatch.  Register one per kernel symbol name (the
 * mangled name for C++ kernels, as `rocpy inspect` or `llvm-nm` shows it):
 *
 *     static int my_scale(const rocpy_stub_dispatch_t *d, void *user) {
 *         float *p; unsigned n;                          // the kernel's arguments,
 *         memcpy(&p, (char *)d->kernarg + 0, 8);         // at their metadata offsets
 *         memcpy(&n, (char *)d->kernarg + 8, 4);
 *         for (unsigned i = 0; i < n && i < d->grid[0]; i++) p[i] *= 2;
 *         return 0;                                      // non-zero: the launch failed
 *     }
 *     ...
 *     rocpy_stub_register_emulation("scale", my_scale, NULL);
 *
 * The header needs nothing at link time: on the real ROCm libraries (no
 * stub) registration returns -1 and the program's kernels run on the GPU.
 */
#ifndef ROCPY_STUB_H
#define ROCPY_STUB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One kernel dispatch, as its emulation sees it. */
typedef struct rocpy_stub_dispatch {
    const char *name;          /* kernel symbol name, without ".kd" */
    void *kernarg;             /* packed arguments (kernarg segment) */
    size_t kernarg_size;
    uint32_t grid[3];          /* total work-items per dimension */
    uint32_t block[3];         /* work-group size per dimension */
    uint32_t group_segment_size;   /* static + dynamic LDS bytes */
    int device;
} rocpy_stub_dispatch_t;

/* An emulation: run the whole dispatch; return 0 on success, non-zero for a
 * failed launch (reported by the runtime that launched it). */
typedef int (*rocpy_stub_kernel_fn)(const rocpy_stub_dispatch_t *dispatch, void *user);

#ifndef ROCPY_STUB_INTERNAL
#include <dlfcn.h>

/* Register (fn != NULL) or remove (fn == NULL) the emulation of kernel
 * `name`: 0, or -1 when the program does not run on the stub. */
static inline int rocpy_stub_register_emulation(const char *name, rocpy_stub_kernel_fn fn,
                                                void *user) {
    typedef int (*reg_t)(const char *, rocpy_stub_kernel_fn, void *);
    reg_t reg = (reg_t)dlsym(RTLD_DEFAULT, "rocpy_stub_register_kernel");
    return reg ? reg(name, fn, user) : -1;
}

/* Whether the program runs on the stub (its drop-in libraries are loaded). */
static inline int rocpy_stub_present(void) {
    return dlsym(RTLD_DEFAULT, "rocpy_stub_register_kernel") != NULL;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
