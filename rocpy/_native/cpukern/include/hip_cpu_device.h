/* What HIP kernels call, on the CPU (included by hip_cpu.h): built-in
 * variables, barriers, warp operations, atomics, math, printf/assert, and the
 * launch template that unpacks a kernarg buffer by the kernel's types. */
#ifndef ROCPY_HIP_CPU_DEVICE_H
#define ROCPY_HIP_CPU_DEVICE_H

#define threadIdx (::rocpy_cpu::self()->tid)
#define blockIdx (::rocpy_cpu::self()->block->bid)
#define blockDim (::rocpy_cpu::self()->block->bdim)
#define gridDim (::rocpy_cpu::self()->block->gdim)
#define warpSize ((int)::rocpy_cpu::self()->block->warp_size)
#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

inline void __syncthreads() { ::rocpy_cpu::barrier(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline unsigned __lane_id() { return ::rocpy_cpu::lane_id(); }

/* ---- warp operations (the device's wavefront width) ---------------------- */

template <class T> inline T __shfl(T v, int src, int width = warpSize) {
    const uint64_t *s = ::rocpy_cpu::warp_exchange(::rocpy_cpu::bits_of(v));
    int lane = (int)__lane_id();
    int base = lane - lane % width;
    return ::rocpy_cpu::of_bits<T>(s[base + ((src % width) + width) % width]);
}
template <class T> inline T __shfl_up(T v, unsigned delta, int width = warpSize) {
    const uint64_t *s = ::rocpy_cpu::warp_exchange(::rocpy_cpu::bits_of(v));
    int lane = (int)__lane_id(), base = lane - lane % width, src = lane - (int)delta;
    return src < base ? v : ::rocpy_cpu::of_bits<T>(s[src]);
}
template <class T> inline T __shfl_down(T v, unsigned delta, int width = warpSize) {
    const uint64_t *s = ::rocpy_cpu::warp_exchange(::rocpy_cpu::bits_of(v));
    int lane = (int)__lane_id(), base = lane - lane % width, src = lane + (int)delta;
    if (src >= base + width || src >= (int)::rocpy_cpu::warp_lanes()) return v;
    return ::rocpy_cpu::of_bits<T>(s[src]);
}
template <class T> inline T __shfl_xor(T v, int mask, int width = warpSize) {
    const uint64_t *s = ::rocpy_cpu::warp_exchange(::rocpy_cpu::bits_of(v));
    int lane = (int)__lane_id(), base = lane - lane % width, src = lane ^ mask;
    if (src >= base + width || src >= (int)::rocpy_cpu::warp_lanes()) return v;
    return ::rocpy_cpu::of_bits<T>(s[src]);
}
/* the *_sync forms (CUDA spelling, in HIP 5.x as well): the mask is not checked */
template <class M, class T> inline T __shfl_sync(M, T v, int src, int w = warpSize) { return __shfl(v, src, w); }
template <class M, class T> inline T __shfl_up_sync(M, T v, unsigned d, int w = warpSize) { return __shfl_up(v, d, w); }
template <class M, class T> inline T __shfl_down_sync(M, T v, unsigned d, int w = warpSize) { return __shfl_down(v, d, w); }
template <class M, class T> inline T __shfl_xor_sync(M, T v, int m, int w = warpSize) { return __shfl_xor(v, m, w); }

inline unsigned long long __ballot(int p) {
    const uint64_t *s = ::rocpy_cpu::warp_exchange(p != 0);
    uint64_t live = ::rocpy_cpu::live_mask(), r = 0;
    for (unsigned i = 0, n = ::rocpy_cpu::warp_lanes(); i < n; i++)
        if ((live >> i & 1) && s[i]) r |= uint64_t(1) << i;
    return r;
}
inline int __any(int p) { return __ballot(p) != 0; }
inline int __all(int p) { return __ballot(p) == ::rocpy_cpu::live_mask(); }
inline unsigned long long __activemask() { return ::rocpy_cpu::live_mask(); }
template <class M> inline unsigned long long __ballot_sync(M, int p) { return __ballot(p); }
template <class M> inline int __any_sync(M, int p) { return __any(p); }
template <class M> inline int __all_sync(M, int p) { return __all(p); }
inline void __syncwarp(unsigned long long = ~0ull) { ::rocpy_cpu::warp_exchange(0); }

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}

/* ---- atomics: 32/64-bit integers and floats ------------------------------ */

template <class T> inline T atomicAdd(T *p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return ::rocpy_cpu::cas_loop_fp(p, [v](T o) { return o + v; });
    else
        return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}
template <class T> inline T atomicSub(T *p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return ::rocpy_cpu::cas_loop_fp(p, [v](T o) { return o - v; });
    else
        return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
}
template <class T> inline T atomicExch(T *p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return ::rocpy_cpu::cas_loop_fp(p, [v](T) { return v; });
    else
        return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
}
template <class T> inline T atomicCAS(T *p, T cmp, T v) {
    static_assert(std::is_integral_v<T>, "atomicCAS takes integers");
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    return cmp;
}
template <class T> inline T atomicMin(T *p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return ::rocpy_cpu::cas_loop_fp(p, [v](T o) { return v < o ? v : o; });
    else
        return ::rocpy_cpu::cas_loop(p, [v](T o) { return v < o ? v : o; });
}
template <class T> inline T atomicMax(T *p, T v) {
    if constexpr (std::is_floating_point_v<T>)
        return ::rocpy_cpu::cas_loop_fp(p, [v](T o) { return v > o ? v : o; });
    else
        return ::rocpy_cpu::cas_loop(p, [v](T o) { return v > o ? v : o; });
}
template <class T> inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }
template <class T> inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }
template <class T> inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }
inline unsigned atomicInc(unsigned *p, unsigned lim) {
    return ::rocpy_cpu::cas_loop(p, [lim](unsigned o) { return o >= lim ? 0u : o + 1; });
}
inline unsigned atomicDec(unsigned *p, unsigned lim) {
    return ::rocpy_cpu::cas_loop(p, [lim](unsigned o) { return (o == 0 || o > lim) ? lim : o - 1; });
}

/* ---- math ---------------------------------------------------------------- */

using std::abs;
using std::ceil;
using std::floor;
using std::fabs;
using std::sqrt;
using std::exp;
using std::log;
using std::pow;
using std::sin;
using std::cos;
using std::tanh;
using std::fma;
template <class T> inline T min(T a, T b) { return b < a ? b : a; }
template <class T> inline T max(T a, T b) { return a < b ? b : a; }
inline float min(float a, int b) { return min(a, (float)b); }
inline float max(float a, int b) { return max(a, (float)b); }
inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline int __float2int_rz(float x) { return (int)x; }
inline float __int2float_rn(int x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline int __float_as_int(float x) { return ::rocpy_cpu::of_bits<int>(::rocpy_cpu::bits_of(x)); }
inline float __int_as_float(int x) { return ::rocpy_cpu::of_bits<float>(::rocpy_cpu::bits_of(x)); }
inline unsigned __float_as_uint(float x) { return ::rocpy_cpu::of_bits<unsigned>(::rocpy_cpu::bits_of(x)); }
inline float __uint_as_float(unsigned x) { return ::rocpy_cpu::of_bits<float>(::rocpy_cpu::bits_of(x)); }
inline long long __double_as_longlong(double x) { return ::rocpy_cpu::of_bits<long long>(::rocpy_cpu::bits_of(x)); }
inline double __longlong_as_double(long long x) { return ::rocpy_cpu::of_bits<double>(::rocpy_cpu::bits_of(x)); }
inline int __mul24(int x, int y) { return x * y; }
inline int __mulhi(int x, int y) { return (int)(((long long)x * y) >> 32); }
inline unsigned __umulhi(unsigned x, unsigned y) { return (unsigned)(((unsigned long long)x * y) >> 32); }

inline long long clock64() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000ll + t.tv_nsec;
}
inline long long wall_clock64() { return clock64(); }

/* ---- printf / assert ----------------------------------------------------- */

#define ROCPY_CPU_ASSERT(e, text) ((e) ? (void)0 : ::rocpy_cpu::assert_failed(text, __FILE__, __LINE__, __func__))
#undef assert
#define assert(e) ROCPY_CPU_ASSERT(e, #e)   /* include/cassert keeps it after <cassert> */

namespace rocpy_cpu {

[[noreturn]] inline void assert_failed(const char *e, const char *file, int line, const char *fn) {
    block_ctx *b = self()->block;
    /* as the device assert's message (hipamd's __assert_fail prints it) */
    std::fprintf(stderr, "%s:%d: %s: Device-side assertion `%s' failed.\n", file, line, fn, e);
    std::fflush(stderr);
    b->error = "a device-side assert failed";
    b->trap = true;
    throw kernel_exit{};
}

/* ---- the launch template: kernarg buffer -> typed arguments -------------- */

template <class T> struct kernel_traits;
template <class... A> struct kernel_traits<void (*)(A...)> {
    using args = std::tuple<std::decay_t<A>...>;
    static constexpr auto offsets = arg_offsets<std::decay_t<A>...>();
};

template <auto K> struct launcher {
    using traits = kernel_traits<decltype(K)>;
    using args_t = typename traits::args;

    static void body(void *p) {
        std::apply([](auto &...a) { K(a...); }, *static_cast<args_t *>(p));
    }

    static int run(rocpy_cpukern_launch_t *L, bool fibers) {
        constexpr size_t n = std::tuple_size_v<args_t>;
        if (L->kernarg_size < traits::offsets[n]) {
            std::snprintf(L->message, sizeof L->message,
                          "kernarg segment of %zu bytes, the kernel's arguments need %zu",
                          L->kernarg_size, traits::offsets[n]);
            return ROCPY_CPUKERN_FAILED;
        }
        args_t a = unpack_args((const unsigned char *)L->kernarg, std::make_index_sequence<n>{});
        dispatch d;
        d.L = L;
        d.bdim = dim3(L->block[0], L->block[1], L->block[2]);
        d.gdim = dim3((L->grid[0] + L->block[0] - 1) / L->block[0],
                      (L->grid[1] + L->block[1] - 1) / L->block[1],
                      (L->grid[2] + L->block[2] - 1) / L->block[2]);
        d.blocks = (uint64_t)d.gdim.x * d.gdim.y * d.gdim.z;
        d.body = &body;
        d.args = &a;
        d.fibers = fibers;
        install_fault_handler();
        unsigned workers = (unsigned)std::min<uint64_t>(L->workers ? L->workers : 1, d.blocks);
        std::vector<std::thread> pool;
        for (unsigned i = 1; i < workers; i++) pool.emplace_back(worker, &d);
        worker(&d);
        for (auto &t : pool) t.join();
        std::fflush(stdout);
        return d.status.load();
    }

    template <size_t... I>
    static args_t unpack_args(const unsigned char *k, std::index_sequence<I...>) {
        args_t t;
        ((std::memcpy(&std::get<I>(t), k + traits::offsets[I], sizeof(std::get<I>(t)))), ...);
        return t;
    }
};

}  // namespace rocpy_cpu

/* the driver lists the kernels: ROCPY_CPU_KERNEL(name, uses_fibers) */
#define ROCPY_CPU_KERNEL(k, fibers)                                                           \
    {#k, (const void *)&k,                                                                    \
     [](rocpy_cpukern_launch_t *L) { return ::rocpy_cpu::launcher<&k>::run(L, fibers); }}

#endif
