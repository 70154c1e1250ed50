/* The stub's device table: ROCPY_STUB_DEVICES, ROCPY_STUB_ARCH, and the
 * HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES filters, read once. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub_core.h"

typedef struct arch_profile {
    const char *gfx;
    const char *name;
    uint32_t chip_id, compute_units, wavefront, clock_mhz, mem_clock_mhz, bus_width;
    uint64_t mem_gib;
    uint32_t l2_kib;
    int xnack_capable, sramecc_capable;
} arch_profile_t;

/* Numbers from the public specifications of the parts the targets name. */
static const arch_profile_t PROFILES[] = {
    {"gfx906", "AMD Instinct MI50", 0x66a1, 60, 64, 1725, 1000, 4096, 16, 4096, 1, 1},
    {"gfx908", "AMD Instinct MI100", 0x738c, 120, 64, 1502, 1200, 4096, 32, 8192, 1, 1},
    {"gfx90a", "AMD Instinct MI210", 0x740f, 104, 64, 1700, 1600, 4096, 64, 8192, 1, 1},
    {"gfx940", "AMD Instinct MI300A", 0x74a0, 228, 64, 2100, 2600, 8192, 128, 4096, 1, 1},
    {"gfx941", "AMD Instinct MI300X", 0x74a1, 304, 64, 2100, 2600, 8192, 192, 4096, 1, 1},
    {"gfx942", "AMD Instinct MI300X", 0x74a1, 304, 64, 2100, 2600, 8192, 192, 4096, 1, 1},
    {"gfx1030", "AMD Radeon RX 6800 XT", 0x73bf, 72, 32, 2250, 1000, 256, 16, 4096, 0, 0},
    {"gfx1100", "AMD Radeon RX 7900 XTX", 0x744c, 96, 32, 2500, 1250, 384, 24, 6144, 0, 0},
};

static stub_device_t devices[STUB_MAX_DEVICES];
static int device_count;
static pthread_once_t devices_once = PTHREAD_ONCE_INIT;

static const arch_profile_t *profile_for(const char *gfx) {
    for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++)
        if (strcmp(PROFILES[i].gfx, gfx) == 0) return &PROFILES[i];
    return &PROFILES[2];
}

static uint32_t gfx_version(const char *gfx) {
    /* gfx90a -> 9.0.10, gfx1100 -> 11.0.0: the last two characters are the
     * minor and stepping digits (hex), the rest the major version. */
    size_t n = strlen(gfx);
    if (n < 6) return 0;
    char major[8] = {0};
    memcpy(major, gfx + 3, n - 5 < sizeof major - 1 ? n - 5 : sizeof major - 1);
    uint32_t maj = (uint32_t)strtoul(major, NULL, 10);
    char minor = gfx[n - 2], step = gfx[n - 1];
    uint32_t mi = isdigit((unsigned char)minor) ? (uint32_t)(minor - '0') : (uint32_t)(tolower(minor) - 'a' + 10);
    uint32_t st = isdigit((unsigned char)step) ? (uint32_t)(step - '0') : (uint32_t)(tolower(step) - 'a' + 10);
    return maj * 10000 + mi * 100 + st;
}

/* "gfx90a:sramecc+:xnack-" -> device fields; features default to what the
 * driver reports for the part (xnack off, sramecc on where capable). */
static void set_arch(stub_device_t *d, const char *target) {
    char buf[STUB_ARCH_LEN];
    snprintf(buf, sizeof buf, "%s", target);
    char *colon = strchr(buf, ':');
    if (colon) *colon = '\0';
    buf[sizeof d->gfx - 1] = '\0';
    memcpy(d->gfx, buf, sizeof d->gfx);
    const arch_profile_t *p = profile_for(d->gfx);
    d->sramecc = p->sramecc_capable;
    d->xnack = 0;
    if (strstr(target, "sramecc-")) d->sramecc = 0;
    if (strstr(target, "sramecc+")) d->sramecc = 1;
    if (strstr(target, "xnack+")) d->xnack = 1;
    if (p->xnack_capable)
        snprintf(d->arch, sizeof d->arch, "%s:sramecc%c:xnack%c", d->gfx,
                 d->sramecc ? '+' : '-', d->xnack ? '+' : '-');
    else
        snprintf(d->arch, sizeof d->arch, "%s", d->gfx);
    snprintf(d->name, sizeof d->name, "%s", p->name);
    d->gfx_version = gfx_version(d->gfx);
    d->chip_id = p->chip_id;
    d->compute_units = p->compute_units;
    d->simds_per_cu = 4;
    d->wavefront_size = p->wavefront;
    d->max_clock_mhz = p->clock_mhz;
    d->memory_clock_mhz = p->mem_clock_mhz;
    d->memory_bus_width = p->bus_width;
    d->global_mem_size = p->mem_gib << 30;
    d->lds_size = 64 * 1024;
    d->l2_cache_size = p->l2_kib * 1024;
}

/* The n-th comma-separated item of list (or the last one if fewer). */
static void nth_item(const char *list, int n, char *out, size_t outlen) {
    const char *start = list;
    for (int i = 0; i < n; i++) {
        const char *comma = strchr(start, ',');
        if (!comma) break;
        start = comma + 1;
    }
    size_t len = strcspn(start, ",");
    if (len >= outlen) len = outlen - 1;
    memcpy(out, start, len);
    out[len] = '\0';
}

static void init_devices(void) {
    const char *count_env = getenv("ROCPY_STUB_DEVICES");
    int physical = count_env ? atoi(count_env) : 1;
    if (physical < 0) physical = 0;
    if (physical > STUB_MAX_DEVICES) physical = STUB_MAX_DEVICES;
    const char *arch_env = getenv("ROCPY_STUB_ARCH");
    if (!arch_env || !*arch_env) arch_env = "gfx90a";

    /* HIP_VISIBLE_DEVICES applies on top of ROCR_VISIBLE_DEVICES, as in ROCm */
    int visible[STUB_MAX_DEVICES], nvisible = 0;
    for (int i = 0; i < physical; i++) visible[nvisible++] = i;
    const char *filters[] = {getenv("ROCR_VISIBLE_DEVICES"), getenv("HIP_VISIBLE_DEVICES")};
    for (int f = 0; f < 2; f++) {
        if (!filters[f]) continue;
        int picked[STUB_MAX_DEVICES], npicked = 0;
        const char *s = filters[f];
        while (*s && npicked < STUB_MAX_DEVICES) {
            char *end;
            long v = strtol(s, &end, 10);
            if (end == s || v < 0 || v >= nvisible) break;   /* stop at the first invalid id */
            picked[npicked++] = visible[v];
            s = *end == ',' ? end + 1 : end;
            if (*end != ',') break;
        }
        memcpy(visible, picked, sizeof(int) * (size_t)npicked);
        nvisible = npicked;
    }
    for (int i = 0; i < nvisible; i++) {
        stub_device_t *d = &devices[i];
        char target[STUB_ARCH_LEN];
        nth_item(arch_env, visible[i], target, sizeof target);
        memset(d, 0, sizeof *d);
        d->index = i;
        d->physical = visible[i];
        set_arch(d, target);
        d->pci_bus_id = 0x03 + (uint32_t)visible[i] * 0x40;
    }
    device_count = nvisible;
}

int stub_device_count(void) {
    pthread_once(&devices_once, init_devices);
    return device_count;
}

stub_device_t *stub_device(int index) {
    pthread_once(&devices_once, init_devices);
    if (index < 0 || index >= device_count) return NULL;
    return &devices[index];
}

int rocpy_stub_device_count(void) { return stub_device_count(); }
