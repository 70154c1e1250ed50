/* The ELF side of the reader: the header of an AMDGPU HSA ELF64 file, its
 * sections, symbols and notes.  Only what loading needs; every offset and
 * count is checked against the file before use. */
#include <string.h>

#include "stub_co_internal.h"

#define EHDR_SIZE 64u
#define SHDR_SIZE 64u
#define PHDR_SIZE 56u
#define SYM_SIZE 24u
#define EM_AMDGPU 224u
#define ELFOSABI_AMDGPU_HSA 64u
#define SHT_SYMTAB 2u
#define SHT_NOTE 7u
#define SHT_DYNSYM 11u
#define PT_NOTE 4u
#define SHN_LORESERVE 0xff00u
#define SHN_XINDEX 0xffffu
#define NT_AMDGPU_METADATA 32u

stub_co_status_t stub_co_elf_open(stub_co_elf_t *e, const void *data, size_t size) {
    const uint8_t *d = data;
    memset(e, 0, sizeof *e);
    if (!d || size < EHDR_SIZE || memcmp(d, "\x7f" "ELF", 4) != 0) return STUB_CO_INVALID;
    if (d[4] != 2 /* ELFCLASS64 */ || d[5] != 1 /* ELFDATA2LSB */ || d[6] != 1)
        return STUB_CO_INVALID;
    if (stub_co_le16(d + 18) != EM_AMDGPU) return STUB_CO_INVALID;
    /* An AMDGPU ELF, but for PAL/Mesa, or code object v2 (its metadata is
     * not msgpack) or a version newer than we know. */
    if (d[7] != ELFOSABI_AMDGPU_HSA) return STUB_CO_UNSUPPORTED;
    if (d[8] < 1 || d[8] > 4) return STUB_CO_UNSUPPORTED;
    e->data = d;
    e->size = size;
    e->abi_version = d[8];
    e->flags = stub_co_le32(d + 48);
    e->phoff = stub_co_le64(d + 32);
    e->shoff = stub_co_le64(d + 40);
    e->phnum = stub_co_le16(d + 56);
    e->shnum = stub_co_le16(d + 60);
    if (e->phnum && stub_co_le16(d + 54) != PHDR_SIZE) return STUB_CO_INVALID;
    if (e->shoff && stub_co_le16(d + 58) != SHDR_SIZE) return STUB_CO_INVALID;
    if (!e->shoff) e->shnum = 0;
    if (e->shoff && e->shnum == 0) {
        /* More than 0xff00 sections: the count is section 0's sh_size. */
        if (!stub_co_in_range(e->shoff, SHDR_SIZE, size)) return STUB_CO_INVALID;
        uint64_t n = stub_co_le64(d + e->shoff + 32);
        if (n > size / SHDR_SIZE) return STUB_CO_INVALID;
        e->shnum = (uint32_t)n;
    }
    if (!stub_co_in_range(e->phoff, (uint64_t)e->phnum * PHDR_SIZE, size) ||
        !stub_co_in_range(e->shoff, (uint64_t)e->shnum * SHDR_SIZE, size))
        return STUB_CO_INVALID;
    return STUB_CO_OK;
}

bool stub_co_elf_section(const stub_co_elf_t *e, uint32_t i, stub_co_shdr_t *out) {
    if (i >= e->shnum) return false;
    const uint8_t *s = e->data + e->shoff + (uint64_t)i * SHDR_SIZE;
    out->type = stub_co_le32(s + 4);
    out->addr = stub_co_le64(s + 16);
    out->offset = stub_co_le64(s + 24);
    out->size = stub_co_le64(s + 32);
    out->link = stub_co_le32(s + 40);
    return out->type == STUB_CO_SHT_NOBITS ||
           stub_co_in_range(out->offset, out->size, e->size);
}

stub_co_status_t stub_co_elf_symtab(const stub_co_elf_t *e, stub_co_symtab_t *out) {
    memset(out, 0, sizeof *out);
    uint32_t found = UINT32_MAX;
    stub_co_shdr_t sh;
    for (uint32_t i = 0; i < e->shnum; i++) {
        const uint8_t *s = e->data + e->shoff + (uint64_t)i * SHDR_SIZE;
        uint32_t type = stub_co_le32(s + 4);
        if (type == SHT_SYMTAB) { found = i; break; }
        if (type == SHT_DYNSYM && found == UINT32_MAX) found = i;
    }
    if (found == UINT32_MAX) return STUB_CO_OK;
    if (!stub_co_elf_section(e, found, &sh) || sh.type == STUB_CO_SHT_NOBITS ||
        sh.size % SYM_SIZE)
        return STUB_CO_INVALID;
    stub_co_shdr_t str;
    if (!stub_co_elf_section(e, sh.link, &str) || str.type == STUB_CO_SHT_NOBITS ||
        str.size == 0)
        return STUB_CO_INVALID;
    /* gABI: a string table's last byte is NUL, so every name in it ends. */
    if (e->data[str.offset + str.size - 1] != 0) return STUB_CO_INVALID;
    out->syms = e->data + sh.offset;
    out->count = sh.size / SYM_SIZE;
    out->strtab = (const char *)e->data + str.offset;
    out->strsize = str.size;
    return STUB_CO_OK;
}

bool stub_co_elf_symbol(const stub_co_symtab_t *t, uint64_t i, stub_co_sym_t *out) {
    if (i >= t->count) return false;
    const uint8_t *s = t->syms + i * SYM_SIZE;
    uint32_t name = stub_co_le32(s);
    if (name >= t->strsize) return false;
    out->name = t->strtab + name;
    out->type = s[4] & 0xf;
    out->bind = s[4] >> 4;
    out->shndx = stub_co_le16(s + 6);
    out->value = stub_co_le64(s + 8);
    out->size = stub_co_le64(s + 16);
    return true;
}

bool stub_co_elf_symbol_offset(const stub_co_elf_t *e, const stub_co_sym_t *sym,
                               uint64_t len, uint64_t *offset) {
    stub_co_shdr_t sh;
    if (sym->shndx == 0 || sym->shndx >= SHN_LORESERVE) return false;
    if (!stub_co_elf_section(e, sym->shndx, &sh)) return false;
    if (sym->value < sh.addr || !stub_co_in_range(sym->value - sh.addr, len, sh.size))
        return false;
    *offset = sh.type == STUB_CO_SHT_NOBITS ? 0 : sh.offset + (sym->value - sh.addr);
    return true;
}

/* Look through the notes in [off, off + size) for NT_AMDGPU_METADATA:
 * 1 found, 0 not there, -1 malformed. */
static int scan_notes(const stub_co_elf_t *e, uint64_t off, uint64_t size,
                                   const uint8_t **desc, uint64_t *desc_size) {
    if (!stub_co_in_range(off, size, e->size)) return -1;
    const uint8_t *p = e->data + off;
    uint64_t pos = 0;
    while (size - pos >= 12) {
        uint64_t namesz = stub_co_le32(p + pos), descsz = stub_co_le32(p + pos + 4);
        uint32_t type = stub_co_le32(p + pos + 8);
        uint64_t name_at = pos + 12;
        uint64_t desc_at = name_at + ((namesz + 3) & ~3ull);
        if (desc_at > size || descsz > size - desc_at) return -1;
        if (type == NT_AMDGPU_METADATA && namesz == 7 &&
            memcmp(p + name_at, "AMDGPU", 7) == 0) {
            *desc = p + desc_at;
            *desc_size = descsz;
            return 1;
        }
        uint64_t next = desc_at + ((descsz + 3) & ~3ull);
        if (next > size) break;                  /* last note, unpadded */
        pos = next;
    }
    return 0;
}

stub_co_status_t stub_co_elf_metadata(const stub_co_elf_t *e, const uint8_t **desc,
                                      uint64_t *desc_size) {
    int found;
    for (uint32_t i = 0; i < e->phnum; i++) {
        const uint8_t *ph = e->data + e->phoff + (uint64_t)i * PHDR_SIZE;
        if (stub_co_le32(ph) != PT_NOTE) continue;
        found = scan_notes(e, stub_co_le64(ph + 8), stub_co_le64(ph + 32), desc, desc_size);
        if (found) return found > 0 ? STUB_CO_OK : STUB_CO_INVALID;
    }
    for (uint32_t i = 0; i < e->shnum; i++) {
        stub_co_shdr_t sh;
        const uint8_t *s = e->data + e->shoff + (uint64_t)i * SHDR_SIZE;
        if (stub_co_le32(s + 4) != SHT_NOTE) continue;
        if (!stub_co_elf_section(e, i, &sh)) return STUB_CO_INVALID;
        found = scan_notes(e, sh.offset, sh.size, desc, desc_size);
        if (found) return found > 0 ? STUB_CO_OK : STUB_CO_INVALID;
    }
    return STUB_CO_INVALID;                      /* no metadata: not loadable */
}
