/* Threads hammering the stub's HIP half at once, for ThreadSanitizer (and
 * ASan): streams of both kinds, the null stream, per-thread streams, events
 * across streams, host functions, allocations, captures (relaxed, on
 * non-blocking streams, so the other threads' calls stay legal) and graph
 * launches.
 * Every thread checks its own data; exit status 0 means all were right. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include <hip/hip_runtime_api.h>

#include "check.h"

#define THREADS 8
#define ROUNDS 150
#define N 1024

static atomic_int host_calls;

static void bump(void *user) { atomic_fetch_add((atomic_int *)user, 1); }

static void expect(const unsigned *v, unsigned value, int line) {
    for (int i = 0; i < N; i++)
        if (v[i] != value) {
            fprintf(stderr, "line %d: [%d] = %u, expected %u\n", line, i, v[i], value);
            exit(1);
        }
}

static void *worker(void *arg) {
    int id = (int)(intptr_t)arg;
    hipStream_t blocking, nonblocking;
    hipEvent_t ev;
    unsigned *dev, *host;
    CHECK(hipStreamCreate(&blocking));
    CHECK(hipStreamCreateWithFlags(&nonblocking, hipStreamNonBlocking));
    CHECK(hipEventCreateWithFlags(&ev, hipEventDisableTiming));
    CHECK(hipMalloc((void **)&dev, N * sizeof *dev));
    CHECK(hipHostMalloc((void **)&host, N * sizeof *host, 0));
    for (int r = 0; r < ROUNDS; r++) {
        unsigned v = (unsigned)(id * 100000 + r);
        CHECK(hipMemsetD32Async(dev, (int)v, N, blocking));
        CHECK(hipLaunchHostFunc(blocking, bump, &host_calls));
        CHECK(hipEventRecord(ev, blocking));
        CHECK(hipStreamWaitEvent(nonblocking, ev, 0));
        CHECK(hipMemcpyAsync(host, dev, N * sizeof *dev, hipMemcpyDeviceToHost, nonblocking));
        (void)hipStreamQuery(nonblocking);
        CHECK(hipStreamSynchronize(nonblocking));
        expect(host, v, __LINE__);
        if (r % 10 == 0) {
            void *tmp;
            CHECK(hipMalloc(&tmp, 4096));
            /* the null stream: synchronous calls would break the others' captures */
            CHECK(hipMemsetAsync(tmp, 1, 4096, NULL));
            CHECK(hipStreamSynchronize(NULL));
            CHECK(hipFree(tmp));
            CHECK(hipMemsetD32Async(dev, 7, N, hipStreamPerThread));
            CHECK(hipMemcpyAsync(host, dev, N * sizeof *dev, hipMemcpyDeviceToHost,
                                 hipStreamPerThread));
            CHECK(hipStreamSynchronize(hipStreamPerThread));
            expect(host, 7, __LINE__);
        }
        if (r % 25 == 0) {
            hipGraph_t g;
            hipGraphExec_t x;
            CHECK(hipStreamBeginCapture(nonblocking, hipStreamCaptureModeRelaxed));
            CHECK(hipMemsetD32Async(dev, (int)(v + 1), N, nonblocking));
            CHECK(hipLaunchHostFunc(nonblocking, bump, &host_calls));
            CHECK(hipMemcpyAsync(host, dev, N * sizeof *dev, hipMemcpyDeviceToHost, nonblocking));
            CHECK(hipStreamEndCapture(nonblocking, &g));
            CHECK(hipGraphInstantiate(&x, g, NULL, NULL, 0));
            CHECK(hipGraphLaunch(x, blocking));
            CHECK(hipStreamSynchronize(blocking));
            expect(host, v + 1, __LINE__);
            CHECK(hipGraphExecDestroy(x));
            CHECK(hipGraphDestroy(g));
        }
    }
    CHECK(hipEventDestroy(ev));
    CHECK(hipStreamDestroy(blocking));
    CHECK(hipStreamDestroy(nonblocking));
    CHECK(hipFree(dev));
    CHECK(hipHostFree(host));
    return NULL;
}

int main(void) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    CHECK(hipDeviceSynchronize());
    int expected = THREADS * (ROUNDS + (ROUNDS + 24) / 25);
    if (atomic_load(&host_calls) != expected) {
        fprintf(stderr, "host calls %d, expected %d\n", atomic_load(&host_calls), expected);
        return 1;
    }
    printf("ok %d host calls\n", expected);
    return 0;
}
