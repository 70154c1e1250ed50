/* A stream and an event destroyed by the main thread while two others use
 * them, for ThreadSanitizer (and ASan): a launcher (kernel launch, host
 * function, event record, stream query) and a waiter (event query and
 * synchronize, stream synchronize and priority).  A call that resolved a
 * handle keeps it until it returns (hip_hold in the stub); every later call
 * gets hipErrorContextIsDestroyed.
 *
 * argv[1]: a code object holding fill(unsigned *p, unsigned value, int n).
 * Exit status 0: every status was one the call may return, each call kept
 * being refused once refused, and the last fill enqueued is what the buffer
 * holds (the work enqueued before the destroy ran, in order). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <time.h>

#include <hip/hip_runtime_api.h>

#include "check.h"

#define ROUNDS 200
#define N 256
#define MAX_STEPS 100000

typedef struct round {
    hipStream_t s;
    hipEvent_t e;
    hipFunction_t fill;
    unsigned *buf;
    unsigned base, last_fill;
    int launched;
    pthread_barrier_t start;
} round_t;

/* The calls of one thread, each live until it is first refused. */
typedef struct calls {
    const char *names[5];
    int dead[5];
} calls_t;

static atomic_int host_calls;

static void bump(void *user) {
    (void)user;
    atomic_fetch_add(&host_calls, 1);
}

/* Records call i's status; true once it is refused as destroyed. */
static int seen(calls_t *c, int i, hipError_t status, hipError_t also) {
    if (status == hipErrorContextIsDestroyed) {
        c->dead[i] = 1;
        return 1;
    }
    if (c->dead[i] || (status != hipSuccess && status != also)) {
        fprintf(stderr, "%s: %s%s\n", c->names[i], hipGetErrorName(status),
                c->dead[i] ? " after the handle was destroyed" : "");
        exit(1);
    }
    return 0;
}

static void *launcher(void *arg) {
    round_t *r = arg;
    calls_t c = {{"hipModuleLaunchKernel", "hipLaunchHostFunc", "hipEventRecord", "hipStreamQuery"}, {0}};
    pthread_barrier_wait(&r->start);
    for (unsigned i = 0; i < MAX_STEPS; i++) {
        unsigned value = r->base + i;
        int n = N;
        void *params[] = {&r->buf, &value, &n};
        hipError_t launch = hipModuleLaunchKernel(r->fill, N / 64, 1, 1, 64, 1, 1, 0, r->s, params, NULL);
        if (launch == hipSuccess) {
            r->last_fill = value;
            r->launched = 1;
        }
        int done = seen(&c, 0, launch, hipSuccess);
        done &= seen(&c, 1, hipLaunchHostFunc(r->s, bump, NULL), hipSuccess);
        done &= seen(&c, 2, hipEventRecord(r->e, r->s), hipSuccess);
        done &= seen(&c, 3, hipStreamQuery(r->s), hipErrorNotReady);
        if (done) break;
    }
    return NULL;
}

static void *waiter(void *arg) {
    round_t *r = arg;
    calls_t c = {{"hipEventQuery", "hipEventSynchronize", "hipStreamSynchronize", "hipStreamGetPriority"},
                 {0}};
    pthread_barrier_wait(&r->start);
    for (unsigned i = 0; i < MAX_STEPS; i++) {
        int priority;
        int done = seen(&c, 0, hipEventQuery(r->e), hipErrorNotReady);
        done &= seen(&c, 1, hipEventSynchronize(r->e), hipSuccess);
        done &= seen(&c, 2, hipStreamSynchronize(r->s), hipSuccess);
        done &= seen(&c, 3, hipStreamGetPriority(r->s, &priority), hipSuccess);
        if (done) break;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CODE_OBJECT\n", argv[0]);
        return 2;
    }
    hipModule_t module;
    round_t r = {0};
    CHECK(hipModuleLoad(&module, argv[1]));
    CHECK(hipModuleGetFunction(&r.fill, module, "fill"));
    CHECK(hipMalloc((void **)&r.buf, N * sizeof *r.buf));
    unsigned host[N];
    unsigned seed = 7;
    for (int k = 0; k < ROUNDS; k++) {
        CHECK(hipStreamCreate(&r.s));
        CHECK(hipEventCreateWithFlags(&r.e, hipEventDisableTiming));
        r.base = (unsigned)k * MAX_STEPS;
        r.launched = 0;
        pthread_barrier_init(&r.start, NULL, 3);
        pthread_t t[2];
        pthread_create(&t[0], NULL, launcher, &r);
        pthread_create(&t[1], NULL, waiter, &r);
        pthread_barrier_wait(&r.start);
        seed = seed * 1103515245u + 12345u;
        struct timespec pause = {0, (long)(seed >> 16) % 200000};   /* up to 0.2 ms */
        nanosleep(&pause, NULL);
        if (k % 2) {
            CHECK(hipStreamDestroy(r.s));
            CHECK(hipEventDestroy(r.e));
        } else {
            CHECK(hipEventDestroy(r.e));
            CHECK(hipStreamDestroy(r.s));
        }
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        pthread_barrier_destroy(&r.start);
        if (!r.launched) continue;
        CHECK(hipMemcpy(host, r.buf, sizeof host, hipMemcpyDeviceToHost));
        for (int i = 0; i < N; i++)
            if (host[i] != r.last_fill) {
                fprintf(stderr, "round %d: [%d] = %u, the last fill enqueued was %u\n", k, i, host[i],
                        r.last_fill);
                return 1;
            }
    }
    CHECK(hipFree(r.buf));
    CHECK(hipModuleUnload(module));
    printf("ok %d rounds, %d host calls\n", ROUNDS, atomic_load(&host_calls));
    return 0;
}
