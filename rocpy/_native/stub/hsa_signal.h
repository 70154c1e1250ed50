/* Signal objects, private to hsa_signal.c and hsa_signal_ops.c.
 *
 * A signal lives in a slot of a slab; slabs are never freed, so a stale or
 * forged handle can be checked without touching freed memory.  The handle is
 * (generation << 32) | (slot index + 1); destroying a signal bumps the
 * generation, so the old handle stops matching even if the slot is reused.
 *
 * Waiting never spins: a waiter registers (waiters / multi counters), then
 * re-checks the value and sleeps on a condition variable; every change of
 * the value is followed by a seq_cst fence and a look at those counters, so
 * either the waiter sees the new value or the writer sees the waiter (the
 * Dekker pattern, made sound by the two fences). */
#ifndef ROCPY_STUB_HSA_SIGNAL_H
#define ROCPY_STUB_HSA_SIGNAL_H

#include "hsa_internal.h"

#include <stdatomic.h>

/* What ROCr makes of hsa_amd_signal_create's attributes (hsa_ext_amd.cpp):
 * an InterruptSignal (its waits may block on a KFD event), or a DefaultSignal
 * (BusyWaitSignal: its waits poll whatever the hint), IPC-exportable or not. */
typedef enum stub_sig_kind { STUB_SIG_INTERRUPT = 0, STUB_SIG_POLLING = 1, STUB_SIG_IPC = 2 } stub_sig_kind_t;

struct stub_signal {
    _Atomic int64_t *value;        /* &own_value, or into a page shared with other processes */
    _Atomic int64_t own_value;
    stub_sig_kind_t kind;
    void *shared;                  /* IPC: the mapped page (hsa_ipc.c), unmapped when the slot goes */
    _Atomic uint32_t gen;          /* the generation live handles carry */
    _Atomic uint32_t refs;         /* 0: the slot is free */
    _Atomic bool live;             /* false once destroyed */
    _Atomic uint32_t waiters;      /* threads asleep on cond */
    _Atomic uint32_t multi;        /* wait-any registrations */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t index;
    void (*hook)(void *);          /* doorbells: wake the packet processor */
    void *hook_arg;
    _Atomic uint64_t start_ts, end_ts;
    _Atomic uintptr_t copy_agent;  /* the agent that did the last async copy */
    struct stub_signal *next_free;
};

typedef enum sig_state { SIG_LIVE, SIG_STALE, SIG_BOGUS } sig_state_t;

/* The slot a handle names and whether it is live, destroyed (stale) or was
 * never a signal (bogus, including the null handle). */
stub_signal_t *stub_sig_lookup(hsa_signal_t handle, sig_state_t *state);
/* Value operations and waits on a handle that is not live abort, as ROCr's
 * Signal::Convert throws and CATCHRET aborts. */
stub_signal_t *stub_sig_or_abort(hsa_signal_t handle, const char *call);
/* The same for the waits: a reference (stub_sig_release) to a live signal. */
stub_signal_t *stub_sig_retain_or_abort(hsa_signal_t handle, const char *call);
/* After every change of the value: wake whoever waits. */
void stub_sig_notify(stub_signal_t *s);
/* IPC signals (hsa_ipc.c): a signal whose value lives in `page` (mapped
 * shared); the page is unmapped when the slot is freed. */
stub_signal_t *stub_sig_create_shared(void *page, _Atomic int64_t *value, stub_sig_kind_t kind);
/* hsa_ipc.c: a fresh shared page holding an IPC signal's value, and its release. */
void *stub_ipc_signal_page_new(int64_t initial, _Atomic int64_t **value);
void stub_ipc_signal_page_release(void *page);
/* Polling kinds count every waited nanosecond as busy (BusyWaitSignal). */
bool stub_sig_polls(const stub_signal_t *s);
hsa_signal_value_t stub_sig_wait_one(stub_signal_t *s, hsa_signal_condition_t condition,
                                     hsa_signal_value_t compare, uint64_t timeout_ns);

#endif
