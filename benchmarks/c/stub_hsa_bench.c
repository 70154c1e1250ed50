/* The stub's HSA runtime measured from C, the way an application drives it:
 *
 *   queue throughput   empty-kernel dispatches per second, each packet rung
 *                      (HIP's pattern) and rung once per batch of 64
 *   dispatch latency   one empty dispatch, written, rung, completion awaited
 *   barrier latency    one barrier-AND packet without dependencies, round trip
 *   signal wake-up     another thread blocked in hsa_signal_wait_scacquire:
 *                      time from the store to the waiter running again
 *
 * usage: stub_hsa_bench EMPTY_HSACO [--json PATH]
 * EMPTY_HSACO: tests/kernels/empty.hip compiled with hipcc --genco (the
 * Makefile does it).  Link against the stub's C sources (see Makefile). */
#define _GNU_SOURCE
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(call)                                                                            \
    do {                                                                                       \
        hsa_status_t s_ = (call);                                                              \
        if (s_ != HSA_STATUS_SUCCESS) {                                                        \
            const char *text_ = "?";                                                           \
            hsa_status_string(s_, &text_);                                                     \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, text_);             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct stats {
    double median_us, p99_us, mean_us;
} stats_t;

static stats_t summarize(uint64_t *ns, int n) {
    qsort(ns, (size_t)n, sizeof *ns, cmp_u64);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += (double)ns[i];
    return (stats_t){ns[n / 2] / 1e3, ns[(n * 99) / 100] / 1e3, sum / n / 1e3};
}

/* ---- setup ---------------------------------------------------------------- */

static hsa_agent_t gpu, cpu;

static hsa_status_t pick_agent(hsa_agent_t a, void *data) {
    (void)data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_GPU && !gpu.handle) gpu = a;
    if (type == HSA_DEVICE_TYPE_CPU && !cpu.handle) cpu = a;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t pick_kernarg_pool(hsa_amd_memory_pool_t pool, void *data) {
    uint32_t flags;
    CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
    if (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) {
        *(hsa_amd_memory_pool_t *)data = pool;
        return HSA_STATUS_INFO_BREAK;
    }
    return HSA_STATUS_SUCCESS;
}

static uint64_t load_kernel(const char *path, hsa_executable_t *exe, hsa_code_object_reader_t *reader) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    CHECK(hsa_code_object_reader_create_from_file(fileno(f), reader));
    fclose(f);
    CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, exe));
    CHECK(hsa_executable_load_agent_code_object(*exe, gpu, *reader, NULL, NULL));
    CHECK(hsa_executable_freeze(*exe, NULL));
    hsa_executable_symbol_t sym;
    CHECK(hsa_executable_get_symbol_by_name(*exe, "empty.kd", &gpu, &sym));
    uint64_t object;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
    return object;
}

/* ---- packets ------------------------------------------------------------------ */

static uint16_t header_of(hsa_packet_type_t type) {
    return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

/* Reserve a slot (waiting while the ring is full), fill the body; the header
 * is published by the caller with an atomic release store. */
static uint64_t reserve(hsa_queue_t *q) {
    uint64_t index = hsa_queue_add_write_index_scacq_screl(q, 1);
    while (index - hsa_queue_load_read_index_scacquire(q) >= q->size) sched_yield();
    return index;
}

static void write_dispatch(hsa_queue_t *q, uint64_t index, uint64_t object, void *kernarg, hsa_signal_t done) {
    hsa_kernel_dispatch_packet_t *p = (hsa_kernel_dispatch_packet_t *)q->base_address + (index & (q->size - 1));
    memset((char *)p + 2, 0, sizeof *p - 2);
    p->setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
    p->workgroup_size_x = p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = object;
    p->kernarg_address = kernarg;
    p->completion_signal = done;
    __atomic_store_n(&p->header, header_of(HSA_PACKET_TYPE_KERNEL_DISPATCH), __ATOMIC_RELEASE);
}

static void write_barrier(hsa_queue_t *q, uint64_t index, hsa_signal_t done) {
    hsa_barrier_and_packet_t *p = (hsa_barrier_and_packet_t *)q->base_address + (index & (q->size - 1));
    memset((char *)p + 2, 0, sizeof *p - 2);
    p->completion_signal = done;
    __atomic_store_n(&p->header, header_of(HSA_PACKET_TYPE_BARRIER_AND), __ATOMIC_RELEASE);
}

static void wait_zero(hsa_signal_t s) {
    while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {
    }
}

/* ---- the measurements -------------------------------------------------------------- */

static double throughput(hsa_queue_t *q, uint64_t object, void *kernarg, int n, int batch) {
    hsa_signal_t done;
    CHECK(hsa_signal_create(n, 0, NULL, &done));
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        uint64_t index = reserve(q);
        write_dispatch(q, index, object, kernarg, done);
        if ((i + 1) % batch == 0 || i + 1 == n) hsa_signal_store_screlease(q->doorbell_signal, (int64_t)index);
    }
    wait_zero(done);
    double secs = (double)(now_ns() - t0) / 1e9;
    CHECK(hsa_signal_destroy(done));
    return n / secs;
}

static stats_t dispatch_latency(hsa_queue_t *q, uint64_t object, void *kernarg, int n) {
    uint64_t *ns = malloc(sizeof *ns * (size_t)n);
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    for (int i = 0; i < n; i++) {
        hsa_signal_store_relaxed(done, 1);
        uint64_t t0 = now_ns();
        uint64_t index = reserve(q);
        write_dispatch(q, index, object, kernarg, done);
        hsa_signal_store_screlease(q->doorbell_signal, (int64_t)index);
        wait_zero(done);
        ns[i] = now_ns() - t0;
    }
    CHECK(hsa_signal_destroy(done));
    stats_t s = summarize(ns, n);
    free(ns);
    return s;
}

static stats_t barrier_latency(hsa_queue_t *q, int n) {
    uint64_t *ns = malloc(sizeof *ns * (size_t)n);
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    for (int i = 0; i < n; i++) {
        hsa_signal_store_relaxed(done, 1);
        uint64_t t0 = now_ns();
        uint64_t index = reserve(q);
        write_barrier(q, index, done);
        hsa_signal_store_screlease(q->doorbell_signal, (int64_t)index);
        wait_zero(done);
        ns[i] = now_ns() - t0;
    }
    CHECK(hsa_signal_destroy(done));
    stats_t s = summarize(ns, n);
    free(ns);
    return s;
}

/* Ping-pong: the main thread stamps t0 and stores i into `ping`; the waiter
 * wakes, stamps its time and answers on `pong`. */
typedef struct pingpong {
    hsa_signal_t ping, pong;
    int n;
    uint64_t *woke;
} pingpong_t;

static void *waiter(void *arg) {
    pingpong_t *pp = arg;
    for (int i = 1; i <= pp->n; i++) {
        while (hsa_signal_wait_scacquire(pp->ping, HSA_SIGNAL_CONDITION_EQ, i, UINT64_MAX,
                                         HSA_WAIT_STATE_BLOCKED) != i) {
        }
        pp->woke[i - 1] = now_ns();
        hsa_signal_store_screlease(pp->pong, i);
    }
    return NULL;
}

static stats_t wakeup_latency(int n) {
    pingpong_t pp = {{0}, {0}, n, malloc(sizeof(uint64_t) * (size_t)n)};
    uint64_t *sent = malloc(sizeof(uint64_t) * (size_t)n);
    CHECK(hsa_signal_create(0, 0, NULL, &pp.ping));
    CHECK(hsa_signal_create(0, 0, NULL, &pp.pong));
    pthread_t t;
    pthread_create(&t, NULL, waiter, &pp);
    for (int i = 1; i <= n; i++) {
        usleep(20);   /* let the waiter fall asleep: this measures a wake-up, not a poll */
        sent[i - 1] = now_ns();
        hsa_signal_store_screlease(pp.ping, i);
        while (hsa_signal_wait_scacquire(pp.pong, HSA_SIGNAL_CONDITION_EQ, i, UINT64_MAX,
                                         HSA_WAIT_STATE_BLOCKED) != i) {
        }
    }
    pthread_join(t, NULL);
    for (int i = 0; i < n; i++) pp.woke[i] -= sent[i];
    stats_t s = summarize(pp.woke, n);
    CHECK(hsa_signal_destroy(pp.ping));
    CHECK(hsa_signal_destroy(pp.pong));
    free(pp.woke);
    free(sent);
    return s;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s EMPTY_HSACO [--json PATH]\n", argv[0]);
        return 2;
    }
    const char *json = argc >= 4 && strcmp(argv[2], "--json") == 0 ? argv[3] : NULL;
    CHECK(hsa_init());
    CHECK(hsa_iterate_agents(pick_agent, NULL));
    hsa_amd_memory_pool_t kernarg_pool = {0};
    hsa_amd_agent_iterate_memory_pools(cpu, pick_kernarg_pool, &kernarg_pool);
    void *kernarg;
    CHECK(hsa_amd_memory_pool_allocate(kernarg_pool, 64, 0, &kernarg));
    CHECK(hsa_amd_agents_allow_access(1, &gpu, NULL, kernarg));
    hsa_executable_t exe;
    hsa_code_object_reader_t reader;
    uint64_t object = load_kernel(argv[1], &exe, &reader);
    hsa_queue_t *q;
    CHECK(hsa_queue_create(gpu, 4096, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));

    throughput(q, object, kernarg, 2000, 1);   /* warm-up */
    double per_packet = throughput(q, object, kernarg, 200000, 1);
    double batched = throughput(q, object, kernarg, 200000, 64);
    stats_t dispatch = dispatch_latency(q, object, kernarg, 20000);
    stats_t barrier = barrier_latency(q, 20000);
    stats_t wakeup = wakeup_latency(20000);

    printf("%-40s %14s\n", "stub HSA runtime (C)", "");
    printf("%-40s %14.0f /s\n", "empty dispatches, doorbell each", per_packet);
    printf("%-40s %14.0f /s\n", "empty dispatches, doorbell per 64", batched);
    printf("%-40s %8.2f us median  %8.2f p99  %8.2f mean\n", "dispatch round trip", dispatch.median_us,
           dispatch.p99_us, dispatch.mean_us);
    printf("%-40s %8.2f us median  %8.2f p99  %8.2f mean\n", "barrier-AND round trip", barrier.median_us,
           barrier.p99_us, barrier.mean_us);
    printf("%-40s %8.2f us median  %8.2f p99  %8.2f mean\n", "signal store -> blocked waiter runs",
           wakeup.median_us, wakeup.p99_us, wakeup.mean_us);
    if (json) {
        FILE *f = fopen(json, "w");
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        time_t t = time(NULL);
        char date[32];
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
        fprintf(f,
                "{\"benchmark\": \"stub_hsa_bench\", \"backend\": \"stub\", \"machine\": \"%s\", \"cpus\": %ld, "
                "\"date\": \"%s\",\n \"dispatches_per_s_ring_each\": %.0f, \"dispatches_per_s_ring_per_64\": %.0f,\n"
                " \"dispatch_round_trip_us\": {\"median\": %.3f, \"p99\": %.3f, \"mean\": %.3f},\n"
                " \"barrier_round_trip_us\": {\"median\": %.3f, \"p99\": %.3f, \"mean\": %.3f},\n"
                " \"signal_wakeup_us\": {\"median\": %.3f, \"p99\": %.3f, \"mean\": %.3f}}\n",
                host, sysconf(_SC_NPROCESSORS_ONLN), date, per_packet, batched, dispatch.median_us,
                dispatch.p99_us, dispatch.mean_us, barrier.median_us, barrier.p99_us, barrier.mean_us,
                wakeup.median_us, wakeup.p99_us, wakeup.mean_us);
        fclose(f);
    }
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_executable_destroy(exe));
    CHECK(hsa_code_object_reader_destroy(reader));
    CHECK(hsa_amd_memory_pool_free(kernarg));
    CHECK(hsa_shut_down());
    return 0;
}
