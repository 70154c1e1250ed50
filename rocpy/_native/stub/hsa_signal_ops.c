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

int64_t stub_sig_load(stub_signal_t *s) { return atomic_load_explicit(&s->value, ACQUIRE); }

void stub_sig_store(stub_signal_t *s, int64_t value) {
    atomic_store_explicit(&s->value, value, RELEASE);
    stub_sig_notify(s);
}

void stub_sig_add(stub_signal_t *s, int64_t value) {
    atomic_fetch_add_explicit(&s->value, value, ACQ_REL);
    stub_sig_notify(s);
}

/* ---- loads and stores -------------------------------------------------------- */

#define LOAD(suffix, order)                                                                   \
    hsa_signal_value_t hsa_signal_load_##suffix(hsa_signal_t signal) {                        \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_load_" #suffix);             \
        return atomic_load_explicit(&s->value, order);                                        \
    }
LOAD(relaxed, RELAXED)
LOAD(scacquire, ACQUIRE)
LOAD(acquire, ACQUIRE)

#define STORE(suffix, order)                                                                  \
    void hsa_signal_store_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {           \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_store_" #suffix);            \
        atomic_store_explicit(&s->value, value, order);                                       \
        stub_sig_notify(s);                                                                   \
    }
STORE(relaxed, RELAXED)
STORE(screlease, RELEASE)
STORE(release, RELEASE)

/* The doorbell hook still runs: writing a doorbell is what rings it. */
#define SILENT_STORE(suffix, order)                                                           \
    void hsa_signal_silent_store_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {    \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_silent_store_" #suffix);     \
        atomic_store_explicit(&s->value, value, order);                                       \
        if (s->hook) s->hook(s->hook_arg);                                                    \
    }
SILENT_STORE(relaxed, RELAXED)
SILENT_STORE(screlease, RELEASE)

/* ---- read-modify-write ---------------------------------------------------------- */

#define RMW(op, fetch, suffix, order)                                                         \
    void hsa_signal_##op##_##suffix(hsa_signal_t signal, hsa_signal_value_t value) {          \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_" #op "_" #suffix);          \
        atomic_fetch_##fetch##_explicit(&s->value, value, order);                             \
        stub_sig_notify(s);                                                                   \
    }
#define RMW_ALL_ORDERS(op, fetch)                                                             \
    RMW(op, fetch, relaxed, RELAXED)                                                          \
    RMW(op, fetch, scacquire, ACQUIRE)                                                        \
    RMW(op, fetch, screlease, RELEASE)                                                        \
    RMW(op, fetch, scacq_screl, ACQ_REL)                                                      \
    RMW(op, fetch, acquire, ACQUIRE)                                                          \
    RMW(op, fetch, release, RELEASE)                                                          \
    RMW(op, fetch, acq_rel, ACQ_REL)
RMW_ALL_ORDERS(add, add)
RMW_ALL_ORDERS(subtract, sub)
RMW_ALL_ORDERS(and, and)
RMW_ALL_ORDERS(or, or)
RMW_ALL_ORDERS(xor, xor)

#define EXCHANGE(suffix, order)                                                                 \
    hsa_signal_value_t hsa_signal_exchange_##suffix(hsa_signal_t signal, hsa_signal_value_t value) { \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_exchange_" #suffix);           \
        hsa_signal_value_t old = atomic_exchange_explicit(&s->value, value, order);             \
        stub_sig_notify(s);                                                                     \
        return old;                                                                             \
    }
EXCHANGE(relaxed, RELAXED)
EXCHANGE(scacquire, ACQUIRE)
EXCHANGE(screlease, RELEASE)
EXCHANGE(scacq_screl, ACQ_REL)
EXCHANGE(acquire, ACQUIRE)
EXCHANGE(release, RELEASE)
EXCHANGE(acq_rel, ACQ_REL)

/* A failed CAS is a load: its order drops the release half. */
#define CAS(suffix, order, fail_order)                                                          \
    hsa_signal_value_t hsa_signal_cas_##suffix(hsa_signal_t signal, hsa_signal_value_t expected, \
                                               hsa_signal_value_t value) {                      \
        stub_signal_t *s = stub_sig_or_abort(signal, "hsa_signal_cas_" #suffix);                \
        hsa_signal_value_t observed = expected;                                                 \
        if (atomic_compare_exchange_strong_explicit(&s->value, &observed, value, order, fail_order)) \
            stub_sig_notify(s);                                                                 \
        return observed;                                                                        \
    }
CAS(relaxed, RELAXED, RELAXED)
CAS(scacquire, ACQUIRE, ACQUIRE)
CAS(screlease, RELEASE, RELAXED)
CAS(scacq_screl, ACQ_REL, ACQUIRE)
CAS(acquire, ACQUIRE, ACQUIRE)
CAS(release, RELEASE, RELAXED)
CAS(acq_rel, ACQ_REL, ACQUIRE)

/* ---- waits ------------------------------------------------------------------------- */

static hsa_signal_value_t wait(hsa_signal_t signal, hsa_signal_condition_t condition, hsa_signal_value_t compare,
                               uint64_t timeout, const char *call) {
    stub_signal_t *s = stub_sig_retain(signal);
    if (!s) stub_sig_or_abort(signal, call);   /* aborts: not a live signal */
    hsa_signal_value_t v = stub_sig_wait_one(s, condition, compare, timeout);
    stub_sig_release(s);
    return v;
}

/* The wait-state hint changes nothing: waits always sleep. */
#define WAIT(suffix, acquire)                                                                     \
    hsa_signal_value_t hsa_signal_wait_##suffix(hsa_signal_t signal, hsa_signal_condition_t condition, \
                                                hsa_signal_value_t compare_value, uint64_t timeout_hint, \
                                                hsa_wait_state_t wait_state_hint) {               \
        (void)wait_state_hint;                                                                    \
        hsa_signal_value_t v = wait(signal, condition, compare_value, timeout_hint,               \
                                    "hsa_signal_wait_" #suffix);                                  \
        if (acquire) atomic_thread_fence(ACQUIRE);                                                \
        return v;                                                                                 \
    }
WAIT(relaxed, 0)
WAIT(scacquire, 1)
WAIT(acquire, 1)
