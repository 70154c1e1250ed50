/* Private helpers of the stub's code object reader (stub_codeobject.c and
 * stub_co_*.c).  Every reader here takes untrusted bytes: offsets and counts
 * are checked against the bytes that are really there before use. */
#ifndef ROCPY_STUB_CO_INTERNAL_H
#define ROCPY_STUB_CO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "stub_codeobject.h"

/* ---- bytes ------------------------------------------------------------- */

static inline uint16_t stub_co_le16(const uint8_t *p) {
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t stub_co_le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline uint64_t stub_co_le64(const uint8_t *p) {
    return (uint64_t)stub_co_le32(p) | (uint64_t)stub_co_le32(p + 4) << 32;
}
/* [off, off + len) lies inside [0, size), without overflow. */
static inline bool stub_co_in_range(uint64_t off, uint64_t len, uint64_t size) {
    return off <= size && len <= size - off;
}

/* ---- msgpack (stub_co_msgpack.c) ---------------------------------------- */

typedef enum stub_co_mp_type {
    STUB_MP_BAD = 0, STUB_MP_NIL, STUB_MP_BOOL, STUB_MP_INT, STUB_MP_FLOAT,
    STUB_MP_STR, STUB_MP_BIN, STUB_MP_ARRAY, STUB_MP_MAP, STUB_MP_EXT
} stub_co_mp_type_t;

typedef struct stub_co_mp {
    const uint8_t *p, *end;
} stub_co_mp_t;

/* The type of the next value, STUB_MP_BAD at the end or on byte 0xc1. */
stub_co_mp_type_t stub_co_mp_peek(const stub_co_mp_t *m);
/* Each reader consumes one value of its type and returns false (consuming
 * nothing useful) on a type mismatch, truncation or absurd count. */
bool stub_co_mp_str(stub_co_mp_t *m, const char **s, uint32_t *len);
bool stub_co_mp_uint(stub_co_mp_t *m, uint64_t *v);   /* any int >= 0 */
bool stub_co_mp_array(stub_co_mp_t *m, uint32_t *count);
bool stub_co_mp_map(stub_co_mp_t *m, uint32_t *count);
/* Skip one value of any type, nested at most STUB_CO_MP_MAX_DEPTH deep. */
#define STUB_CO_MP_MAX_DEPTH 32
bool stub_co_mp_skip(stub_co_mp_t *m);
/* True if the len bytes at s are exactly the C string lit. */
bool stub_co_mp_str_eq(const char *s, uint32_t len, const char *lit);

/* ---- targets (stub_co_target.c) ----------------------------------------- */

#define STUB_CO_TARGET_LEN 64
/* "gfx90a:sramecc+:xnack-" from e_flags and EI_ABIVERSION; false if the
 * processor is unknown. */
bool stub_co_target_from_elf(uint32_t e_flags, unsigned abi_version,
                             char out[STUB_CO_TARGET_LEN]);
/* The target id of a bundle entry id ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-",
 * "hip-amdgcn-amd-amdhsa-gfx90a"); false for host or other triples. */
bool stub_co_target_from_bundle_id(const char *id, size_t len,
                                   char out[STUB_CO_TARGET_LEN]);
/* -1 if code does not serve device; else higher for a closer match (an exact
 * processor over a generic one, spelled features over 'any'). */
int stub_co_target_score(const char *code_target, const char *device_target);

/* ---- bundles (stub_co_bundle.c) ----------------------------------------- */

bool stub_co_is_bundle(const void *data, size_t size);
/* stub_cpukern.c: the rocpy CPU build a bundle carries (loaded), or the one
 * offered with a bundle that held this ELF; a reference for the code object
 * (stub_codeobject_t.cpu), released by stub_codeobject_free.  Weak: the
 * reader is also built alone (tests/stub_c), without them. */
stub_cpu_build_t *stub_cpukern_offer_bundle(const void *data, size_t size) __attribute__((weak));
stub_cpu_build_t *stub_cpukern_for_elf(const void *elf, size_t size) __attribute__((weak));
void stub_cpukern_release(stub_cpu_build_t *build) __attribute__((weak));
bool stub_co_is_compressed_bundle(const void *data, size_t size);
/* Choose the entry serving device_target (NULL: the first amdgcn one); give
 * its byte range in the bundle. */
stub_co_status_t stub_co_bundle_select(const uint8_t *data, size_t size,
                                       const char *device_target,
                                       uint64_t *elf_offset, uint64_t *elf_size);

/* ---- ELF (stub_co_elf.c) ------------------------------------------------ */

typedef struct stub_co_elf {
    const uint8_t *data;
    uint64_t size;
    uint32_t flags;
    unsigned abi_version;        /* EI_ABIVERSION */
    uint64_t shoff, phoff;
    uint32_t shnum, phnum;
} stub_co_elf_t;

typedef struct stub_co_shdr {
    uint32_t type, link;
    uint64_t addr, offset, size;
} stub_co_shdr_t;

#define STUB_CO_SHT_NOBITS 8u

typedef struct stub_co_symtab {
    const uint8_t *syms;
    uint64_t count;
    const char *strtab;          /* ends with a NUL: every name is terminated */
    uint64_t strsize;
} stub_co_symtab_t;

typedef struct stub_co_sym {
    const char *name;
    unsigned type, bind;
    uint32_t shndx;
    uint64_t value, size;
} stub_co_sym_t;

#define STUB_CO_STT_OBJECT 1u
#define STUB_CO_STB_LOCAL 0u

/* Check the header of an AMDGPU HSA ELF64 and its table bounds. */
stub_co_status_t stub_co_elf_open(stub_co_elf_t *e, const void *data, size_t size);
/* Section i; false if out of range or (unless NOBITS) outside the file. */
bool stub_co_elf_section(const stub_co_elf_t *e, uint32_t i, stub_co_shdr_t *out);
/* .symtab, else .dynsym; an ELF with neither gives count 0. */
stub_co_status_t stub_co_elf_symtab(const stub_co_elf_t *e, stub_co_symtab_t *out);
bool stub_co_elf_symbol(const stub_co_symtab_t *t, uint64_t i, stub_co_sym_t *out);
/* File offset of [sym.value, sym.value + len) in its section; *offset = 0 for
 * NOBITS.  False if the symbol lies outside its section. */
bool stub_co_elf_symbol_offset(const stub_co_elf_t *e, const stub_co_sym_t *sym,
                               uint64_t len, uint64_t *offset);
/* The NT_AMDGPU_METADATA descriptor (PT_NOTE segments, else SHT_NOTE
 * sections).  STUB_CO_INVALID if absent or if a note is malformed. */
stub_co_status_t stub_co_elf_metadata(const stub_co_elf_t *e, const uint8_t **desc,
                                      uint64_t *desc_size);

/* ---- metadata (stub_co_metadata.c) -------------------------------------- */

/* Decode amdhsa.kernels; descriptor_offset is left 0.  On failure nothing
 * is left allocated. */
stub_co_status_t stub_co_metadata_kernels(const uint8_t *desc, uint64_t size,
                                          stub_co_kernel_t **kernels,
                                          uint32_t *count);
void stub_co_kernels_free(stub_co_kernel_t *kernels, uint32_t count);

#endif
