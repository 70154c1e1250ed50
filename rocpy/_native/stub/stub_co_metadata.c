/* The NT_AMDGPU_METADATA note (code object v3 and later): a msgpack map whose
 * "amdhsa.kernels" lists each kernel's name, descriptor symbol, segment
 * sizes, register counts and arguments.  Keys it does not need are skipped;
 * a needed key with the wrong type, a missing required key or an argument
 * outside the kernarg segment make the note invalid. */
#include <stdlib.h>
#include <string.h>

#include "stub_co_internal.h"

typedef struct kernels {
    stub_co_kernel_t *items;
    uint32_t count, capacity;
} kernels_t;

static char *dup_str(const char *s, uint32_t len) {
    char *d = malloc((size_t)len + 1);
    if (d) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

/* Copy into a fixed buffer, cut to fit. */
static void copy_cut(char *dst, size_t cap, const char *s, uint32_t len) {
    size_t n = len < cap - 1 ? len : cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static bool read_u32(stub_co_mp_t *m, uint32_t *out) {
    uint64_t v;
    if (!stub_co_mp_uint(m, &v) || v > UINT32_MAX) return false;
    *out = (uint32_t)v;
    return true;
}

static stub_co_arg_kind_t kind_of(const char *s, uint32_t len) {
    if (stub_co_mp_str_eq(s, len, "global_buffer")) return STUB_ARG_GLOBAL_BUFFER;
    if (stub_co_mp_str_eq(s, len, "dynamic_shared_pointer"))
        return STUB_ARG_DYNAMIC_SHARED_POINTER;
    if (len >= 7 && memcmp(s, "hidden_", 7) == 0) return STUB_ARG_HIDDEN;
    return STUB_ARG_BY_VALUE;    /* by_value, image, sampler, pipe, queue... */
}

static stub_co_status_t parse_arg(stub_co_mp_t *m, stub_co_arg_t *arg) {
    uint32_t n, len;
    const char *key, *s;
    bool have_offset = false, have_size = false, have_kind = false;
    if (!stub_co_mp_map(m, &n)) return STUB_CO_INVALID;
    for (uint32_t i = 0; i < n; i++) {
        if (stub_co_mp_peek(m) != STUB_MP_STR) {
            if (!stub_co_mp_skip(m) || !stub_co_mp_skip(m)) return STUB_CO_INVALID;
            continue;
        }
        if (!stub_co_mp_str(m, &key, &len)) return STUB_CO_INVALID;
        bool ok;
        if (stub_co_mp_str_eq(key, len, ".offset")) {
            ok = have_offset = read_u32(m, &arg->offset);
        } else if (stub_co_mp_str_eq(key, len, ".size")) {
            ok = have_size = read_u32(m, &arg->size);
        } else if (stub_co_mp_str_eq(key, len, ".value_kind")) {
            ok = have_kind = stub_co_mp_str(m, &s, &len);
            if (ok) {
                arg->kind = kind_of(s, len);
                copy_cut(arg->value_kind, sizeof arg->value_kind, s, len);
            }
        } else {
            ok = stub_co_mp_skip(m);
        }
        if (!ok) return STUB_CO_INVALID;
    }
    return have_offset && have_size && have_kind ? STUB_CO_OK : STUB_CO_INVALID;
}

/* Fields read as u32, by key. */
static uint32_t *u32_field(stub_co_kernel_t *k, const char *key, uint32_t len) {
    static const struct { const char *key; size_t offset; } fields[] = {
        {".kernarg_segment_size", offsetof(stub_co_kernel_t, kernarg_segment_size)},
        {".kernarg_segment_align", offsetof(stub_co_kernel_t, kernarg_segment_align)},
        {".group_segment_fixed_size", offsetof(stub_co_kernel_t, group_segment_fixed_size)},
        {".private_segment_fixed_size",
         offsetof(stub_co_kernel_t, private_segment_fixed_size)},
        {".wavefront_size", offsetof(stub_co_kernel_t, wavefront_size)},
        {".sgpr_count", offsetof(stub_co_kernel_t, sgpr_count)},
        {".vgpr_count", offsetof(stub_co_kernel_t, vgpr_count)},
        {".max_flat_workgroup_size", offsetof(stub_co_kernel_t, max_flat_workgroup_size)},
        {".uniform_work_group_size", offsetof(stub_co_kernel_t, uniform_work_group_size)},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (stub_co_mp_str_eq(key, len, fields[i].key))
            return (uint32_t *)((char *)k + fields[i].offset);
    return NULL;
}

enum { HAVE_SIZE = 1, HAVE_ALIGN = 2, HAVE_WAVE = 4 };

static stub_co_status_t parse_kernel(stub_co_mp_t *m, stub_co_kernel_t *k) {
    uint32_t n, len, have = 0;
    const char *key, *s;
    if (!stub_co_mp_map(m, &n)) return STUB_CO_INVALID;
    for (uint32_t i = 0; i < n; i++) {
        if (stub_co_mp_peek(m) != STUB_MP_STR) {
            if (!stub_co_mp_skip(m) || !stub_co_mp_skip(m)) return STUB_CO_INVALID;
            continue;
        }
        if (!stub_co_mp_str(m, &key, &len)) return STUB_CO_INVALID;
        uint32_t *field = u32_field(k, key, len);
        bool is_name = stub_co_mp_str_eq(key, len, ".name");
        if (field) {
            if (!read_u32(m, field)) return STUB_CO_INVALID;
            if (field == &k->kernarg_segment_size) have |= HAVE_SIZE;
            if (field == &k->kernarg_segment_align) have |= HAVE_ALIGN;
            if (field == &k->wavefront_size) have |= HAVE_WAVE;
        } else if (is_name || stub_co_mp_str_eq(key, len, ".symbol")) {
            if (!stub_co_mp_str(m, &s, &len) || len == 0 || memchr(s, 0, len))
                return STUB_CO_INVALID;
            char *copy = dup_str(s, len);
            if (!copy) return STUB_CO_NO_MEMORY;
            if (is_name) {                       /* a repeated key: the last wins */
                free((char *)k->full_name);
                k->full_name = copy;
                copy_cut(k->name, sizeof k->name, s, len);
            } else {
                free((char *)k->full_symbol);
                k->full_symbol = copy;
                copy_cut(k->symbol, sizeof k->symbol, s, len);
            }
        } else if (stub_co_mp_str_eq(key, len, ".reqd_workgroup_size")) {
            uint32_t count;
            if (!stub_co_mp_array(m, &count) || count != 3) return STUB_CO_INVALID;
            for (uint32_t d = 0; d < 3; d++)
                if (!read_u32(m, &k->reqd_workgroup_size[d])) return STUB_CO_INVALID;
        } else if (stub_co_mp_str_eq(key, len, ".args")) {
            uint32_t count;
            if (!stub_co_mp_array(m, &count)) return STUB_CO_INVALID;
            if (count > STUB_CO_MAX_ARGS) return STUB_CO_UNSUPPORTED;
            for (uint32_t a = 0; a < count; a++) {
                memset(&k->args[a], 0, sizeof k->args[a]);
                stub_co_status_t st = parse_arg(m, &k->args[a]);
                if (st != STUB_CO_OK) return st;
            }
            k->num_args = count;
        } else if (!stub_co_mp_skip(m)) {
            return STUB_CO_INVALID;
        }
    }
    if (!k->full_name || !k->full_symbol ||
        have != (HAVE_SIZE | HAVE_ALIGN | HAVE_WAVE))
        return STUB_CO_INVALID;
    uint32_t align = k->kernarg_segment_align;
    if (align == 0 || (align & (align - 1))) return STUB_CO_INVALID;
    if (k->wavefront_size != 32 && k->wavefront_size != 64) return STUB_CO_INVALID;
    for (uint32_t a = 0; a < k->num_args; a++) {
        const stub_co_arg_t *arg = &k->args[a];
        if (!stub_co_in_range(arg->offset, arg->size, k->kernarg_segment_size))
            return STUB_CO_INVALID;
    }
    return STUB_CO_OK;
}

void stub_co_kernels_free(stub_co_kernel_t *kernels, uint32_t count) {
    if (!kernels) return;
    for (uint32_t i = 0; i < count; i++) {
        free((char *)kernels[i].full_name);
        free((char *)kernels[i].full_symbol);
    }
    free(kernels);
}

static stub_co_status_t add_kernel(stub_co_mp_t *m, kernels_t *ks) {
    if (ks->count == STUB_CO_MAX_KERNELS) return STUB_CO_UNSUPPORTED;
    if (ks->count == ks->capacity) {
        uint32_t cap = ks->capacity ? ks->capacity * 2 : 4;
        stub_co_kernel_t *items = realloc(ks->items, (size_t)cap * sizeof *items);
        if (!items) return STUB_CO_NO_MEMORY;
        ks->items = items;
        ks->capacity = cap;
    }
    stub_co_kernel_t *k = &ks->items[ks->count++];
    memset(k, 0, sizeof *k);     /* counted already, so a failure frees it */
    return parse_kernel(m, k);
}

stub_co_status_t stub_co_metadata_kernels(const uint8_t *desc, uint64_t size,
                                          stub_co_kernel_t **kernels,
                                          uint32_t *count) {
    stub_co_mp_t m = {desc, desc + size};
    kernels_t ks = {NULL, 0, 0};
    stub_co_status_t st = STUB_CO_OK;
    uint32_t n, len;
    const char *key;
    bool seen = false;
    *kernels = NULL;
    *count = 0;
    if (!stub_co_mp_map(&m, &n)) return STUB_CO_INVALID;
    for (uint32_t i = 0; i < n && st == STUB_CO_OK; i++) {
        if (stub_co_mp_peek(&m) != STUB_MP_STR) {
            if (!stub_co_mp_skip(&m) || !stub_co_mp_skip(&m)) st = STUB_CO_INVALID;
            continue;
        }
        if (!stub_co_mp_str(&m, &key, &len)) { st = STUB_CO_INVALID; break; }
        if (!stub_co_mp_str_eq(key, len, "amdhsa.kernels")) {
            if (!stub_co_mp_skip(&m)) st = STUB_CO_INVALID;
            continue;
        }
        uint32_t nk;
        if (seen || !stub_co_mp_array(&m, &nk)) { st = STUB_CO_INVALID; break; }
        seen = true;
        for (uint32_t k = 0; k < nk && st == STUB_CO_OK; k++) st = add_kernel(&m, &ks);
    }
    if (st != STUB_CO_OK) {
        stub_co_kernels_free(ks.items, ks.count);
        return st;
    }
    *kernels = ks.items;
    *count = ks.count;
    return STUB_CO_OK;
}
