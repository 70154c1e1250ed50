/* Signal value operations in every memory order hsa.h declares, on C11
 * atomics, and the blocking waits.  The acquire / release / acq_rel names are
 * the deprecated spellings of scacquire / screlease / scacq_screl.  Each
 * change of the value is followed by stub_sig_notify, which wakes waiters;
 * silent stores change the value without waking anyone, as specified. */
#include "hsa_signal.h"

#define RELAXED memory_order_relaxed
#define ACQUIRE memory_order_acquire
#define RELEASE memory_order_release
#define ACQ_REL memory_order_acq_rel

/* ---- internal, on retained objects ----------------------------------------- */

int64_t stub_sig_load(stub_signal_t *s) { return atomic_load_explicit(s->value, ACQUIRE); }

void stub_sig_store(stub_signal_t *s, int64_t value) {
    atomic_store_explicit(s->value, value, RELEASE);
    stub_sig_notify(s);
}

void stub_sig_add(stub_signal_t *s, int64_t value) {
    atomic_fetch_add_explicit(s->value, value, ACQ_REL);
    stub_sig_notify(s);
}

/* ---- loads and stores -------------------------------------------------------- */

#define LOAD(op, suffix, order)                                                               \
    hsa_signal_value_t hsa_signal_##op##_##suffix(hsa_signal_t signal) {                      \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);          \
        return atomic_load_explicit(s->value, order);                                        \
    }
HSA_LOAD_ORDERS(LOAD, load)

#define STORE(op, suffix, order)                                                              \
    void hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {          \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);          \
        atomic_store_explicit(s->value, value, order);                                       \
        stub_sig_notify(s);                                                                   \
    }
HSA_STORE_ORDERS(STORE, store)

/* The doorbell hook still runs: writing a doorbell is what rings it. */
#define SILENT_STORE(suffix, order)                                                           \
    void hsa_signal_silent_store_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {    \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_silent_store_" #suffix);     \
        atomic_store_explicit(s->value, value, order);                                       \
        if (s->hook) s->hook(s->hook_arg);                                                    \
    }
SILENT_STORE(relaxed, RELAXED)
SILENT_STORE(screlease, RELEASE)

/* ---- read-modify-write ---------------------------------------------------------- */

#define RMW(op, fetch, suffix, order, fail)                                                   \
    void hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {          \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);          \
        atomic_fetch_##fetch##_explicit(s->value, value, order);                             \
        stub_sig_notify(s);                                                                   \
    }
HSA_RMW_ORDERS(RMW, add, add)
HSA_RMW_ORDERS(RMW, subtract, sub)
HSA_RMW_ORDERS(RMW, and, and)
HSA_RMW_ORDERS(RMW, or, or)
HSA_RMW_ORDERS(RMW, xor, xor)

#define EXCHANGE(op, suffix, order, fail)                                                       \
    hsa_signal_value_t hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) { \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);           \
        hsa_signal_value_t old = atomic_exchange_explicit(s->value, value, order);             \
        stub_sig_notify(s);                                                                     \
        return old;                                                                             \
    }
HSA_RMW_ORDERS(EXCHANGE, exchange)

#define CAS(op, suffix, order, fail)                                                            \
    hsa_signal_value_t hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t expected, \
                                                  hsa_signal_value_t value) {                   \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);           \
        hsa_signal_value_t observed = expected;                                                 \
        if (atomic_compare_exchange_strong_explicit(s->value, &observed, value, order, fail))  \
            stub_sig_notify(s);                                                                 \
        return observed;                                                                        \
    }
HSA_RMW_ORDERS(CAS, cas)

/* ---- waits ------------------------------------------------------------------------- */

stub_signal_t *stub_sig_retain_or_abort(hsa_signal_t handle, const char *call) {
    stub_signal_t *s;
    while (!(s = stub_sig_retain(handle))) stub_sig_or_abort(handle, call);   /* a dead handle: aborts */
    return s;
}

/* ROCr's interrupt-signal wait (InterruptSignal::WaitRelaxed, and
 * Signal::WaitAny alike, ROCm 5.2): poll for 200 us (20 us sleeps), then
 * sleep on the event for the time left truncated to whole milliseconds
 * (hsaKmtWaitOnEvent); once less than 1 ms is left that is a 0 ms wait,
 * which returns at once, so the rest of a finite timeout is a busy loop.
 * HSA_WAIT_STATE_ACTIVE spins throughout.  The stub sleeps instead, but
 * counts the time a real waiter would have spun (rocpy_stub_hsa_busy_wait_ns),
 * so a caller that waits in short slices shows as the busy loop it is. */
#define POLL_NS 200000ull
#define MS_NS 1000000ull
static _Atomic uint64_t busy_ns;

uint64_t rocpy_stub_hsa_busy_wait_ns(void) { return atomic_load(&busy_ns); }

void stub_sig_account_wait(uint64_t timeout_ns, hsa_wait_state_t hint, uint64_t elapsed_ns) {
    if (timeout_ns == UINT64_MAX || timeout_ns == 0) return;
    if (elapsed_ns > timeout_ns) elapsed_ns = timeout_ns;
    uint64_t busy_from = 0;   /* ACTIVE: from the start */
    if (hint != HSA_WAIT_STATE_ACTIVE) {
        if (timeout_ns <= POLL_NS) return;
        busy_from = POLL_NS + (timeout_ns - POLL_NS) / MS_NS * MS_NS;
    }
    if (elapsed_ns > busy_from) atomic_fetch_add(&busy_ns, elapsed_ns - busy_from);
}

static hsa_signal_value_t wait(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t compare,
                               uint64_t timeout, hsa_wait_state_t hint, const char *call) {
    stub_signal_t *s = stub_sig_retain_or_abort(signal, call);
    uint64_t start = stub_now_ns();
    hsa_signal_value_t v = stub_sig_wait_one(s, condition, compare, timeout);
    /* a polling signal (BusyWaitSignal) polls whatever the hint says */
    stub_sig_account_wait(timeout, stub_sig_polls(s) ? HSA_WAIT_STATE_ACTIVE : hint, stub_now_ns() - start);
    stub_sig_release(s);
    return v;
}

#define WAIT(suffix, acquire)                                                                     \
    hsa_signal_value_t hsa_signal_wait_##suffix(hsa_signal_t signal, hsa_signal_condition_t condition, \
                                                hsa_signal_value_t compare_value, uint64_t timeout_hint, \
                                                hsa_wait_state_t wait_state_hint) {               \
        hsa_signal_value_t v = wait(signal, condition, compare_value, timeout_hint, wait_state_hint, \
                                    "hsa_signal_wait_" #suffix);                                  \
        if (acquire) atomic_thread_fence(ACQUIRE);                                                \
        return v;                                                                                 \
    }
WAIT(relaxed, 0)
WAIT(scacquire, 1)
WAIT(acquire, 1)
