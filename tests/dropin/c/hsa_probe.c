/* An HSA program written against the real headers, nothing of rocpy in it:
 * agents and pools, memory, a copy in every direction (host<->GPU, GPU<->GPU
 * across two devices), signals, a queue with a barrier packet.  Built by
 * tests/dropin/test_programs.py, linked to whatever libhsa-runtime64.so.1
 * the loader finds; prints the path of the one it loaded, then "ok". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#define CHECK(call)                                                                  \
    do {                                                                             \
        hsa_status_t s_ = (call);                                                    \
        if (s_ != HSA_STATUS_SUCCESS) {                                              \
            const char *m_ = "?";                                                    \
            hsa_status_string(s_, &m_);                                              \
            fprintf(stderr, "line %d: %s: 0x%x %s\n", __LINE__, #call, s_, m_);      \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

typedef struct { hsa_agent_t cpu, gpu[8]; int ngpu; } agents_t;
typedef struct { hsa_amd_memory_pool_t pool; int found; } pool_t;

static hsa_status_t on_agent(hsa_agent_t a, void *data) {
    agents_t *x = data;
    hsa_device_type_t type;
    CHECK(hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type));
    if (type == HSA_DEVICE_TYPE_CPU) x->cpu = a;
    else if (type == HSA_DEVICE_TYPE_GPU && x->ngpu < 8) x->gpu[x->ngpu++] = a;
    return HSA_STATUS_SUCCESS;
}

static hsa_status_t on_pool(hsa_amd_memory_pool_t p, void *data) {
    pool_t *x = data;
    hsa_amd_segment_t seg;
    bool alloc;
    CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg));
    CHECK(hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
    if (seg == HSA_AMD_SEGMENT_GLOBAL && alloc && !x->found) {
        x->pool = p;
        x->found = 1;
    }
    return HSA_STATUS_SUCCESS;
}

static void *alloc_on(hsa_agent_t agent, size_t size) {
    pool_t p = {0};
    CHECK(hsa_amd_agent_iterate_memory_pools(agent, on_pool, &p));
    if (!p.found) { fprintf(stderr, "no pool\n"); exit(1); }
    void *ptr;
    CHECK(hsa_amd_memory_pool_allocate(p.pool, size, 0, &ptr));
    return ptr;
}

static void copy(void *dst, hsa_agent_t da, const void *src, hsa_agent_t sa, size_t n) {
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    CHECK(hsa_amd_memory_async_copy(dst, da, src, sa, n, 0, NULL, done));
    if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                  HSA_WAIT_STATE_BLOCKED) != 0) { fprintf(stderr, "wait\n"); exit(1); }
    CHECK(hsa_signal_destroy(done));
}

int main(void) {
    CHECK(hsa_init());
    agents_t ag = {0};
    CHECK(hsa_iterate_agents(on_agent, &ag));
    char name[64];
    CHECK(hsa_agent_get_info(ag.gpu[0], HSA_AGENT_INFO_NAME, name));
    printf("gpus %d first %s\n", ag.ngpu, name);
    if (ag.ngpu < 2) { fprintf(stderr, "need two GPUs\n"); return 1; }

    const size_t n = 1 << 16;
    unsigned char *host = alloc_on(ag.cpu, n), *back = alloc_on(ag.cpu, n);
    void *g0 = alloc_on(ag.gpu[0], n), *g1 = alloc_on(ag.gpu[1], n);
    for (size_t i = 0; i < n; i++) host[i] = (unsigned char)(i * 7 + 3);
    hsa_agent_t both[3] = {ag.cpu, ag.gpu[0], ag.gpu[1]};
    CHECK(hsa_amd_agents_allow_access(3, both, NULL, host));
    CHECK(hsa_amd_agents_allow_access(3, both, NULL, back));
    CHECK(hsa_amd_agents_allow_access(2, both + 1, NULL, g0));
    CHECK(hsa_amd_agents_allow_access(2, both + 1, NULL, g1));
    copy(g0, ag.gpu[0], host, ag.cpu, n);          /* host -> GPU 0 */
    copy(g1, ag.gpu[1], g0, ag.gpu[0], n);         /* GPU 0 -> GPU 1 */
    copy(back, ag.cpu, g1, ag.gpu[1], n);          /* GPU 1 -> host */
    if (memcmp(host, back, n) != 0) { fprintf(stderr, "copies differ\n"); return 1; }
    CHECK(hsa_memory_copy(back, host, 16));        /* host -> host */

    hsa_signal_t s;
    CHECK(hsa_signal_create(5, 0, NULL, &s));
    hsa_signal_subtract_screlease(s, 2);
    if (hsa_signal_load_scacquire(s) != 3) { fprintf(stderr, "signal value\n"); return 1; }

    hsa_queue_t *q;
    CHECK(hsa_queue_create(ag.gpu[0], 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    uint64_t idx = hsa_queue_add_write_index_relaxed(q, 1);
    hsa_barrier_and_packet_t *pkt = (hsa_barrier_and_packet_t *)q->base_address + (idx % q->size);
    memset((char *)pkt + 4, 0, sizeof *pkt - 4);
    pkt->completion_signal = done;
    uint16_t header = (HSA_PACKET_TYPE_BARRIER_AND << HSA_PACKET_HEADER_TYPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t *)pkt, header, __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)idx);
    if (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX,
                                  HSA_WAIT_STATE_BLOCKED) != 0) { fprintf(stderr, "barrier\n"); return 1; }
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_signal_destroy(done));
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_amd_memory_pool_free(host));
    CHECK(hsa_amd_memory_pool_free(back));
    CHECK(hsa_amd_memory_pool_free(g0));
    CHECK(hsa_amd_memory_pool_free(g1));
    /* a bad handle gets a status, not a crash */
    hsa_signal_t none = {0};
    if (hsa_signal_destroy(none) != HSA_STATUS_ERROR_INVALID_ARGUMENT) {
        fprintf(stderr, "null signal destroy\n");
        return 1;
    }
    Dl_info info;
    if (!dladdr((void *)hsa_init, &info)) return 1;
    printf("lib %s\n", info.dli_fname);
    CHECK(hsa_shut_down());
    printf("ok\n");
    return 0;
}
