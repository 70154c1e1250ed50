/* The stub's reader of AMD code objects: picks the ELF (bare, or the right
 * entry of an offload bundle), copies it, and gathers the target, the
 * kernels of the metadata note with their descriptors' file offsets, and
 * the variables of the symbol table.  See stub_codeobject.h. */
#define _GNU_SOURCE  /* strdup, posix_memalign, strnlen under -std=c11 */
#include <stdlib.h>
#include <string.h>

#include "stub_co_internal.h"

const char *stub_co_status_name(stub_co_status_t status) {
    switch (status) {
    case STUB_CO_OK: return "ok";
    case STUB_CO_INVALID: return "invalid";
    case STUB_CO_NO_TARGET: return "no_target";
    case STUB_CO_UNSUPPORTED: return "unsupported";
    case STUB_CO_NO_MEMORY: return "no_memory";
    }
    return "unknown";
}

void stub_codeobject_free(stub_codeobject_t *co) {
    if (!co) return;
    if (co->cpu && stub_cpukern_release) stub_cpukern_release(co->cpu);
    stub_co_kernels_free(co->kernels, co->num_kernels);
    free(co->variables);
    free(co->elf);
    free(co);
}

/* A symbol name's length, charged to a budget: names may share bytes of
 * the string table, so the sum of their lengths is not bounded by the
 * file's size; the budget keeps the work linear in it. */
static bool name_len(const stub_co_symtab_t *t, const stub_co_sym_t *s,
                     uint64_t *budget, size_t *len) {
    uint64_t room = t->strsize - (uint64_t)(s->name - t->strtab);
    *len = strnlen(s->name, (size_t)room);       /* room ends at a NUL */
    if (*len + 1 > *budget) return false;
    *budget -= *len + 1;
    return true;
}

static bool ends_with_kd(const char *name, size_t len) {
    return len >= 3 && memcmp(name + len - 3, ".kd", 3) == 0;
}

/* Kernel symbols by name: an open-addressing table of kernel indices. */
typedef struct index {
    uint32_t *slots;             /* kernel index + 1; 0 is empty */
    uint32_t mask;
} index_t;

static uint32_t hash(const char *s, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* The kernel whose symbol is name[0..len), or -1. */
static int64_t index_find(const index_t *ix, const stub_codeobject_t *co,
                          const char *name, size_t len) {
    for (uint32_t h = hash(name, len) & ix->mask; ix->slots[h]; h = (h + 1) & ix->mask) {
        uint32_t k = ix->slots[h] - 1;
        const char *sym = co->kernels[k].full_symbol;
        if (strncmp(sym, name, len) == 0 && sym[len] == '\0') return k;
    }
    return -1;
}

/* STUB_CO_INVALID if two kernels claim one descriptor symbol. */
static stub_co_status_t index_build(index_t *ix, const stub_codeobject_t *co) {
    uint32_t cap = 16;
    while (cap < 2 * co->num_kernels) cap *= 2;
    ix->slots = calloc(cap, sizeof *ix->slots);
    ix->mask = cap - 1;
    if (!ix->slots) return STUB_CO_NO_MEMORY;
    for (uint32_t k = 0; k < co->num_kernels; k++) {
        const char *sym = co->kernels[k].full_symbol;
        size_t len = strlen(sym);
        if (index_find(ix, co, sym, len) >= 0) {
            free(ix->slots);
            return STUB_CO_INVALID;
        }
        uint32_t h = hash(sym, len) & ix->mask;
        while (ix->slots[h]) h = (h + 1) & ix->mask;
        ix->slots[h] = k + 1;
    }
    return STUB_CO_OK;
}

static stub_co_status_t read_symbols(stub_codeobject_t *co, const stub_co_elf_t *e) {
    stub_co_symtab_t t;
    stub_co_status_t st = stub_co_elf_symtab(e, &t);
    if (st != STUB_CO_OK) return st;
    index_t ix;
    if ((st = index_build(&ix, co)) != STUB_CO_OK) return st;
    /* Each symbol takes 24 bytes of the file, so this is bounded by it. */
    co->variables = calloc(t.count ? (size_t)t.count : 1, sizeof *co->variables);
    if (!co->variables) {
        free(ix.slots);
        return STUB_CO_NO_MEMORY;
    }
    uint64_t budget = 16 * t.strsize + (1u << 20);
    for (uint64_t i = 0; i < t.count && st == STUB_CO_OK; i++) {
        stub_co_sym_t s;
        size_t len;
        if (!stub_co_elf_symbol(&t, i, &s) || !name_len(&t, &s, &budget, &len)) {
            st = STUB_CO_INVALID;
            break;
        }
        if (s.type != STUB_CO_STT_OBJECT || s.bind == STUB_CO_STB_LOCAL) continue;
        int64_t k = index_find(&ix, co, s.name, len);
        if (k >= 0) {
            uint64_t off;
            /* A descriptor is 64 bytes of file data inside its section. */
            if (s.size != 64 || !stub_co_elf_symbol_offset(e, &s, 64, &off) || off == 0) {
                st = STUB_CO_INVALID;
                break;
            }
            co->kernels[k].descriptor_offset = off;
            continue;
        }
        if (ends_with_kd(s.name, len) || s.shndx == 0 || s.shndx >= 0xff00)
            continue;                            /* descriptors; undefined, abs */
        stub_co_variable_t *v = &co->variables[co->num_variables];
        if (!stub_co_elf_symbol_offset(e, &s, s.size, &v->elf_offset)) {
            st = STUB_CO_INVALID;
            break;
        }
        size_t cut = len < STUB_CO_NAME_LEN - 1 ? len : STUB_CO_NAME_LEN - 1;
        memcpy(v->name, s.name, cut);
        v->name[cut] = '\0';
        v->full_name = s.name;                   /* inside co->elf */
        v->size = s.size;
        co->num_variables++;
    }
    free(ix.slots);
    if (st != STUB_CO_OK) return st;
    for (uint32_t k = 0; k < co->num_kernels; k++)
        if (!co->kernels[k].descriptor_offset) return STUB_CO_INVALID;   /* no .kd */
    return STUB_CO_OK;
}

/* Parse the ELF now owned by co. */
static stub_co_status_t read_elf(stub_codeobject_t *co) {
    stub_co_elf_t e;
    stub_co_status_t st = stub_co_elf_open(&e, co->elf, co->elf_size);
    if (st != STUB_CO_OK) return st;
    if (!stub_co_target_from_elf(e.flags, e.abi_version, co->target))
        return STUB_CO_UNSUPPORTED;              /* a processor we do not know */
    co->version = e.abi_version + 2;
    const uint8_t *desc;
    uint64_t desc_size;
    if ((st = stub_co_elf_metadata(&e, &desc, &desc_size)) != STUB_CO_OK) return st;
    st = stub_co_metadata_kernels(desc, desc_size, &co->kernels, &co->num_kernels);
    if (st != STUB_CO_OK) return st;
    return read_symbols(co, &e);
}

stub_co_status_t stub_codeobject_parse(const void *data, size_t size,
                                       const char *device_target,
                                       stub_codeobject_t **out) {
    if (!out) return STUB_CO_INVALID;
    *out = NULL;
    if (!data || !size) return STUB_CO_INVALID;
    if (stub_co_is_compressed_bundle(data, size)) return STUB_CO_UNSUPPORTED;
    uint64_t off = 0, len = size;
    bool bundle = stub_co_is_bundle(data, size);
    if (bundle) {
        stub_co_status_t st = stub_co_bundle_select(data, size, device_target, &off, &len);
        if (st != STUB_CO_OK) return st;
    }
    if (len < 4 || memcmp((const uint8_t *)data + off, "\x7f" "ELF", 4) != 0)
        return STUB_CO_INVALID;

    stub_codeobject_t *co = calloc(1, sizeof *co);
    if (!co) return STUB_CO_NO_MEMORY;
    co->elf = malloc((size_t)len);
    if (!co->elf) {
        free(co);
        return STUB_CO_NO_MEMORY;
    }
    memcpy(co->elf, (const uint8_t *)data + off, (size_t)len);
    co->elf_size = (size_t)len;
    stub_co_status_t st = read_elf(co);
    if (st == STUB_CO_OK && device_target && !stub_target_matches(co->target, device_target))
        st = STUB_CO_NO_TARGET;
    if (st != STUB_CO_OK) {
        stub_codeobject_free(co);
        return st;
    }
    if (bundle && stub_cpukern_offer_bundle) co->cpu = stub_cpukern_offer_bundle(data, size);
    else if (!bundle && stub_cpukern_for_elf) co->cpu = stub_cpukern_for_elf(co->elf, co->elf_size);
    *out = co;
    return STUB_CO_OK;
}

const stub_co_kernel_t *stub_codeobject_kernel(const stub_codeobject_t *co,
                                               const char *name_or_symbol) {
    if (!co || !name_or_symbol) return NULL;
    for (uint32_t i = 0; i < co->num_kernels; i++)
        if (strcmp(co->kernels[i].full_name, name_or_symbol) == 0 ||
            strcmp(co->kernels[i].full_symbol, name_or_symbol) == 0)
            return &co->kernels[i];
    return NULL;
}

const stub_co_variable_t *stub_codeobject_variable(const stub_codeobject_t *co,
                                                   const char *name) {
    if (!co || !name) return NULL;
    for (uint32_t i = 0; i < co->num_variables; i++)
        if (strcmp(co->variables[i].full_name, name) == 0) return &co->variables[i];
    return NULL;
}
