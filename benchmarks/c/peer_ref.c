/* The C reference for benchmarks/bench_peer.py: peer copies between devices 0 and 1.
 *
 *   peer_ref [--quick]     -> JSON on stdout (GB/s per size, medians over repetitions)
 *
 * Arms:
 *   d01_sync, d10_sync  hipMemcpyPeer (synchronous), wall clock
 *   d01, d10            hipMemcpyPeerAsync on a stream of the source device +
 *                       hipStreamSynchronize, wall clock (what bench_peer.py's
 *                       `raw` variant does)
 *   d01_events          the same copy timed by a pair of events around it
 *                       (hipEventElapsedTime)
 *   bidirectional       both at once, each on its source device's stream; an event
 *                       recorded after each copy, both synchronized; bytes of both
 * It also checks the data (both directions) and that an event recorded on a device
 * 0 stream orders a device 1 stream (hipStreamWaitEvent).  Needs two devices
 * (the stub: ROCPY_STUB_DEVICES=2).  Built by benchmarks/c/peer_ref.sh.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_ref.h"

static void fill_random(unsigned *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = seed;
    }
}

/* Make `dev` current with its context, enable its access to the other device's memory
 * where it can, and give it two buffers, a non-blocking stream and a timing-free event. */
static void open_device(int dev, int can_access_peer, size_t size, void **a, void **b,
                        hipStream_t *s, hipEvent_t *e) {
    CHECK(hipSetDevice(dev));
    CHECK(hipFree(NULL));
    if (can_access_peer) {
        hipError_t st = hipDeviceEnablePeerAccess(1 - dev, 0);
        if (st != hipSuccess && st != hipErrorPeerAccessAlreadyEnabled) CHECK(st);
    }
    CHECK(hipMalloc(a, size));
    CHECK(hipMalloc(b, size));
    CHECK(hipStreamCreateWithFlags(s, hipStreamNonBlocking));
    CHECK(hipEventCreateWithFlags(e, hipEventDisableTiming));
}

/* Release what open_device made (and leave `dev` current). */
static void close_device(int dev, void *a, void *b, hipStream_t s, hipEvent_t e) {
    CHECK(hipSetDevice(dev));
    CHECK(hipFree(a));
    CHECK(hipFree(b));
    CHECK(hipStreamDestroy(s));
    CHECK(hipEventDestroy(e));
}

enum { D01_SYNC, D10_SYNC, D01, D10, D01_EVENTS, BIDIR, ARMS };
static const char *arm_names[ARMS] = {"d01_sync", "d10_sync", "d01", "d10", "d01_events",
                                      "bidirectional"};

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int reps = quick ? 20 : 100;
    size_t max_size = quick ? (16u << 20) : (256u << 20);
    int count = 0;
    CHECK(hipGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "peer_ref needs two devices; there are %d\n", count);
        return 2;
    }
    int can01 = 0, can10 = 0;
    CHECK(hipDeviceCanAccessPeer(&can01, 0, 1));
    CHECK(hipDeviceCanAccessPeer(&can10, 1, 0));
    void *a0, *b0, *a1, *b1;
    hipStream_t s0, s1;
    hipEvent_t e0, e1, start, stop;
    open_device(0, can01, max_size, &a0, &b0, &s0, &e0);
    CHECK(hipEventCreate(&start));
    CHECK(hipEventCreate(&stop));
    open_device(1, can10, max_size, &a1, &b1, &s1, &e1);

    /* correctness: random data both ways, and a dev1 stream ordered after a dev0 event */
    size_t check_n = (1u << 20) / sizeof(unsigned);
    unsigned *x = malloc(check_n * 4), *y = malloc(check_n * 4), *out = malloc(check_n * 4);
    fill_random(x, check_n, 1);
    fill_random(y, check_n, 2);
    CHECK(hipMemcpy(a0, x, check_n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpy(a1, y, check_n * 4, hipMemcpyHostToDevice));
    CHECK(hipMemcpyPeer(b1, 1, a0, 0, check_n * 4));
    CHECK(hipMemcpyPeer(b0, 0, a1, 1, check_n * 4));
    CHECK(hipMemcpy(out, b1, check_n * 4, hipMemcpyDeviceToHost));
    int ok = memcmp(out, x, check_n * 4) == 0;
    CHECK(hipMemcpy(out, b0, check_n * 4, hipMemcpyDeviceToHost));
    ok = ok && memcmp(out, y, check_n * 4) == 0;
    CHECK(hipMemcpyAsync(a0, y, check_n * 4, hipMemcpyHostToDevice, s0));   /* dev0: new data */
    CHECK(hipEventRecord(e0, s0));
    CHECK(hipStreamWaitEvent(s1, e0, 0));                                   /* dev1 waits */
    CHECK(hipMemcpyPeerAsync(b1, 1, a0, 0, check_n * 4, s1));
    CHECK(hipStreamSynchronize(s1));
    CHECK(hipMemcpy(out, b1, check_n * 4, hipMemcpyDeviceToHost));
    ok = ok && memcmp(out, y, check_n * 4) == 0;
    free(x);
    free(y);
    free(out);

    double *samples = malloc(sizeof(double) * (size_t)reps);
    printf("{\n  \"tool\": \"peer_ref.c\",\n  \"devices\": %d,\n  \"peer_access\": [%d, %d],\n"
           "  \"data_ok\": %s,\n  \"bandwidth_gbps\": {\n", count, can01, can10,
           ok ? "true" : "false");
    for (int arm = 0; arm < ARMS; arm++) {
        printf("    \"%s\": {", arm_names[arm]);
        int first = 1;
        for (size_t size = 4096; size <= max_size; size *= 4) {
            int n = size >= (64u << 20) ? (quick ? 3 : 10) : reps;
            for (int r = -1; r < n; r++) {          /* r == -1: warm-up */
                double t0 = now_us(), t = 0;
                switch (arm) {
                case D01_SYNC:
                    CHECK(hipMemcpyPeer(b1, 1, a0, 0, size));
                    CHECK(hipDeviceSynchronize());
                    break;
                case D10_SYNC:
                    CHECK(hipMemcpyPeer(b0, 0, a1, 1, size));
                    CHECK(hipDeviceSynchronize());
                    break;
                case D01:
                    CHECK(hipMemcpyPeerAsync(b1, 1, a0, 0, size, s0));
                    CHECK(hipStreamSynchronize(s0));
                    break;
                case D10:
                    CHECK(hipMemcpyPeerAsync(b0, 0, a1, 1, size, s1));
                    CHECK(hipStreamSynchronize(s1));
                    break;
                case D01_EVENTS: {
                    float ms = 0;
                    CHECK(hipEventRecord(start, s0));
                    CHECK(hipMemcpyPeerAsync(b1, 1, a0, 0, size, s0));
                    CHECK(hipEventRecord(stop, s0));
                    CHECK(hipEventSynchronize(stop));
                    CHECK(hipEventElapsedTime(&ms, start, stop));
                    t = ms * 1e3;
                    break;
                }
                case BIDIR:
                    CHECK(hipMemcpyPeerAsync(b1, 1, a0, 0, size, s0));
                    CHECK(hipMemcpyPeerAsync(b0, 0, a1, 1, size, s1));
                    CHECK(hipEventRecord(e0, s0));
                    CHECK(hipEventRecord(e1, s1));
                    CHECK(hipEventSynchronize(e0));
                    CHECK(hipEventSynchronize(e1));
                    break;
                }
                if (arm != D01_EVENTS) t = now_us() - t0;
                if (r >= 0) samples[r] = t;
            }
            double bytes = (double)size * (arm == BIDIR ? 2 : 1);
            double med = median(samples, n);
            printf("%s\"%zu\": %.3f", first ? "" : ", ", size, med > 0 ? bytes / med / 1e3 : 0.0);
            first = 0;
        }
        printf("}%s\n", arm + 1 < ARMS ? "," : "");
    }
    printf("  }\n}\n");
    free(samples);
    close_device(0, a0, b0, s0, e0);
    CHECK(hipEventDestroy(start));
    CHECK(hipEventDestroy(stop));
    close_device(1, a1, b1, s1, e1);
    return ok ? 0 : 1;
}
