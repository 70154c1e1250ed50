/* HIP's device names with their CPU meaning: rocpy.cpukern compiles a HIP
 * kernel source with this header (g++/c++, -std=c++17 -O2 -fPIC -shared) into
 * a CPU build the stub runs (rocpy_cpukern.h is the ABI).
 *
 * A block runs on one host thread; its work-items are fibers (a hand-written
 * x86-64 context switch; ucontext elsewhere) that interleave at
 * __syncthreads() and warp operations.  Blocks are spread over worker
 * threads.  Kernels of a source without any barrier or warp operation run
 * their work-items as a plain loop (ROCPY_CPU_NO_FIBERS, set by the driver).
 * __shared__ variables are thread_local: one block runs on a worker thread at
 * a time and fibers never leave it, so that is one copy per block. */
#ifndef ROCPY_HIP_CPU_H
#define ROCPY_HIP_CPU_H

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <csetjmp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <sys/mman.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include "rocpy_cpukern.h"

#define __global__ __attribute__((used, visibility("default")))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __constant__
#define __managed__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static thread_local
#define HIP_DYNAMIC_SHARED(type, var) type *var = (type *)::rocpy_cpu::dynamic_shared();
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __HIPCC_RTC__ 1
#define ROCPY_CPU_BUILD 1

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 { unsigned x, y, z; };

namespace rocpy_cpu {

/* ---- one dispatch, one block, one work-item ------------------------------ */

enum item_state { READY, AT_BARRIER, AT_WARP, DONE };

struct block_ctx;

struct item {
    uint3 tid;
    unsigned linear;           /* index in the block */
    item_state state;
    unsigned wgen;             /* warp operations done: picks the exchange buffer */
    void *sp;                  /* saved stack pointer (x86-64) */
#if !defined(__x86_64__)
    ucontext_t uc;
#endif
    block_ctx *block;
};

struct block_ctx {
    uint3 bid;
    dim3 bdim, gdim;
    unsigned warp_size, size;
    item *items;
    void *sched_sp;
#if !defined(__x86_64__)
    ucontext_t sched_uc;
#endif
    void (*body)(void *args);
    void *args;
    unsigned char *dynamic_shared;
    /* warp exchange: one value per work-item, double-buffered: a lane can
     * reach op k+2 (the buffer of op k) only after all its warp reached k+1,
     * that is, read the values of op k */
    uint64_t *slots[2];
    const char *error;         /* a failure (assert, barrier) */
    bool trap;                 /* the failure is a trap (a device assert): the GPU's queue error */
    bool fibers;               /* false: work-items run as a plain loop */
};

/* Kernel code runs only on fiber stacks, each STACK-aligned with the running
 * work-item's pointer at its base: threadIdx is a mask of the stack pointer
 * and one load.  (Not thread_local: initial-exec TLS in a dlopen'ed object
 * fails once glibc's static TLS surplus is spent, and the general model
 * costs a call per access.) */
constexpr size_t STACK = 128 * 1024;
constexpr size_t GUARD = 4096;

inline item *&slot_of(unsigned char *stack) { return *reinterpret_cast<item **>(stack + GUARD); }

__attribute__((always_inline)) inline item *self() {
    uintptr_t sp;
#if defined(__x86_64__)
    asm("movq %%rsp, %0" : "=r"(sp));
#else
    sp = (uintptr_t)__builtin_frame_address(0);
#endif
    return *reinterpret_cast<item **>((sp & ~(uintptr_t)(STACK - 1)) + GUARD);
}

inline void *dynamic_shared() { return self()->block->dynamic_shared; }

/* ---- context switch ------------------------------------------------------ */

/* The callee-saved registers only: MXCSR and the x87 control word are the
 * same in every fiber of a launch (kernels do not change rounding modes),
 * and ldmxcsr/fldcw cost more than the rest of the switch.
 * Weak: every separately compiled unit (-fgpu-rdc, rocpy.cpukern.compile_unit)
 * carries the same two, and the link keeps one. */

#if defined(__x86_64__)
extern "C" void rocpy_cpu_swap(void **save_sp, void *load_sp);
extern "C" void rocpy_cpu_fiber_start(void);
asm(R"(
    .text
    .p2align 4
    .weak rocpy_cpu_swap
    .hidden rocpy_cpu_swap
    .type rocpy_cpu_swap,@function
rocpy_cpu_swap:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size rocpy_cpu_swap, .-rocpy_cpu_swap

    .p2align 4
    .weak rocpy_cpu_fiber_start
    .hidden rocpy_cpu_fiber_start
    .type rocpy_cpu_fiber_start,@function
rocpy_cpu_fiber_start:
    movq %r12, %rdi
    callq *%r13
    ud2
    .size rocpy_cpu_fiber_start, .-rocpy_cpu_fiber_start
)");
#endif

void fiber_main(item *it);

/* A work-item that waits (or ends) passes control straight to the next
 * ready work-item of its block, the last one back to the scheduler: one
 * switch per work-item per barrier. */
inline void to_scheduler(item *it) {
    block_ctx *b = it->block;
    item *next = nullptr;
    for (item *n = it + 1, *end = b->items + b->size; n < end; n++)
        if (n->state == READY) {
            next = n;
            break;
        }
#if defined(__x86_64__)
    rocpy_cpu_swap(&it->sp, next ? next->sp : b->sched_sp);
#else
    swapcontext(&it->uc, next ? &next->uc : &b->sched_uc);
#endif
}

inline void resume(block_ctx *b, item *it) {
#if defined(__x86_64__)
    rocpy_cpu_swap(&b->sched_sp, it->sp);
#else
    swapcontext(&b->sched_uc, &it->uc);
#endif
}

/* Fiber stacks of one worker, kept from block to block: STACK-aligned, a
 * guard page at the base (an overflow faults, not corrupts), the slot of the
 * work-item's pointer just above it. */
struct stacks {
    std::vector<unsigned char *> mem;
    ~stacks() {
        for (auto *m : mem) munmap(m, STACK);
    }
    unsigned char *get(size_t i) {
        while (mem.size() <= i) {
            void *m = mmap(nullptr, 2 * STACK, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m == MAP_FAILED) return nullptr;
            uintptr_t lo = (uintptr_t)m, base = (lo + STACK - 1) & ~(uintptr_t)(STACK - 1);
            if (base > lo) munmap(m, base - lo);
            if (lo + 2 * STACK > base + STACK) munmap((void *)(base + STACK), lo + 2 * STACK - base - STACK);
            mprotect((void *)base, GUARD, PROT_NONE);
            mem.push_back((unsigned char *)base);
        }
        return mem[i];
    }
};

/* Where work-item i's stack starts below the top: STACK-aligned tops share
 * one cache set, and every switch would miss; staggered by 17 lines apiece
 * they spread over 512 sets (at most 32 KiB of the stack). */
inline size_t stagger(unsigned i) { return (size_t)(i * 64u * 17u) % (32 * 1024); }

inline bool prepare(item *it, unsigned char *stack) {
    if (!stack) return false;
    slot_of(stack) = it;
#if defined(__x86_64__)
    uintptr_t top = ((uintptr_t)(stack + STACK - stagger(it->linear))) & ~(uintptr_t)15;
    void **sp = (void **)top;
    /* after the pops and ret, rsp == top (16-aligned): the call in
     * rocpy_cpu_fiber_start enters fiber_main with rsp % 16 == 8, as the ABI wants */
    *--sp = (void *)&rocpy_cpu_fiber_start;    /* ret target */
    *--sp = nullptr;                           /* rbp */
    *--sp = nullptr;                           /* rbx */
    *--sp = (void *)it;                        /* r12: argument */
    *--sp = (void *)&fiber_main;               /* r13: function */
    *--sp = nullptr;                           /* r14 */
    *--sp = nullptr;                           /* r15 */
    it->sp = sp;
#else
    getcontext(&it->uc);
    it->uc.uc_stack.ss_sp = stack + GUARD + 64;
    it->uc.uc_stack.ss_size = STACK - GUARD - 64;
    it->uc.uc_link = nullptr;
    makecontext(&it->uc, (void (*)())fiber_main, 1, it);
#endif
    return true;
}

struct kernel_exit {};   /* thrown by a failed assert: ends the work-item */

inline void fiber_main(item *it) {
    block_ctx *b = it->block;
    if (b->fibers) {
        try {
            b->body(b->args);
        } catch (kernel_exit &) {
        }
    } else {
        /* no barrier or warp op: one fiber runs the block's work-items as a loop */
        item *&slot = slot_of((unsigned char *)(((uintptr_t)__builtin_frame_address(0)) &
                                                ~(uintptr_t)(STACK - 1)));
        for (unsigned i = 0; i < b->size && !b->error; i++) {
            slot = &b->items[i];
            try {
                b->body(b->args);
            } catch (kernel_exit &) {
            }
        }
        slot = it;
    }
    it->state = DONE;
    to_scheduler(it);
    __builtin_trap();     /* a finished fiber is never resumed */
}

/* Runs one block's fibers until all are done; an error if the block cannot
 * go on (a barrier only part of it reached, or warps waiting on each other). */
inline const char *run_fibers(block_ctx *b, stacks &st) {
    for (unsigned i = 0; i < b->size; i++) {
        item *it = &b->items[i];
        it->state = b->fibers || i == 0 ? READY : DONE;
        it->wgen = 0;
        if ((b->fibers || i == 0) && !prepare(it, st.get(i)))
            return "no memory for the work-items' stacks";
    }
    for (;;) {
        /* one chain through the ready work-items (to_scheduler), until none is */
        for (unsigned i = 0; i < b->size; i++)
            if (b->items[i].state == READY) {
                resume(b, &b->items[i]);
                if (b->error) break;
            }
        unsigned done = 0;
        for (unsigned i = 0; i < b->size; i++) done += b->items[i].state == DONE;
        if (b->error) return b->error;
        if (done == b->size) return nullptr;
        /* release the warps all of whose live lanes wait at a warp op */
        bool released = false;
        unsigned ws = b->warp_size;
        for (unsigned w = 0; w < b->size; w += ws) {
            unsigned end = std::min(b->size, w + ws), waiting = 0, live = 0;
            for (unsigned i = w; i < end; i++) {
                if (b->items[i].state != DONE) live++;
                if (b->items[i].state == AT_WARP) waiting++;
            }
            if (live && waiting == live) {
                for (unsigned i = w; i < end; i++)
                    if (b->items[i].state == AT_WARP) b->items[i].state = READY;
                released = true;
            }
        }
        if (released) continue;
        unsigned at_barrier = 0;
        for (unsigned i = 0; i < b->size; i++) at_barrier += b->items[i].state == AT_BARRIER;
        if (at_barrier + done == b->size && done == 0) {
            for (unsigned i = 0; i < b->size; i++) b->items[i].state = READY;
            continue;
        }
        if (at_barrier + done == b->size)
            return "__syncthreads() reached by only part of the block (the other work-items had "
                   "returned): the block would hang on a GPU";
        return "__syncthreads() and a warp operation wait on each other (divergent barrier): "
               "the block would hang on a GPU";
    }
}

/* ---- what kernels call --------------------------------------------------- */

inline void barrier() {
    item *it = self();
    if (!it->block->fibers) {
        it->block->error = "a barrier in a kernel built without fibers";
        throw kernel_exit{};
    }
    it->state = AT_BARRIER;
    to_scheduler(it);
}

/* Every live lane of the warp deposits `v`; returns the slots of the warp's
 * lanes (index by lane) once all have. */
inline const uint64_t *warp_exchange(uint64_t v) {
    item *it = self();
    block_ctx *b = it->block;
    if (!b->fibers) {
        b->error = "a warp operation in a kernel built without fibers";
        throw kernel_exit{};
    }
    uint64_t *slots = b->slots[it->wgen++ & 1];
    slots[it->linear] = v;
    it->state = AT_WARP;
    to_scheduler(it);
    unsigned w = it->linear - it->linear % b->warp_size;
    return slots + w;
}

inline unsigned lane_id() { return self()->linear % self()->block->warp_size; }

inline unsigned warp_lanes() {
    block_ctx *b = self()->block;
    unsigned w = self()->linear - self()->linear % b->warp_size;
    return std::min(b->warp_size, b->size - w);
}

inline uint64_t live_mask() {
    block_ctx *b = self()->block;
    unsigned w = self()->linear - self()->linear % b->warp_size, n = warp_lanes();
    uint64_t m = 0;
    for (unsigned i = 0; i < n; i++)
        if (b->items[w + i].state != DONE) m |= uint64_t(1) << i;
    return m;
}

template <class T> inline uint64_t bits_of(T v) {
    static_assert(sizeof(T) <= 8, "warp operations take values of at most 8 bytes");
    uint64_t r = 0;
    std::memcpy(&r, &v, sizeof v);
    return r;
}
template <class T> inline T of_bits(uint64_t r) {
    T v;
    std::memcpy(&v, &r, sizeof v);
    return v;
}

/* ---- atomics ------------------------------------------------------------- */

template <class T, class F> inline T cas_loop(T *p, F f) {
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(p, &old, f(old), true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
    return old;
}
template <class T, class F> inline T cas_loop_fp(T *p, F f) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    U *q = reinterpret_cast<U *>(p);
    U old = __atomic_load_n(q, __ATOMIC_RELAXED);
    for (;;) {
        T o;
        std::memcpy(&o, &old, sizeof o);
        T n = f(o);
        U nb;
        std::memcpy(&nb, &n, sizeof nb);
        if (__atomic_compare_exchange_n(q, &old, nb, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return o;
    }
}

/* ---- the launch ---------------------------------------------------------- */

template <class... A> constexpr std::array<size_t, sizeof...(A) + 1> arg_offsets() {
    std::array<size_t, sizeof...(A) + 1> r{};
    size_t sizes[] = {sizeof(A)..., 0}, aligns[] = {alignof(A)..., 1};
    size_t o = 0;
    for (size_t i = 0; i < sizeof...(A); i++) {
        o = (o + aligns[i] - 1) / aligns[i] * aligns[i];
        r[i] = o;
        o += sizes[i];
    }
    r[sizeof...(A)] = o;    /* the end of the explicit arguments */
    return r;
}

/* Faults: a SIGSEGV/SIGBUS on a thread running a kernel ends the launch as a
 * GPU memory fault at the address the kernel touched (what the GPU's page
 * tables would refuse: memory no mapping covers).  Other threads' signals go
 * to the handler that was there before. */
struct fault_trap {
    sigjmp_buf jb;
    uint64_t address;
};
inline thread_local fault_trap *cur_trap;
inline struct sigaction prev_segv, prev_bus;

inline void on_fault(int sig, siginfo_t *si, void *uc) {
    fault_trap *t = cur_trap;
    if (t) {
        t->address = (uint64_t)(uintptr_t)si->si_addr;
        cur_trap = nullptr;
        siglongjmp(t->jb, 1);
    }
    struct sigaction *p = sig == SIGSEGV ? &prev_segv : &prev_bus;
    if (p->sa_flags & SA_SIGINFO) {
        p->sa_sigaction(sig, si, uc);
    } else if (p->sa_handler == SIG_DFL || p->sa_handler == SIG_IGN) {
        signal(sig, SIG_DFL);
        raise(sig);
    } else {
        p->sa_handler(sig);
    }
}

inline void install_fault_handler() {
    static std::atomic<int> lock{0};
    while (lock.exchange(1)) {
    }
    for (int sig : {SIGSEGV, SIGBUS}) {
        struct sigaction cur;
        sigaction(sig, nullptr, &cur);
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fault) continue;
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        sigaction(sig, &sa, sig == SIGSEGV ? &prev_segv : &prev_bus);
    }
    lock.store(0);
}

struct dispatch {
    rocpy_cpukern_launch_t *L;
    dim3 bdim, gdim;
    uint64_t blocks;
    std::atomic<uint64_t> next{0};
    std::atomic<int> status{ROCPY_CPUKERN_OK};
    std::atomic<int> claimed{0};
    void (*body)(void *args);
    void *args;
    bool fibers;
};

inline void fail(dispatch *d, int status, const char *msg, uint64_t address) {
    int expect = ROCPY_CPUKERN_OK;
    if (d->claimed.exchange(1)) return;     /* the first failure is reported */
    std::snprintf(d->L->message, sizeof d->L->message, "%s", msg);
    d->L->fault_address = address;
    d->status.compare_exchange_strong(expect, status);
}

inline void worker(dispatch *d) {
    unsigned size = d->bdim.x * d->bdim.y * d->bdim.z;
    std::vector<item> items(size);
    std::vector<uint64_t> slots(2 * size);
    std::vector<unsigned char> dyn(d->L->shared_bytes + 16);
    stacks st;
    block_ctx b;
    b.bdim = d->bdim;
    b.gdim = d->gdim;
    b.warp_size = d->L->warp_size ? d->L->warp_size : 64;
    b.size = size;
    b.fibers = d->fibers;
    b.items = items.data();
    b.body = d->body;
    b.args = d->args;
    b.dynamic_shared = (unsigned char *)(((uintptr_t)dyn.data() + 15) & ~(uintptr_t)15);
    b.slots[0] = slots.data();
    b.slots[1] = slots.data() + size;
    for (unsigned i = 0; i < size; i++) {
        items[i].linear = i;
        items[i].tid = uint3{i % d->bdim.x, (i / d->bdim.x) % d->bdim.y, i / (d->bdim.x * d->bdim.y)};
        items[i].block = &b;
    }
    fault_trap trap;
    for (;;) {
        if (d->status.load(std::memory_order_relaxed) != ROCPY_CPUKERN_OK) break;
        uint64_t n = d->next.fetch_add(1);
        if (n >= d->blocks) break;
        b.bid = uint3{unsigned(n % d->gdim.x), unsigned((n / d->gdim.x) % d->gdim.y),
                      unsigned(n / ((uint64_t)d->gdim.x * d->gdim.y))};
        b.error = nullptr;
        b.trap = false;
        if (sigsetjmp(trap.jb, 1)) {
            /* a fault mid-block: the fibers' stacks are abandoned, as the GPU's waves */
            char msg[96];
            std::snprintf(msg, sizeof msg, "memory fault at 0x%llx",
                          (unsigned long long)trap.address);
            fail(d, ROCPY_CPUKERN_MEMORY_FAULT, msg, trap.address);
            break;
        }
        cur_trap = &trap;
        const char *err = run_fibers(&b, st);
        cur_trap = nullptr;
        if (err) {
            fail(d, b.trap ? ROCPY_CPUKERN_TRAP : ROCPY_CPUKERN_FAILED, err, 0);
            break;
        }
    }
    cur_trap = nullptr;
}

}  // namespace rocpy_cpu

#include "hip_cpu_device.h"
#endif
