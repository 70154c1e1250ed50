/* Signals: creation, destruction, handles, blocking waits, signal groups.
 * The value operations are in hsa_signal_ops.c; the layout and the waiting
 * protocol are described in hsa_signal.h. */
#include "hsa_signal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#define SLAB_SHIFT 10
#define SLAB_SIZE (1u << SLAB_SHIFT)
#define MAX_SLABS 4096u

static stub_signal_t *_Atomic slabs[MAX_SLABS];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static stub_signal_t *free_list;
static _Atomic uint32_t slots_used;  /* slots ever handed out */

/* wait-any sleepers share one condition variable */
static pthread_mutex_t multi_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t multi_cond;
static pthread_once_t multi_once = PTHREAD_ONCE_INIT;

static void init_cond(pthread_cond_t *c) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
}

static void init_multi(void) { init_cond(&multi_cond); }

/* ---- slots and handles -------------------------------------------------- */

static stub_signal_t *slot_alloc(void) {
    pthread_mutex_lock(&registry_lock);
    stub_signal_t *s = free_list;
    if (s) {
        free_list = s->next_free;
    } else if (slots_used < SLAB_SIZE * MAX_SLABS) {
        uint32_t slab = slots_used >> SLAB_SHIFT;
        if (!atomic_load(&slabs[slab])) {
            stub_signal_t *fresh = calloc(SLAB_SIZE, sizeof *fresh);
            if (!fresh) {
                pthread_mutex_unlock(&registry_lock);
                return NULL;
            }
            for (uint32_t i = 0; i < SLAB_SIZE; i++) {
                fresh[i].index = (slab << SLAB_SHIFT) + i;
                pthread_mutex_init(&fresh[i].lock, NULL);
                init_cond(&fresh[i].cond);
                atomic_init(&fresh[i].gen, 1);
            }
            atomic_store(&slabs[slab], fresh);
        }
        s = &atomic_load(&slabs[slab])[slots_used & (SLAB_SIZE - 1)];
        atomic_fetch_add(&slots_used, 1);
    }
    pthread_mutex_unlock(&registry_lock);
    return s;
}

static void slot_free(stub_signal_t *s) {
    if (s->shared) stub_ipc_signal_page_release(s->shared);
    s->shared = NULL;
    s->value = &s->own_value;
    pthread_mutex_lock(&registry_lock);
    s->hook = NULL;
    s->hook_arg = NULL;
    s->next_free = free_list;
    free_list = s;
    pthread_mutex_unlock(&registry_lock);
}

hsa_signal_t stub_sig_handle(const stub_signal_t *s) {
    return (hsa_signal_t){((uint64_t)atomic_load(&s->gen) << 32) | (s->index + 1)};
}

stub_signal_t *stub_sig_lookup(hsa_signal_t handle, sig_state_t *state) {
    uint32_t low = (uint32_t)handle.handle, gen = (uint32_t)(handle.handle >> 32);
    *state = SIG_BOGUS;
    if (low == 0 || gen == 0) return NULL;
    uint32_t index = low - 1;
    if (index >= atomic_load_explicit(&slots_used, memory_order_acquire)) return NULL;
    stub_signal_t *slab = atomic_load_explicit(&slabs[index >> SLAB_SHIFT], memory_order_acquire);
    if (!slab) return NULL;
    stub_signal_t *s = &slab[index & (SLAB_SIZE - 1)];
    uint32_t current = atomic_load_explicit(&s->gen, memory_order_acquire);
    if (gen > current) return NULL;   /* a generation that never existed */
    *state = gen == current && atomic_load_explicit(&s->live, memory_order_acquire) ? SIG_LIVE : SIG_STALE;
    return s;
}

stub_signal_t *stub_sig_or_abort(hsa_signal_t handle, const char *call) {
    sig_state_t state;
    stub_signal_t *s = stub_sig_lookup(handle, &state);
    if (state == SIG_LIVE) return s;
    stub_abort(call, "invalid signal handle 0x%llx (%s)", (unsigned long long)handle.handle,
               handle.handle == 0 ? "the null signal"
               : state == SIG_STALE ? "the signal was destroyed"
                                    : "not a signal");
}

hsa_status_t stub_sig_check(hsa_signal_t handle) {
    if (handle.handle == 0) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    sig_state_t state;
    stub_sig_lookup(handle, &state);
    return state == SIG_LIVE ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_SIGNAL;
}

stub_signal_t *stub_sig_retain(hsa_signal_t handle) {
    sig_state_t state;
    stub_signal_t *s = stub_sig_lookup(handle, &state);
    if (!s) return NULL;
    uint32_t refs = atomic_load(&s->refs);
    do {
        if (refs == 0) return NULL;   /* freed meanwhile */
    } while (!atomic_compare_exchange_weak(&s->refs, &refs, refs + 1));
    /* the slot may have been freed and reused between lookup and retain */
    if (atomic_load(&s->gen) != (uint32_t)(handle.handle >> 32) || !atomic_load(&s->live)) {
        stub_sig_release(s);
        return NULL;
    }
    return s;
}

void stub_sig_release(stub_signal_t *s) {
    if (atomic_fetch_sub(&s->refs, 1) == 1) slot_free(s);
}

bool stub_sig_alive(const stub_signal_t *s) { return atomic_load(&s->live); }

static void wake_all(stub_signal_t *s) {
    pthread_mutex_lock(&s->lock);
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

static void multi_notify(void) {
    pthread_once(&multi_once, init_multi);
    pthread_mutex_lock(&multi_lock);
    pthread_cond_broadcast(&multi_cond);
    pthread_mutex_unlock(&multi_lock);
}

void stub_sig_notify(stub_signal_t *s) {
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&s->waiters, memory_order_relaxed)) wake_all(s);
    if (atomic_load_explicit(&s->multi, memory_order_relaxed)) multi_notify();
    if (s->hook) s->hook(s->hook_arg);
}

static stub_signal_t *create_in(int64_t initial, void *page, _Atomic int64_t *value, stub_sig_kind_t kind) {
    stub_signal_t *s = slot_alloc();
    if (!s) return NULL;
    s->kind = kind;
    s->shared = page;
    s->value = value ? value : &s->own_value;
    if (!value) atomic_store(s->value, initial);
    atomic_store(&s->start_ts, 0);
    atomic_store(&s->end_ts, 0);
    atomic_store(&s->copy_agent, 0);
    atomic_store(&s->refs, 1);
    atomic_store(&s->live, true);
    return s;
}

static stub_signal_t *create(int64_t initial) { return create_in(initial, NULL, NULL, STUB_SIG_INTERRUPT); }

stub_signal_t *stub_sig_create_shared(void *page, _Atomic int64_t *value, stub_sig_kind_t kind) {
    return create_in(0, page, value, kind);
}

bool stub_sig_polls(const stub_signal_t *s) { return s->kind != STUB_SIG_INTERRUPT; }

/* ROCr's core::g_use_interrupt_wait: HSA_ENABLE_INTERRUPT=0 turns every
 * signal into a polling one (runtime flags, read once). */
static bool use_interrupt_wait(void) {
    static int cached = -1;
    if (cached < 0) {
        const char *e = getenv("HSA_ENABLE_INTERRUPT");
        cached = !(e && strcmp(e, "0") == 0);
    }
    return cached;
}

/* Mark dead, invalidate the handle, wake every waiter (they return 0, as
 * ROCr's waits do on a signal that stops being valid). */
static bool destroy(stub_signal_t *s) {
    bool expected = true;
    if (!atomic_compare_exchange_strong(&s->live, &expected, false)) return false;
    uint32_t gen = atomic_load(&s->gen) + 1;
    atomic_store(&s->gen, gen ? gen : 1);
    wake_all(s);
    if (atomic_load(&s->multi)) multi_notify();
    stub_sig_release(s);
    return true;
}

/* The runtime keeps its own reference besides the handle's, so a slot stays
 * the runtime's even if the application destroys the handle (a doorbell,
 * say): it is never reused under the runtime's feet. */
stub_signal_t *stub_sig_create_internal(int64_t initial) {
    stub_signal_t *s = create(initial);
    if (s) atomic_fetch_add(&s->refs, 1);
    return s;
}

void stub_sig_destroy_internal(stub_signal_t *s) {
    destroy(s);
    stub_sig_release(s);
}

void stub_sig_set_hook(stub_signal_t *s, void (*hook)(void *), void *arg) {
    s->hook_arg = arg;
    s->hook = hook;
}

hsa_status_t hsa_amd_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                                   const hsa_agent_t *consumers, uint64_t attributes, hsa_signal_t *signal) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(signal);
    /* ROCr (hsa_amd_signal_create): IPC, GPU-only, or interrupts off make a
     * DefaultSignal (polling); otherwise consumers are validated, and a list
     * naming no CPU agent also makes a polling one; else an InterruptSignal. */
    bool ipc = attributes & HSA_AMD_SIGNAL_IPC;
    bool polling = ipc || (attributes & HSA_AMD_SIGNAL_AMD_GPU_ONLY) || !use_interrupt_wait();
    if (!polling && num_consumers != 0) {
        HSA_CHECK_PTR(consumers);
        for (uint32_t i = 0; i < num_consumers; i++)
            for (uint32_t j = 0; j < i; j++)
                if (consumers[i].handle == consumers[j].handle) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
        polling = true;
        for (uint32_t i = 0; i < num_consumers; i++) {
            stub_hsa_agent_t *a = stub_hsa_agent(consumers[i]);
            if (a && !a->is_gpu) polling = false;
        }
    }
    stub_signal_t *s;
    if (ipc) {
        _Atomic int64_t *value;
        void *page = stub_ipc_signal_page_new(initial_value, &value);
        if (!page) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
        s = stub_sig_create_shared(page, value, STUB_SIG_IPC);
        if (!s) stub_ipc_signal_page_release(page);
    } else {
        s = create(initial_value);
        if (s) s->kind = polling ? STUB_SIG_POLLING : STUB_SIG_INTERRUPT;
    }
    if (!s) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    *signal = stub_sig_handle(s);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_create(hsa_signal_value_t initial_value, uint32_t num_consumers,
                               const hsa_agent_t *consumers, hsa_signal_t *signal) {
    return hsa_amd_signal_create(initial_value, num_consumers, consumers, 0, signal);
}

hsa_status_t hsa_signal_destroy(hsa_signal_t signal) {
    HSA_CHECK_OPEN();
    hsa_status_t st = stub_sig_check(signal);
    if (st != HSA_STATUS_SUCCESS) return st;
    sig_state_t state;
    stub_signal_t *s = stub_sig_lookup(signal, &state);
    return destroy(s) ? HSA_STATUS_SUCCESS : HSA_STATUS_ERROR_INVALID_SIGNAL;
}

/* ---- profiling timestamps kept with the signal --------------------------- */

void stub_sig_set_dispatch_time(stub_signal_t *s, uint64_t start, uint64_t end) {
    atomic_store(&s->start_ts, start);
    atomic_store(&s->end_ts, end);
}

void stub_sig_set_copy_time(stub_signal_t *s, const stub_hsa_agent_t *agent, uint64_t start, uint64_t end) {
    stub_sig_set_dispatch_time(s, start, end);
    atomic_store(&s->copy_agent, (uintptr_t)agent);
}

void stub_sig_get_times(stub_signal_t *s, uint64_t *start, uint64_t *end, const stub_hsa_agent_t **copy_agent) {
    *start = atomic_load(&s->start_ts);
    *end = atomic_load(&s->end_ts);
    if (copy_agent) *copy_agent = (const stub_hsa_agent_t *)atomic_load(&s->copy_agent);
}

/* ---- waiting ---------------------------------------------------------------- */

static int satisfied(hsa_signal_condition_t c, int64_t v, int64_t cmp) {
    switch (c) {
    case HSA_SIGNAL_CONDITION_EQ: return v == cmp;
    case HSA_SIGNAL_CONDITION_NE: return v != cmp;
    case HSA_SIGNAL_CONDITION_LT: return v < cmp;
    case HSA_SIGNAL_CONDITION_GTE: return v >= cmp;
    default: return -1;
    }
}

static struct timespec deadline_of(uint64_t timeout_ns) {
    uint64_t now = stub_now_ns();
    uint64_t at = timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
    return (struct timespec){(time_t)(at / 1000000000ull), (long)(at % 1000000000ull)};
}

/* Sleep on cond until woken or past the deadline; true if the deadline passed. */
static bool sleep_on(pthread_cond_t *cond, pthread_mutex_t *m, uint64_t timeout_ns, const struct timespec *dl) {
    if (timeout_ns == UINT64_MAX) {
        pthread_cond_wait(cond, m);
        return false;
    }
    return pthread_cond_timedwait(cond, m, dl) == ETIMEDOUT;
}

/* An IPC signal's value may change in another process, which wakes no one
 * here: poll, as ROCr's BusyWaitSignal::WaitRelaxed does (spin 200 us, then
 * sleep 20 us between looks). */
static hsa_signal_value_t poll_one(stub_signal_t *s, hsa_signal_condition_t condition,
                                   hsa_signal_value_t compare, uint64_t timeout_ns) {
    uint64_t start = stub_now_ns();
    for (;;) {
        if (!atomic_load(&s->live)) return 0;
        int64_t v = atomic_load_explicit(s->value, memory_order_relaxed);
        if (satisfied(condition, v, compare)) return v;
        uint64_t elapsed = stub_now_ns() - start;
        if (elapsed >= timeout_ns) return atomic_load(s->value);
        if (elapsed > 200000) {
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
        } else {
            sched_yield();
        }
    }
}

hsa_signal_value_t stub_sig_wait_one(stub_signal_t *s, hsa_signal_condition_t condition,
                                     hsa_signal_value_t compare, uint64_t timeout_ns) {
    int64_t v = atomic_load(s->value);
    int met = satisfied(condition, v, compare);
    if (met < 0) return 0;   /* an unknown condition: ROCr returns 0 */
    if (met) return v;
    if (timeout_ns == 0) return v;
    if (s->kind == STUB_SIG_IPC) return poll_one(s, condition, compare, timeout_ns);
    struct timespec dl = deadline_of(timeout_ns);
    pthread_mutex_lock(&s->lock);
    atomic_fetch_add(&s->waiters, 1);
    atomic_thread_fence(memory_order_seq_cst);
    for (;;) {
        v = atomic_load_explicit(s->value, memory_order_relaxed);
        if (satisfied(condition, v, compare)) break;
        if (!atomic_load(&s->live)) {
            v = 0;
            break;
        }
        if (sleep_on(&s->cond, &s->lock, timeout_ns, &dl)) {
            v = atomic_load(s->value);
            break;
        }
    }
    atomic_fetch_sub(&s->waiters, 1);
    pthread_mutex_unlock(&s->lock);
    return v;
}

/* One pass over the signals; -1 if none is ready. */
static int scan(uint32_t n, stub_signal_t *const *sigs, const hsa_signal_condition_t *conds,
                const hsa_signal_value_t *values, hsa_signal_value_t *value) {
    for (uint32_t i = 0; i < n; i++) {
        if (!atomic_load(&sigs[i]->live)) return STUB_WAIT_DEAD;
        int64_t v = atomic_load_explicit(sigs[i]->value, memory_order_relaxed);
        int met = satisfied(conds[i], v, values[i]);
        if (met < 0) return STUB_WAIT_DEAD;
        if (met) {
            if (value) *value = v;
            return (int)i;
        }
    }
    return STUB_WAIT_TIMEOUT;
}

int stub_sig_wait_any(uint32_t n, stub_signal_t *const *sigs, const hsa_signal_condition_t *conds,
                      const hsa_signal_value_t *values, uint64_t timeout_ns, hsa_signal_value_t *value) {
    int r = scan(n, sigs, conds, values, value);
    if (r != STUB_WAIT_TIMEOUT || timeout_ns == 0) return r;
    pthread_once(&multi_once, init_multi);
    /* another process's change of an IPC signal notifies no one: look again
     * every 100 us (the wait then polls, as ROCr's WaitAny does for signals
     * without an interrupt event) */
    bool remote = false;
    for (uint32_t i = 0; i < n; i++) remote |= sigs[i]->kind == STUB_SIG_IPC;
    uint64_t start = stub_now_ns();
    struct timespec dl = deadline_of(timeout_ns);
    pthread_mutex_lock(&multi_lock);
    for (uint32_t i = 0; i < n; i++) atomic_fetch_add(&sigs[i]->multi, 1);
    atomic_thread_fence(memory_order_seq_cst);
    while ((r = scan(n, sigs, conds, values, value)) == STUB_WAIT_TIMEOUT) {
        if (remote) {
            uint64_t elapsed = stub_now_ns() - start;
            if (timeout_ns != UINT64_MAX && elapsed >= timeout_ns) break;
            uint64_t step = timeout_ns == UINT64_MAX || timeout_ns - elapsed > 100000 ? 100000 : timeout_ns - elapsed;
            struct timespec slice = deadline_of(step);
            pthread_cond_timedwait(&multi_cond, &multi_lock, &slice);
            continue;
        }
        if (sleep_on(&multi_cond, &multi_lock, timeout_ns, &dl)) {
            r = scan(n, sigs, conds, values, value);
            break;
        }
    }
    for (uint32_t i = 0; i < n; i++) atomic_fetch_sub(&sigs[i]->multi, 1);
    pthread_mutex_unlock(&multi_lock);
    return r;
}

uint32_t hsa_amd_signal_wait_any(uint32_t signal_count, hsa_signal_t *signals, hsa_signal_condition_t *conds,
                                 hsa_signal_value_t *values, uint64_t timeout_hint, hsa_wait_state_t wait_hint,
                                 hsa_signal_value_t *satisfying_value) {
    const char *call = "hsa_amd_signal_wait_any";
    if (!stub_hsa_is_open()) stub_abort(call, "called while the runtime is not initialized");
    if (signal_count && (!signals || !conds || !values)) stub_abort(call, "NULL signal, condition or value list");
    stub_signal_t *local[16] = {0};
    stub_signal_t **sigs = signal_count <= 16 ? local : malloc(signal_count * sizeof *sigs);
    if (!sigs) stub_abort(call, "out of memory");
    /* A signal destroyed during the wait ends it (UINT32_MAX), as in ROCr's
     * Signal::WaitAny; one already dead aborts like every other signal call. */
    for (uint32_t i = 0; i < signal_count; i++) sigs[i] = stub_sig_retain_or_abort(signals[i], call);
    uint32_t result = UINT32_MAX;
    uint64_t start = stub_now_ns();
    int r = stub_sig_wait_any(signal_count, sigs, conds, values, timeout_hint, satisfying_value);
    /* ROCr's Signal::WaitAny blocks on events only when every signal has one */
    bool polls = false;
    for (uint32_t i = 0; i < signal_count; i++) polls |= stub_sig_polls(sigs[i]);
    stub_sig_account_wait(timeout_hint, polls ? HSA_WAIT_STATE_ACTIVE : wait_hint, stub_now_ns() - start);
    if (r >= 0) {
        atomic_thread_fence(memory_order_acquire);
        result = (uint32_t)r;
    }
    for (uint32_t i = 0; i < signal_count; i++) stub_sig_release(sigs[i]);
    if (sigs != local) free(sigs);
    return result;
}

/* ---- signal groups -------------------------------------------------------- */

#define GROUP_MAGIC 0x47495353u

typedef struct group {
    uint32_t magic, count;
    struct group *next;
    hsa_signal_t signals[];
} group_t;

static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static group_t *groups;

/* caller holds groups_lock */
static group_t *group_of(hsa_signal_group_t handle) {
    for (group_t *g = groups; g; g = g->next)
        if ((uint64_t)(uintptr_t)g == handle.handle) return g;
    return NULL;
}

hsa_status_t hsa_signal_group_create(uint32_t num_signals, const hsa_signal_t *signals, uint32_t num_consumers,
                                     const hsa_agent_t *consumers, hsa_signal_group_t *signal_group) {
    HSA_CHECK_OPEN();
    if (num_signals == 0 || !signals || !signal_group) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < num_signals; i++) {
        hsa_status_t st = stub_sig_check(signals[i]);
        if (st != HSA_STATUS_SUCCESS) return st;
    }
    if (num_consumers && !consumers) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < num_consumers; i++)
        if (!stub_hsa_agent(consumers[i])) return HSA_STATUS_ERROR_INVALID_AGENT;
    group_t *g = malloc(sizeof *g + num_signals * sizeof(hsa_signal_t));
    if (!g) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    g->magic = GROUP_MAGIC;
    g->count = num_signals;
    memcpy(g->signals, signals, num_signals * sizeof(hsa_signal_t));
    pthread_mutex_lock(&groups_lock);
    g->next = groups;
    groups = g;
    pthread_mutex_unlock(&groups_lock);
    signal_group->handle = (uint64_t)(uintptr_t)g;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_group_destroy(hsa_signal_group_t signal_group) {
    HSA_CHECK_OPEN();
    pthread_mutex_lock(&groups_lock);
    group_t **p = &groups;
    while (*p && (uint64_t)(uintptr_t)*p != signal_group.handle) p = &(*p)->next;
    group_t *g = *p;
    if (g) *p = g->next;
    pthread_mutex_unlock(&groups_lock);
    if (!g) return HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP;
    free(g);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_signal_group_wait_any_relaxed(hsa_signal_group_t signal_group,
                                               const hsa_signal_condition_t *conditions,
                                               const hsa_signal_value_t *compare_values,
                                               hsa_wait_state_t wait_state_hint, hsa_signal_t *signal,
                                               hsa_signal_value_t *value) {
    HSA_CHECK_OPEN();
    pthread_mutex_lock(&groups_lock);
    group_t *g = group_of(signal_group);
    uint32_t count = g ? g->count : 0;
    hsa_signal_t local[64] = {{0}};
    hsa_signal_t *copy = count <= 64 ? local : malloc(count * sizeof *copy);
    if (g && copy) memcpy(copy, g->signals, count * sizeof *copy);
    pthread_mutex_unlock(&groups_lock);
    if (!g) return HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP;
    if (!copy) return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    HSA_CHECK_PTR(conditions);
    HSA_CHECK_PTR(compare_values);
    uint32_t index = hsa_amd_signal_wait_any(count, copy, (hsa_signal_condition_t *)conditions,
                                             (hsa_signal_value_t *)compare_values, UINT64_MAX, wait_state_hint,
                                             value);
    hsa_status_t st = HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (index < count) {
        if (signal) *signal = copy[index];
        st = HSA_STATUS_SUCCESS;
    }
    if (copy != local) free(copy);
    return st;
}

hsa_status_t hsa_signal_group_wait_any_scacquire(hsa_signal_group_t signal_group,
                                                 const hsa_signal_condition_t *conditions,
                                                 const hsa_signal_value_t *compare_values,
                                                 hsa_wait_state_t wait_state_hint, hsa_signal_t *signal,
                                                 hsa_signal_value_t *value) {
    hsa_status_t st = hsa_signal_group_wait_any_relaxed(signal_group, conditions, compare_values,
                                                        wait_state_hint, signal, value);
    atomic_thread_fence(memory_order_acquire);
    return st;
}
