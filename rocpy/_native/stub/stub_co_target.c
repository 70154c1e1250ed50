/* Target ids: from an ELF's e_flags, from a bundle entry id, and ROCm's rule
 * for which code object targets serve which device targets. */
#include <stdio.h>
#include <string.h>

#include "stub_co_internal.h"

#define XNACK 1u     /* the processor supports xnack */
#define SRAMECC 2u   /* ... sramecc */

typedef struct mach {
    uint8_t value;               /* EF_AMDGPU_MACH_AMDGCN_* */
    uint8_t features;
    const char *name;
} mach_t;

/* LLVM's llvm/BinaryFormat/ELF.h values; 0x40 and 0x4b were gfx940/gfx941
 * before LLVM retired those processors. */
static const mach_t machs[] = {
    {0x20, 0, "gfx600"}, {0x21, 0, "gfx601"}, {0x3a, 0, "gfx602"},
    {0x22, 0, "gfx700"}, {0x23, 0, "gfx701"}, {0x24, 0, "gfx702"},
    {0x25, 0, "gfx703"}, {0x26, 0, "gfx704"}, {0x3b, 0, "gfx705"},
    {0x28, XNACK, "gfx801"}, {0x29, 0, "gfx802"}, {0x2a, 0, "gfx803"},
    {0x3c, 0, "gfx805"}, {0x2b, XNACK, "gfx810"},
    {0x2c, XNACK, "gfx900"}, {0x2d, XNACK, "gfx902"}, {0x2e, XNACK, "gfx904"},
    {0x2f, XNACK | SRAMECC, "gfx906"}, {0x30, XNACK | SRAMECC, "gfx908"},
    {0x31, XNACK, "gfx909"}, {0x3f, XNACK | SRAMECC, "gfx90a"},
    {0x32, XNACK, "gfx90c"}, {0x40, XNACK | SRAMECC, "gfx940"},
    {0x4b, XNACK | SRAMECC, "gfx941"}, {0x4c, XNACK | SRAMECC, "gfx942"},
    {0x4f, XNACK | SRAMECC, "gfx950"},
    {0x33, XNACK, "gfx1010"}, {0x34, XNACK, "gfx1011"}, {0x35, XNACK, "gfx1012"},
    {0x42, XNACK, "gfx1013"},
    {0x36, 0, "gfx1030"}, {0x37, 0, "gfx1031"}, {0x38, 0, "gfx1032"},
    {0x39, 0, "gfx1033"}, {0x3e, 0, "gfx1034"}, {0x3d, 0, "gfx1035"},
    {0x45, 0, "gfx1036"},
    {0x41, 0, "gfx1100"}, {0x46, 0, "gfx1101"}, {0x47, 0, "gfx1102"},
    {0x44, 0, "gfx1103"}, {0x43, 0, "gfx1150"}, {0x4a, 0, "gfx1151"},
    {0x55, 0, "gfx1152"}, {0x58, 0, "gfx1153"},
    {0x48, 0, "gfx1200"}, {0x4e, 0, "gfx1201"}, {0x49, 0, "gfx1250"},
    {0x51, XNACK, "gfx9-generic"}, {0x5f, XNACK | SRAMECC, "gfx9-4-generic"},
    {0x52, XNACK, "gfx10-1-generic"}, {0x53, 0, "gfx10-3-generic"},
    {0x54, 0, "gfx11-generic"}, {0x59, 0, "gfx12-generic"},
};

/* Which processors each generic target covers (AMDGPUUsage). */
static const struct { const char *generic, *members[9]; } generics[] = {
    {"gfx9-generic", {"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}},
    {"gfx9-4-generic", {"gfx940", "gfx941", "gfx942", "gfx950"}},
    {"gfx10-1-generic", {"gfx1010", "gfx1011", "gfx1012", "gfx1013"}},
    {"gfx10-3-generic", {"gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
                         "gfx1035", "gfx1036"}},
    {"gfx11-generic", {"gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150",
                       "gfx1151", "gfx1152", "gfx1153"}},
    {"gfx12-generic", {"gfx1200", "gfx1201"}},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool stub_co_target_from_elf(uint32_t e_flags, unsigned abi_version,
                             char out[STUB_CO_TARGET_LEN]) {
    const mach_t *m = NULL;
    for (size_t i = 0; i < COUNT(machs); i++)
        if (machs[i].value == (e_flags & 0xffu)) m = &machs[i];
    if (!m) return false;
    const char *sramecc = "", *xnack = "";
    if (abi_version == 1) {
        /* v3: a set bit is "on"; clear means "off" where the processor has
         * the feature (ROCr and CLR read it so). */
        if (e_flags & 0x200u) sramecc = ":sramecc+";
        else if (m->features & SRAMECC) sramecc = ":sramecc-";
        if (e_flags & 0x100u) xnack = ":xnack+";
        else if (m->features & XNACK) xnack = ":xnack-";
    } else {
        switch (e_flags & 0xc00u) {
        case 0x800u: sramecc = ":sramecc-"; break;
        case 0xc00u: sramecc = ":sramecc+"; break;
        default: break;                           /* unsupported or any */
        }
        switch (e_flags & 0x300u) {
        case 0x200u: xnack = ":xnack-"; break;
        case 0x300u: xnack = ":xnack+"; break;
        default: break;
        }
    }
    snprintf(out, STUB_CO_TARGET_LEN, "%s%s%s", m->name, sramecc, xnack);
    return true;
}

static bool starts(const char *s, size_t len, const char *prefix) {
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

bool stub_co_target_from_bundle_id(const char *id, size_t len,
                                   char out[STUB_CO_TARGET_LEN]) {
    /* <kind>-<triple>-<target id>: kind is hip, hipv4, openmp...; the triple
     * amdgcn-amd-amdhsa, with an empty environment ("--gfx90a") or, in
     * older bundles, without one ("-gfx90a"). */
    const char *dash = memchr(id, '-', len);
    if (!dash) return false;
    size_t rest = len - (size_t)(dash + 1 - id);
    const char *p = dash + 1;
    if (!starts(p, rest, "amdgcn-amd-amdhsa-")) return false;
    p += 18;
    rest -= 18;
    if (!starts(p, rest, "gfx")) {
        const char *env_end = memchr(p, '-', rest);   /* skip the environment */
        if (!env_end) return false;
        rest -= (size_t)(env_end + 1 - p);
        p = env_end + 1;
    }
    if (!starts(p, rest, "gfx") || rest >= STUB_CO_TARGET_LEN) return false;
    if (memchr(p, '\0', rest)) return false;
    memcpy(out, p, rest);
    out[rest] = '\0';
    return true;
}

typedef struct parsed {
    char proc[32];
    char xnack, sramecc;         /* '+', '-' or 0 (absent) */
} parsed_t;

static bool parse_target(const char *t, parsed_t *out) {
    memset(out, 0, sizeof *out);
    if (!t) return false;
    if (strncmp(t, "amdgcn-amd-amdhsa--", 19) == 0) t += 19;
    size_t n = strcspn(t, ":");
    if (n == 0 || n >= sizeof out->proc) return false;
    memcpy(out->proc, t, n);
    t += n;
    while (*t == ':') {
        t++;
        size_t f = strcspn(t, ":");
        if (f < 2 || (t[f - 1] != '+' && t[f - 1] != '-')) return false;
        char *slot = NULL;
        if (f - 1 == 5 && strncmp(t, "xnack", 5) == 0) slot = &out->xnack;
        else if (f - 1 == 7 && strncmp(t, "sramecc", 7) == 0) slot = &out->sramecc;
        if (!slot || *slot) return false;         /* unknown or repeated */
        *slot = t[f - 1];
        t += f;
    }
    return *t == '\0';
}

/* 2: the same processor; 1: a generic target covering it; 0: neither. */
static int processor_match(const char *code, const char *device) {
    if (strcmp(code, device) == 0) return 2;
    for (size_t g = 0; g < COUNT(generics); g++) {
        if (strcmp(generics[g].generic, code) != 0) continue;
        for (size_t i = 0; i < COUNT(generics[g].members) && generics[g].members[i]; i++)
            if (strcmp(generics[g].members[i], device) == 0) return 1;
    }
    return 0;
}

int stub_co_target_score(const char *code_target, const char *device_target) {
    parsed_t code, dev;
    if (!parse_target(code_target, &code) || !parse_target(device_target, &dev))
        return -1;
    int proc = processor_match(code.proc, dev.proc);
    if (!proc) return -1;
    int score = proc * 4;
    /* A feature the code leaves as 'any' runs anywhere; one it spells must
     * be the device's setting (a device that does not spell a feature does
     * not support it, so it matches only 'any'). */
    if (code.xnack && code.xnack != dev.xnack) return -1;
    if (code.sramecc && code.sramecc != dev.sramecc) return -1;
    score += (code.xnack != 0) + (code.sramecc != 0);
    return score;
}

bool stub_target_matches(const char *code_target, const char *device_target) {
    return stub_co_target_score(code_target, device_target) >= 0;
}
