/* A tiny msgpack reader, as far as NT_AMDGPU_METADATA needs: maps, arrays,
 * strings and integers are read; nil, bool, bin, float and ext are skipped.
 * Every read is bounds-checked; a container claiming more elements than
 * bytes remain is refused (each element takes at least one byte), so
 * nothing loops or allocates beyond the input's size. */
#include <string.h>

#include "stub_co_internal.h"

static uint64_t be(const uint8_t *p, unsigned n) {
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) v = v << 8 | p[i];
    return v;
}

static size_t left(const stub_co_mp_t *m) {
    return m->p < m->end ? (size_t)(m->end - m->p) : 0;
}

stub_co_mp_type_t stub_co_mp_peek(const stub_co_mp_t *m) {
    if (!left(m)) return STUB_MP_BAD;
    uint8_t b = m->p[0];
    if (b <= 0x7f || b >= 0xe0) return STUB_MP_INT;
    if (b <= 0x8f) return STUB_MP_MAP;
    if (b <= 0x9f) return STUB_MP_ARRAY;
    if (b <= 0xbf) return STUB_MP_STR;
    switch (b) {
    case 0xc0: return STUB_MP_NIL;
    case 0xc2: case 0xc3: return STUB_MP_BOOL;
    case 0xc4: case 0xc5: case 0xc6: return STUB_MP_BIN;
    case 0xc7: case 0xc8: case 0xc9: return STUB_MP_EXT;
    case 0xca: case 0xcb: return STUB_MP_FLOAT;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: return STUB_MP_INT;
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8: return STUB_MP_EXT;
    case 0xd9: case 0xda: case 0xdb: return STUB_MP_STR;
    case 0xdc: case 0xdd: return STUB_MP_ARRAY;
    case 0xde: case 0xdf: return STUB_MP_MAP;
    default: return STUB_MP_BAD;   /* 0xc1: never used */
    }
}

/* Read a length field of n bytes after the type byte; advance past both. */
static bool header(stub_co_mp_t *m, unsigned n, uint64_t *len) {
    if (left(m) < 1 + (size_t)n) return false;
    *len = be(m->p + 1, n);
    m->p += 1 + n;
    return true;
}

/* Consume `n` payload bytes. */
static bool payload(stub_co_mp_t *m, uint64_t n) {
    if (n > left(m)) return false;
    m->p += n;
    return true;
}

bool stub_co_mp_str(stub_co_mp_t *m, const char **s, uint32_t *len) {
    if (stub_co_mp_peek(m) != STUB_MP_STR) return false;
    uint8_t b = m->p[0];
    uint64_t n;
    if (b >= 0xa0 && b <= 0xbf) {
        n = b & 0x1f;
        m->p++;
    } else if (!header(m, b == 0xd9 ? 1 : b == 0xda ? 2 : 4, &n)) {
        return false;
    }
    if (n > left(m)) return false;
    *s = (const char *)m->p;
    *len = (uint32_t)n;            /* n <= left(m), which came from a size_t */
    m->p += n;
    return true;
}

bool stub_co_mp_uint(stub_co_mp_t *m, uint64_t *v) {
    if (stub_co_mp_peek(m) != STUB_MP_INT) return false;
    uint8_t b = m->p[0];
    if (b <= 0x7f) {
        *v = b;
        m->p++;
        return true;
    }
    if (b >= 0xe0) return false;                  /* negative fixint */
    unsigned n = 1u << ((b - 0xcc) & 3);          /* 1, 2, 4, 8 bytes */
    uint64_t raw;
    if (!header(m, n, &raw)) return false;
    if (b >= 0xd0) {                              /* signed: must be >= 0 */
        if (raw >> (8 * n - 1) & 1) return false;
    }
    *v = raw;
    return true;
}

static bool container(stub_co_mp_t *m, stub_co_mp_type_t type, uint32_t *count,
                      unsigned per_element) {
    if (stub_co_mp_peek(m) != type) return false;
    uint8_t b = m->p[0];
    uint64_t n;
    if (b <= 0x9f) {                              /* fixmap / fixarray */
        n = b & 0x0f;
        m->p++;
    } else if (!header(m, (b == 0xdc || b == 0xde) ? 2 : 4, &n)) {
        return false;
    }
    if (n > left(m) / per_element) return false;  /* each element >= 1 byte */
    *count = (uint32_t)n;
    return true;
}

bool stub_co_mp_array(stub_co_mp_t *m, uint32_t *count) {
    return container(m, STUB_MP_ARRAY, count, 1);
}

bool stub_co_mp_map(stub_co_mp_t *m, uint32_t *count) {
    return container(m, STUB_MP_MAP, count, 2);
}

static bool skip(stub_co_mp_t *m, unsigned depth) {
    if (depth > STUB_CO_MP_MAX_DEPTH) return false;
    uint8_t b;
    uint64_t n;
    uint32_t count;
    const char *s;
    switch (stub_co_mp_peek(m)) {
    case STUB_MP_NIL:
    case STUB_MP_BOOL:
        m->p++;
        return true;
    case STUB_MP_INT:
        b = m->p[0];
        if (b <= 0x7f || b >= 0xe0) return payload(m, 1);
        return header(m, 1u << ((b - 0xcc) & 3), &n);
    case STUB_MP_FLOAT:
        return payload(m, m->p[0] == 0xca ? 5 : 9);
    case STUB_MP_STR:
        return stub_co_mp_str(m, &s, &count);
    case STUB_MP_BIN:
        b = m->p[0];
        return header(m, b == 0xc4 ? 1 : b == 0xc5 ? 2 : 4, &n) && payload(m, n);
    case STUB_MP_EXT:
        b = m->p[0];
        if (b >= 0xd4)                            /* fixext 1..16 + type byte */
            return payload(m, 2 + (1u << (b - 0xd4)));
        return header(m, b == 0xc7 ? 1 : b == 0xc8 ? 2 : 4, &n) &&
               payload(m, 1) && payload(m, n);
    case STUB_MP_ARRAY:
        if (!stub_co_mp_array(m, &count)) return false;
        for (uint32_t i = 0; i < count; i++)
            if (!skip(m, depth + 1)) return false;
        return true;
    case STUB_MP_MAP:
        if (!stub_co_mp_map(m, &count)) return false;
        for (uint32_t i = 0; i < count; i++)
            if (!skip(m, depth + 1) || !skip(m, depth + 1)) return false;
        return true;
    default:
        return false;
    }
}

bool stub_co_mp_skip(stub_co_mp_t *m) {
    return skip(m, 0);
}

bool stub_co_mp_str_eq(const char *s, uint32_t len, const char *lit) {
    return strlen(lit) == len && memcmp(s, lit, len) == 0;
}
