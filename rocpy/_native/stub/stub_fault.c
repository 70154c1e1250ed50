/* Fault injection: arm a fault kind to fire at the (skip+1)-th matching call,
 * `count` times; the runtime code asks stub_fault_fire at each such call. */
#include "stub_core.h"

typedef struct armed {
    int skip, count;
} armed_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static armed_t faults[ROCPY_STUB_FAULT_COUNT];

void rocpy_stub_inject(rocpy_stub_fault_t kind, int skip, int count) {
    if ((unsigned)kind >= ROCPY_STUB_FAULT_COUNT) return;
    pthread_mutex_lock(&lock);
    faults[kind].skip = skip < 0 ? 0 : skip;
    faults[kind].count = count < 0 ? 0 : count;
    pthread_mutex_unlock(&lock);
}

void rocpy_stub_clear_faults(void) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ROCPY_STUB_FAULT_COUNT; i++) faults[i].skip = faults[i].count = 0;
    pthread_mutex_unlock(&lock);
}

bool stub_fault_fire(rocpy_stub_fault_t kind) {
    bool fire = false;
    pthread_mutex_lock(&lock);
    armed_t *a = &faults[kind];
    if (a->count > 0) {
        if (a->skip > 0) {
            a->skip--;
        } else {
            a->count--;
            fire = true;
        }
    }
    pthread_mutex_unlock(&lock);
    return fire;
}
