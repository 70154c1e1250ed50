/* A readable report of GPU memory faults (fault.h). */
#include "fault.h"

#include <stdio.h>
#include <string.h>

static uint64_t reported;
static uint64_t last_agent, last_address;
static uint32_t last_reason;
static int have_last;

static const struct {
    uint32_t bit;
    const char *text;
} reasons[] = {
    {HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT, "page not present or supervisor privilege"},
    {HSA_AMD_MEMORY_FAULT_READ_ONLY, "write access to a read-only page"},
    {HSA_AMD_MEMORY_FAULT_NX, "execute access to a page marked no-execute"},
    {HSA_AMD_MEMORY_FAULT_HOST_ONLY, "GPU access to a host-only page"},
    {HSA_AMD_MEMORY_FAULT_DRAMECC, "DRAM ECC failure"},
    {HSA_AMD_MEMORY_FAULT_IMPRECISE, "imprecise fault address"},
    {HSA_AMD_MEMORY_FAULT_SRAMECC, "SRAM ECC failure"},
    {(uint32_t)HSA_AMD_MEMORY_FAULT_HANG, "GPU reset after a hang"},
};

void rocpy_hsa_fault_reason_text(uint32_t mask, char *buf, uint32_t size) {
    size_t used = 0;
    if (!size) return;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        if (!(mask & reasons[i].bit)) continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", reasons[i].text);
        if (n < 0 || (size_t)n >= size - used) return;
        used += (size_t)n;
    }
    if (!used) snprintf(buf, size, "unknown reason");
}

/* One event once: a handler registered twice sees the same fault twice. */
static int first_time(uint64_t agent, uint64_t address, uint32_t reason) {
    int dup = __atomic_load_n(&have_last, __ATOMIC_ACQUIRE) && last_agent == agent &&
              last_address == address && last_reason == reason;
    if (dup) return 0;
    last_agent = agent;
    last_address = address;
    last_reason = reason;
    __atomic_store_n(&have_last, 1, __ATOMIC_RELEASE);
    return 1;
}

static hsa_amd_system_event_callback_t hook;
static void *hook_data;

void rocpy_hsa_set_event_hook(hsa_amd_system_event_callback_t fn, void *data) {
    __atomic_store_n(&hook_data, data, __ATOMIC_RELAXED);
    __atomic_store_n(&hook, fn, __ATOMIC_RELEASE);
}

hsa_status_t rocpy_hsa_report_system_event(const hsa_amd_event_t *event, void *data) {
    (void)data;
    if (!event) return HSA_STATUS_ERROR;
    /* Python handlers first (rocpy.hsa.events): one of them handling the
     * event keeps the process alive, and nothing is printed */
    hsa_amd_system_event_callback_t fn = __atomic_load_n(&hook, __ATOMIC_ACQUIRE);
    if (fn && fn(event, __atomic_load_n(&hook_data, __ATOMIC_RELAXED)) == HSA_STATUS_SUCCESS)
        return HSA_STATUS_SUCCESS;
    if (event->event_type != HSA_AMD_GPU_MEMORY_FAULT_EVENT) {
        fprintf(stderr, "rocpy: HSA system event of type %d\n", (int)event->event_type);
        fflush(stderr);
        __atomic_add_fetch(&reported, 1, __ATOMIC_RELAXED);
        return HSA_STATUS_ERROR;
    }
    const hsa_amd_gpu_memory_fault_info_t *f = &event->memory_fault;
    if (!first_time(f->agent.handle, f->virtual_address, f->fault_reason_mask)) return HSA_STATUS_ERROR;
    char name[64] = "unknown agent", product[64] = "", why[256];
    uint32_t node = 0;
    if (hsa_agent_get_info(f->agent, HSA_AGENT_INFO_NAME, name) != HSA_STATUS_SUCCESS)
        strcpy(name, "unknown agent");
    name[sizeof name - 1] = '\0';
    if (hsa_agent_get_info(f->agent, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_PRODUCT_NAME, product) !=
        HSA_STATUS_SUCCESS)
        product[0] = '\0';
    product[sizeof product - 1] = '\0';
    hsa_agent_get_info(f->agent, HSA_AGENT_INFO_NODE, &node);
    rocpy_hsa_fault_reason_text(f->fault_reason_mask, why, sizeof why);
    fprintf(stderr,
            "rocpy: GPU memory fault on agent %s%s%s%s (node %u, handle 0x%llx) accessing address "
            "0x%llx: %s (reason mask 0x%x). The HSA runtime aborts the process.\n",
            name, product[0] ? " (" : "", product, product[0] ? ")" : "", node,
            (unsigned long long)f->agent.handle, (unsigned long long)f->virtual_address, why,
            (unsigned)f->fault_reason_mask);
    fflush(stderr);
    __atomic_add_fetch(&reported, 1, __ATOMIC_RELAXED);
    return HSA_STATUS_ERROR;   /* not handled: the runtime aborts, as without rocpy */
}

uint64_t rocpy_hsa_reported_events(void) { return __atomic_load_n(&reported, __ATOMIC_RELAXED); }
