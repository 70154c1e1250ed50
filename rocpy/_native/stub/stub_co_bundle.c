/* Clang offload bundles: "__CLANG_OFFLOAD_BUNDLE__", a little-endian u64
 * entry count, then per entry offset u64, size u64, id length u64, id bytes.
 * Entries must lie inside the file, after the header, without overlapping
 * (empty entries, like the host's, take no room).  Compressed bundles
 * ("CCOB") are refused as unsupported. */
#include <stdlib.h>
#include <string.h>

#include "stub_co_internal.h"

#define MAGIC "__CLANG_OFFLOAD_BUNDLE__"
#define MAGIC_LEN 24u
#define ENTRY_HEADER 24u

bool stub_co_is_bundle(const void *data, size_t size) {
    return data && size >= MAGIC_LEN && memcmp(data, MAGIC, MAGIC_LEN) == 0;
}

bool stub_co_is_compressed_bundle(const void *data, size_t size) {
    return data && size >= 4 && memcmp(data, "CCOB", 4) == 0;
}

typedef struct range {
    uint64_t offset, size;
} range_t;

static int by_offset(const void *a, const void *b) {
    const range_t *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Entries' code must not overlap each other or the header. */
static bool disjoint(range_t *r, uint64_t n, uint64_t header_end) {
    qsort(r, (size_t)n, sizeof *r, by_offset);
    uint64_t end = header_end;
    for (uint64_t i = 0; i < n; i++) {
        if (r[i].offset < end) return false;
        end = r[i].offset + r[i].size;           /* in range: checked before */
    }
    return true;
}

stub_co_status_t stub_co_bundle_select(const uint8_t *data, size_t size,
                                       const char *device_target,
                                       uint64_t *elf_offset, uint64_t *elf_size) {
    if (!stub_co_is_bundle(data, size) || size < MAGIC_LEN + 8) return STUB_CO_INVALID;
    uint64_t count = stub_co_le64(data + MAGIC_LEN);
    if (count > (size - MAGIC_LEN - 8) / ENTRY_HEADER) return STUB_CO_INVALID;
    range_t *ranges = malloc(count ? (size_t)count * sizeof *ranges : 1);
    if (!ranges) return STUB_CO_NO_MEMORY;

    /* First pass: check the table, remember the best entry. */
    uint64_t pos = MAGIC_LEN + 8, used = 0;
    int best_score = -1;
    bool seen_amdgcn = false;
    stub_co_status_t st = STUB_CO_OK;
    for (uint64_t i = 0; i < count; i++) {
        if (!stub_co_in_range(pos, ENTRY_HEADER, size)) { st = STUB_CO_INVALID; break; }
        uint64_t off = stub_co_le64(data + pos), len = stub_co_le64(data + pos + 8);
        uint64_t id_len = stub_co_le64(data + pos + 16);
        pos += ENTRY_HEADER;
        if (!stub_co_in_range(pos, id_len, size) || !stub_co_in_range(off, len, size)) {
            st = STUB_CO_INVALID;
            break;
        }
        const char *id = (const char *)data + pos;
        pos += id_len;
        if (len) ranges[used++] = (range_t){off, len};

        char target[STUB_CO_TARGET_LEN];
        if (!stub_co_target_from_bundle_id(id, (size_t)id_len, target)) continue;
        int score;
        if (!device_target) score = seen_amdgcn ? -1 : 0;   /* the first one */
        else score = stub_co_target_score(target, device_target);
        seen_amdgcn = true;
        if (score > best_score) {
            best_score = score;
            *elf_offset = off;
            *elf_size = len;
        }
    }
    if (st == STUB_CO_OK && !disjoint(ranges, used, pos)) st = STUB_CO_INVALID;
    free(ranges);
    if (st != STUB_CO_OK) return st;
    if (best_score < 0) return STUB_CO_NO_TARGET;
    /* An entry of LLVM bitcode (-fgpu-rdc) is code, but not loadable. */
    if (*elf_size >= 4 && memcmp(data + *elf_offset, "BC\xc0\xde", 4) == 0)
        return STUB_CO_UNSUPPORTED;
    return STUB_CO_OK;
}
