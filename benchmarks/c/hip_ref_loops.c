/* hip_ref.c's loops as a shared library, so that `rocpy bench --compare` times them as
 * one more variant ("C") of its launch and small-copy cases, interleaved with rocpy, raw
 * cffi and the peers in the same process and rounds.  hip_ref, a separate program run
 * once after the bench, gave C's empty-launch enqueue 0.2 us to 1.2 us below raw cffi's
 * in three H200 runs of one day (2026-12-03): what the host did at each moment, not what
 * the binding costs.  Loaded by rocpy/bench/c_reference.py `c_loops`; built by
 * benchmarks/c/hip_ref.sh (nvidia).
 *
 *   int ref_open(const char *kernel_file)  load `empty` and `vadd`, make the stream
 *   int ref_launch(int n)                  n launches of `empty` (extra NULL)
 *   int ref_launch_extra0(int n)           n launches of `empty` passing `extra` with a
 *                                          0-byte argument buffer, as rocpy passes it:
 *                                          what that costs against NULL
 *   int ref_launch4(int n)                 n launches of `vadd(a, b, c, 1)`, its
 *                                          arguments packed once into one buffer
 *   int ref_copy(void *dst, const void *src, size_t size, int kind, int ops)
 *                                          ops hipMemcpyAsync on that stream, then one
 *                                          hipStreamSynchronize: rocpy bench's copy cases
 *   int ref_copy_on(..., int ops, void *stream)  the same on another stream (rocpy's)
 *   int ref_copy_between(..., int ops, void *stream, long gap_ns, long touch_bytes)
 *                                          the same with the CPU busy after each copy:
 *                                          touching touch_bytes of a 1 MiB buffer (a line
 *                                          each, as an interpreter's work evicts cache)
 *                                          and spinning until gap_ns have passed
 *                                          (floor.py: whether a caller that slow, or that
 *                                          untidy, makes the runtime's part slower)
 *   long long ref_between_ns(void)         the time spent between copies since the last
 *                                          call (then zero): what floor.py takes off
 *   int ref_copy_through(void *fn, ..., int ops, void *stream)  the same with fn (a
 *                                          cudaMemcpyAsync of some CUDA runtime, whose
 *                                          signature HIP's NVIDIA platform shares) in
 *                                          place of hipMemcpyAsync: which runtime is the
 *                                          faster one, in one process (floor.py)
 *   int ref_sync(void)                     hipStreamSynchronize of that stream
 *   hipError_t ref_nop_launch(...)         hipModuleLaunchKernel's signature, does nothing:
 *                                          a runtime function that costs nothing, for
 *                                          benchmarks/device/floor.py
 *   int ref_nop(void)                      does nothing: floor.py calls it through
 *                                          ctypes with the GIL released and held, which
 *                                          prices the release
 * Each returns the first failing call's hipError_t, or 0.  The caller times the calls;
 * a loop's own overhead is one ctypes call per n launches (ops copies).
 */
#define _POSIX_C_SOURCE 199309L   /* clock_gettime */
#include <stddef.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

static hipModule_t module;
static hipFunction_t empty, vadd;
static hipStream_t stream;
static void *bufs[3];
static struct { void *a, *b, *c; int n; } args;
static size_t args_size = 28;   /* 3 pointers and an int, no tail padding */
static size_t no_args_size = 0;
static void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                        &args_size, HIP_LAUNCH_PARAM_END};
static void *extra0[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &args, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                         &no_args_size, HIP_LAUNCH_PARAM_END};

int ref_open(const char *kernel_file)
{
    hipError_t e;
    if ((e = hipSetDevice(0)) || (e = hipFree(NULL)) ||
        (e = hipModuleLoad(&module, kernel_file)) ||
        (e = hipModuleGetFunction(&empty, module, "empty")) ||
        (e = hipModuleGetFunction(&vadd, module, "vadd")) ||
        (e = hipStreamCreateWithFlags(&stream, hipStreamNonBlocking)))
        return (int)e;
    for (int i = 0; i < 3; i++)
        if ((e = hipMalloc(&bufs[i], 4)))
            return (int)e;
    args.a = bufs[0];
    args.b = bufs[1];
    args.c = bufs[2];
    args.n = 1;
    return 0;
}

static int launches(hipFunction_t f, void **kernel_extra, int n)
{
    for (int i = 0; i < n; i++) {
        hipError_t e = hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, NULL,
                                             kernel_extra);
        if (e)
            return (int)e;
    }
    return 0;
}

int ref_launch(int n)
{
    return launches(empty, NULL, n);
}

int ref_launch_extra0(int n)
{
    return launches(empty, extra0, n);
}

int ref_launch4(int n)
{
    return launches(vadd, extra, n);
}

static int copies(void *dst, const void *src, size_t size, int kind, int ops, hipStream_t on)
{
    for (int i = 0; i < ops; i++) {
        hipError_t e = hipMemcpyAsync(dst, src, size, (hipMemcpyKind)kind, on);
        if (e)
            return (int)e;
    }
    return (int)hipStreamSynchronize(on);
}

int ref_copy(void *dst, const void *src, size_t size, int kind, int ops)
{
    return copies(dst, src, size, kind, ops, stream);
}

int ref_copy_on(void *dst, const void *src, size_t size, int kind, int ops, void *on)
{
    return copies(dst, src, size, kind, ops, (hipStream_t)on);
}

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static volatile unsigned char scratch[1 << 20];
static long long between_ns;

int ref_copy_between(void *dst, const void *src, size_t size, int kind, int ops, void *on,
                     long gap_ns, long touch_bytes)
{
    for (int i = 0; i < ops; i++) {
        hipError_t e = hipMemcpyAsync(dst, src, size, (hipMemcpyKind)kind, (hipStream_t)on);
        if (e)
            return (int)e;
        long long t0 = now_ns();
        for (long b = 0; b < touch_bytes && b < (long)sizeof scratch; b += 64)
            scratch[b]++;
        while (now_ns() < t0 + gap_ns)
            ;
        between_ns += now_ns() - t0;
    }
    return (int)hipStreamSynchronize((hipStream_t)on);
}

long long ref_between_ns(void)
{
    long long t = between_ns;
    between_ns = 0;
    return t;
}

typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);

int ref_copy_through(void *fn, void *dst, const void *src, size_t size, int kind, int ops,
                     void *on)
{
    memcpy_async_fn copy = (memcpy_async_fn)fn;
    for (int i = 0; i < ops; i++) {
        int e = copy(dst, src, size, kind, on);
        if (e)
            return e;
    }
    return (int)hipStreamSynchronize((hipStream_t)on);
}

int ref_sync(void)
{
    return (int)hipStreamSynchronize(stream);
}

hipError_t ref_nop_launch(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                          unsigned by, unsigned bz, unsigned shared, hipStream_t s,
                          void **params, void **kernel_extra)
{
    (void)f, (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)s,
        (void)params, (void)kernel_extra;
    return hipSuccess;
}

int ref_nop(void)
{
    return 0;
}
