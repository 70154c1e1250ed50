/* Test driver of the stub's C code object reader (stub_codeobject.h), built by
 * test_codeobject_c.py with ASan and UBSan.  Modes:
 *
 *   dump FILE [--device T] [--write-elf OUT]   parse, print the result as JSON
 *   match CODE DEVICE [CODE DEVICE ...]        stub_target_matches, JSON list
 *   robust FILE [--device T] [--range A B] [--seconds S] [--iterations N]
 *          [--seed X]                          truncations, byte flips in [A, B)
 *                                              and random mutations; counts of
 *                                              statuses as JSON
 *   robust-note FILE [--seconds S] [--iterations N] [--seed X]
 *                                              the same on a bare metadata note
 *                                              (msgpack), each in a heap block of
 *                                              its exact size, so ASan sees any
 *                                              read past the note's end (inside
 *                                              an ELF such a read stays unseen)
 *
 * Whatever the input, a parse must return a status, and an OK result must
 * hold together (descriptors and variables inside the ELF copy, strings
 * terminated...): check_result() touches every byte it points at, so ASan
 * reports any lie. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stub_codeobject.h"
#include "stub_co_internal.h"   /* robust-note calls the metadata reader alone */

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "test_codeobject: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    exit(2);
}

static uint8_t *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *d = malloc(n > 0 ? (size_t)n : 1);
    if (!d || (n > 0 && fread(d, 1, (size_t)n, f) != (size_t)n)) die("cannot read", path);
    fclose(f);
    *size = (size_t)n;
    return d;
}

static void json_str(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20 || *p >= 0x7f) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static const char *kind_name(stub_co_arg_kind_t k) {
    switch (k) {
    case STUB_ARG_BY_VALUE: return "by_value";
    case STUB_ARG_GLOBAL_BUFFER: return "global_buffer";
    case STUB_ARG_DYNAMIC_SHARED_POINTER: return "dynamic_shared_pointer";
    case STUB_ARG_HIDDEN: return "hidden";
    }
    return "?";
}

static void dump(const stub_codeobject_t *co) {
    printf("{\"status\": \"ok\", \"target\": ");
    json_str(co->target);
    printf(", \"version\": %u, \"elf_size\": %zu, \"kernels\": [", co->version, co->elf_size);
    for (uint32_t i = 0; i < co->num_kernels; i++) {
        const stub_co_kernel_t *k = &co->kernels[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(k->name);
        printf(", \"symbol\": ");
        json_str(k->symbol);
        printf(", \"full_name\": ");
        json_str(k->full_name);
        printf(", \"full_symbol\": ");
        json_str(k->full_symbol);
        printf(", \"kernarg_segment_size\": %u, \"kernarg_segment_align\": %u, "
               "\"group_segment_fixed_size\": %u, \"private_segment_fixed_size\": %u, "
               "\"wavefront_size\": %u, \"sgpr_count\": %u, \"vgpr_count\": %u, "
               "\"max_flat_workgroup_size\": %u, \"descriptor_offset\": %llu, "
               "\"found_by_name\": %d, \"found_by_symbol\": %d, \"args\": [",
               k->kernarg_segment_size, k->kernarg_segment_align,
               k->group_segment_fixed_size, k->private_segment_fixed_size,
               k->wavefront_size, k->sgpr_count, k->vgpr_count,
               k->max_flat_workgroup_size, (unsigned long long)k->descriptor_offset,
               stub_codeobject_kernel(co, k->full_name) == k,
               stub_codeobject_kernel(co, k->full_symbol) == k);
        for (uint32_t a = 0; a < k->num_args; a++) {
            printf("%s{\"offset\": %u, \"size\": %u, \"kind\": \"%s\", \"value_kind\": ",
                   a ? ", " : "", k->args[a].offset, k->args[a].size,
                   kind_name(k->args[a].kind));
            json_str(k->args[a].value_kind);
            putchar('}');
        }
        printf("]}");
    }
    printf("],\n \"variables\": [");
    for (uint32_t i = 0; i < co->num_variables; i++) {
        const stub_co_variable_t *v = &co->variables[i];
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_str(v->name);
        printf(", \"full_name\": ");
        json_str(v->full_name);
        printf(", \"size\": %llu, \"elf_offset\": %llu, \"found\": %d}",
               (unsigned long long)v->size, (unsigned long long)v->elf_offset,
               stub_codeobject_variable(co, v->full_name) == v);
    }
    printf("]}\n");
}

/* Everything an OK result points at must be there; ASan checks the reads. */
static volatile uint64_t sink;

static void check_result(const stub_codeobject_t *co) {
    const uint8_t *elf = co->elf;
    uint64_t sum = 0;
    if (!elf || co->elf_size < 64 || memcmp(elf, "\x7f" "ELF", 4) != 0) abort();
    if (co->version < 3 || co->version > 6 || !memchr(co->target, 0, sizeof co->target))
        abort();
    if (!stub_target_matches(co->target, co->target)) abort();
    for (uint32_t i = 0; i < co->num_kernels; i++) {
        const stub_co_kernel_t *k = &co->kernels[i];
        if (!memchr(k->name, 0, sizeof k->name) || !memchr(k->symbol, 0, sizeof k->symbol))
            abort();
        sum += strlen(k->full_name) + strlen(k->full_symbol);
        if (k->descriptor_offset == 0 || k->descriptor_offset > co->elf_size ||
            co->elf_size - k->descriptor_offset < 64)
            abort();
        for (int b = 0; b < 64; b++) sum += elf[k->descriptor_offset + b];
        if (k->num_args > STUB_CO_MAX_ARGS) abort();
        for (uint32_t a = 0; a < k->num_args; a++) {
            const stub_co_arg_t *arg = &k->args[a];
            if ((uint64_t)arg->offset + arg->size > k->kernarg_segment_size) abort();
            if (!memchr(arg->value_kind, 0, sizeof arg->value_kind)) abort();
        }
        if (stub_codeobject_kernel(co, k->full_symbol) == NULL) abort();
    }
    for (uint32_t i = 0; i < co->num_variables; i++) {
        const stub_co_variable_t *v = &co->variables[i];
        sum += strlen(v->full_name);
        if (!memchr(v->name, 0, sizeof v->name)) abort();
        if (v->elf_offset) {
            if (v->elf_offset > co->elf_size || co->elf_size - v->elf_offset < v->size)
                abort();
            for (uint64_t b = 0; b < v->size; b++) sum += elf[v->elf_offset + b];
        }
        if (stub_codeobject_variable(co, v->full_name) == NULL) abort();
    }
    sink += sum;
}

/* ---- robust ---------------------------------------------------------------- */

typedef struct counts {
    unsigned long n[5];
} counts_t;

static void parse_one(const uint8_t *d, size_t size, const char *device, counts_t *c) {
    stub_codeobject_t *co = (stub_codeobject_t *)(uintptr_t)1;
    stub_co_status_t st = stub_codeobject_parse(d, size, device, &co);
    if ((unsigned)st > STUB_CO_NO_MEMORY) abort();
    if ((st == STUB_CO_OK) != (co != NULL)) abort();
    if (co) {
        check_result(co);
        stub_codeobject_free(co);
    }
    c->n[st]++;
}

static void print_counts(const char *name, const counts_t *c) {
    printf("\"%s\": {", name);
    for (int s = 0; s <= STUB_CO_NO_MEMORY; s++)
        printf("%s\"%s\": %lu", s ? ", " : "", stub_co_status_name((stub_co_status_t)s),
               c->n[s]);
    printf("}");
}

static uint64_t rng_state;
static uint64_t rnd(void) {            /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void mutate(uint8_t *d, size_t size, size_t lo, size_t hi) {
    static const uint8_t interesting[] = {0x00, 0xff, 0x7f, 0x80, 0x01, 0x40, 0xc1,
                                          0xdd, 0xdf, 0xcf, 0x20, 0x10};
    int edits = 1 + (int)(rnd() % 8);
    for (int e = 0; e < edits; e++) {
        size_t pos;
        switch (rnd() % 3) {
        case 0: pos = rnd() % size; break;
        case 1: pos = rnd() % (size < 512 ? size : 512); break;          /* headers */
        default: pos = lo + rnd() % (hi - lo); break;                    /* range */
        }
        switch (rnd() % 4) {
        case 0: d[pos] ^= (uint8_t)(1u << (rnd() % 8)); break;
        case 1: d[pos] = (uint8_t)rnd(); break;
        case 2: d[pos] = interesting[rnd() % sizeof interesting]; break;
        default:                                 /* a large 64-bit field */
            if (pos + 8 <= size) {
                uint64_t v = rnd() >> (rnd() % 64);
                memcpy(d + pos, &v, 8);
            }
            break;
        }
    }
}

/* ---- the fuzz driver both robust modes share ------------------------------------ */

/* One parse of d[0, size); `alt` is 1 for the whole, truncated and flipped inputs,
 * the iteration's parity for the random ones (robust alternates the device). */
typedef void (*parse_fn)(const uint8_t *d, size_t size, int alt, void *ctx, counts_t *c);

/* The whole input, its truncations (every cut below 1 KiB, then about 4096 more,
 * each into an exact-size copy so ASan sees reads past the end), every byte of
 * [lo, hi) with a few masks, then random mutations bounded in count and time;
 * prints the statuses' counts as JSON. */
static int fuzz(const uint8_t *orig, size_t size, size_t lo, size_t hi, double seconds,
                unsigned long iterations, parse_fn parse, void *ctx) {
    counts_t whole = {{0}}, cut = {{0}}, flip = {{0}}, random = {{0}};
    parse(orig, size, 1, ctx, &whole);
    uint8_t *d = malloc(size);
    if (!d) die("out of memory", NULL);
    size_t step = size > 4096 ? size / 4096 : 1;
    for (size_t n = 0; n < size; n += (n < 1024 ? 1 : step)) {
        uint8_t *t = malloc(n ? n : 1);
        if (!t) die("out of memory", NULL);
        memcpy(t, orig, n);
        parse(t, n, 1, ctx, &cut);
        free(t);
    }
    static const uint8_t masks[] = {0x01, 0x80, 0xff, 0x10};
    for (size_t p = lo; p < hi; p++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            memcpy(d, orig, size);
            d[p] ^= masks[m];
            parse(d, size, 1, ctx, &flip);
        }
    }
    double start = now();
    unsigned long it = 0;
    for (; it < iterations && now() - start < seconds; it++) {
        memcpy(d, orig, size);
        mutate(d, size, lo, hi);
        size_t n = rnd() % 8 == 0 ? (size_t)(rnd() % size) : size;
        parse(d, n, (int)(it & 1), ctx, &random);
    }
    printf("{");
    print_counts("whole", &whole);
    printf(", ");
    print_counts("truncate", &cut);
    printf(", ");
    print_counts("flip", &flip);
    printf(", ");
    print_counts("random", &random);
    printf(", \"iterations\": %lu, \"seconds\": %.3f}\n", it, now() - start);
    free(d);
    return 0;
}

/* ---- robust ---------------------------------------------------------------------- */

static void parse_codeobject(const uint8_t *d, size_t size, int alt, void *ctx, counts_t *c) {
    parse_one(d, size, alt ? (const char *)ctx : NULL, c);
}

static int robust(int argc, char **argv) {
    const char *path = argv[0], *device = NULL;
    size_t size, lo = 0, hi = 0;
    double seconds = 3.0;
    unsigned long iterations = 5000;
    rng_state = 0x9e3779b97f4a7c15ull;
    uint8_t *orig = read_file(path, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--range") && i + 2 < argc) {
            lo = strtoull(argv[i + 1], NULL, 0);
            hi = strtoull(argv[i + 2], NULL, 0);
            i += 2;
        } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
            iterations = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 0) | 1;
        else die("bad robust option", argv[i]);
    }
    if (size == 0) die("empty file", path);
    if (hi > size || lo >= hi) { lo = 0; hi = size; }
    int status = fuzz(orig, size, lo, hi, seconds, iterations, parse_codeobject, (void *)device);
    free(orig);
    return status;
}

/* ---- robust-note -------------------------------------------------------------- */

static void parse_note(const uint8_t *d, size_t size, int alt, void *ctx, counts_t *c) {
    (void)alt;
    (void)ctx;
    uint8_t *exact = malloc(size ? size : 1);
    if (!exact) die("out of memory", NULL);
    memcpy(exact, d, size);
    stub_co_kernel_t *k = (stub_co_kernel_t *)(uintptr_t)1;
    uint32_t n = 12345;
    stub_co_status_t st = stub_co_metadata_kernels(exact, size, &k, &n);
    if ((unsigned)st > STUB_CO_NO_MEMORY) abort();
    if (st != STUB_CO_OK && (k != NULL || n != 0)) abort();
    uint64_t sum = 0;
    for (uint32_t i = 0; st == STUB_CO_OK && i < n; i++) {
        if (!k[i].full_name || !k[i].full_symbol || k[i].num_args > STUB_CO_MAX_ARGS) abort();
        sum += strlen(k[i].full_name) + strlen(k[i].full_symbol);
        for (uint32_t a = 0; a < k[i].num_args; a++)
            sum += strlen(k[i].args[a].value_kind) + k[i].args[a].offset;
    }
    sink += sum;
    if (st == STUB_CO_OK) stub_co_kernels_free(k, n);
    free(exact);
    c->n[st]++;
}

static int robust_note(int argc, char **argv) {
    size_t size;
    double seconds = 2.0;
    unsigned long iterations = 20000;
    rng_state = 0x9e3779b97f4a7c15ull;
    uint8_t *orig = read_file(argv[0], &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--iterations") && i + 1 < argc)
            iterations = strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            rng_state = strtoull(argv[++i], NULL, 0) | 1;
        else die("bad robust-note option", argv[i]);
    }
    if (size == 0) die("empty file", argv[0]);
    int status = fuzz(orig, size, 0, size, seconds, iterations, parse_note, NULL);
    free(orig);
    return status;
}

int main(int argc, char **argv) {
    if (argc < 2) die("usage: dump|match|robust ...", NULL);
    if (!strcmp(argv[1], "match")) {
        printf("[");
        for (int i = 2; i + 1 < argc; i += 2)
            printf("%s%s", i > 2 ? ", " : "",
                   stub_target_matches(argv[i], argv[i + 1]) ? "true" : "false");
        printf("]\n");
        return 0;
    }
    if (!strcmp(argv[1], "robust") && argc >= 3) return robust(argc - 2, argv + 2);
    if (!strcmp(argv[1], "robust-note") && argc >= 3) return robust_note(argc - 2, argv + 2);
    if (strcmp(argv[1], "dump") || argc < 3) die("unknown mode", argv[1]);

    const char *device = NULL, *write_elf = NULL;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--device") && i + 1 < argc) device = argv[++i];
        else if (!strcmp(argv[i], "--write-elf") && i + 1 < argc) write_elf = argv[++i];
        else die("bad dump option", argv[i]);
    }
    size_t size;
    uint8_t *data = read_file(argv[2], &size);
    stub_codeobject_t *co = NULL;
    stub_co_status_t st = stub_codeobject_parse(data, size, device, &co);
    memset(data, 0xa5, size);    /* the result must not point into the input */
    free(data);
    if (st != STUB_CO_OK) {
        printf("{\"status\": \"%s\"}\n", stub_co_status_name(st));
        return 0;
    }
    check_result(co);
    dump(co);
    if (write_elf) {
        FILE *f = fopen(write_elf, "wb");
        if (!f || fwrite(co->elf, 1, co->elf_size, f) != co->elf_size)
            die("cannot write", write_elf);
        fclose(f);
    }
    stub_codeobject_free(co);
    return 0;
}
