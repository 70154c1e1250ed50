/* hiprtc (hipamd src/hiprtc/hiprtc.cpp at rocm-5.2.3) on the stub.
 *
 * Programs hold their source, headers and name expressions as in hiprtc;
 * hiprtcCompileProgram compiles with rocpy's compiler driver
 * (hip_rtc_compile.c): the code is one bundle of the GPU code object
 * (hipcc) and the CPU build (rocpy.cpukern), which the stub's module loader
 * runs, and each name expression's lowered name is its kernel's symbol in
 * the CPU build (the same Itanium mangling as the GPU code object's).  As in
 * hiprtc, a failed compile leaves the code empty and no lowered names.
 * Handles are checked against a registry (hiprtc casts any pointer).
 *
 * With -fgpu-rdc (hiprtcCompileProgram's exact option, as hiprtc matches it)
 * hiprtc compiles to LLVM bitcode and no executable: the code is empty and
 * hiprtcGetBitcode answers.  The stub's bitcode is a unit of the CPU build
 * (rocpy.cpukern.compile_unit: the program compiled to a relocatable object),
 * which hiprtcLinkComplete links (hip_rtc_linker.c).  The stub gives an rdc
 * program no lowered names (hiprtc reads them from the bitcode). */
#define _GNU_SOURCE  /* strdup */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hiprtc.h>

#include "hip_internal.h"
#include "hip_rtc.h"
#include "hip_rtc_linker.h"

#define RTC_MAGIC 0x52544350u

typedef struct stub_rtc_program {
    uint32_t magic;
    char *source, *name;
    int num_headers;
    char **headers, **include_names;
    int num_expressions;
    char **expressions;
    char **lowered;                   /* per expression, after a compile; NULL: none */
    bool compiled;
    char *log;                        /* NUL-terminated; size includes the NUL */
    void *code;
    size_t code_size;
    bool rdc;                         /* compiled with -fgpu-rdc: bitcode, no code */
} stub_rtc_program_t;

static hip_registry_t programs = HIP_REGISTRY_INIT;

static stub_rtc_program_t *program(hiprtcProgram p) {
    return p && hip_registry_contains(&programs, p) ? (stub_rtc_program_t *)(void *)p : NULL;
}

static void free_strings(char **v, int n) {
    for (int i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

static void program_free(stub_rtc_program_t *p) {
    free(p->source);
    free(p->name);
    free_strings(p->headers, p->num_headers);
    free_strings(p->include_names, p->num_headers);
    free_strings(p->lowered, p->num_expressions);
    free_strings(p->expressions, p->num_expressions);
    free(p->log);
    free(p->code);
    free(p);
}

static char **copy_strings(char *const *v, int n) {
    char **out = calloc(n ? (size_t)n : 1, sizeof *out);
    for (int i = 0; out && i < n; i++)
        if (!(out[i] = strdup(v[i]))) {
            free_strings(out, i);
            return NULL;
        }
    return out;
}

const char *hiprtcGetErrorString(hiprtcResult result) {
    static const char *const names[] = {
        "HIPRTC_SUCCESS", "HIPRTC_ERROR_OUT_OF_MEMORY", "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE",
        "HIPRTC_ERROR_INVALID_INPUT", "HIPRTC_ERROR_INVALID_PROGRAM", "HIPRTC_ERROR_INVALID_OPTION",
        "HIPRTC_ERROR_COMPILATION", "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID", "HIPRTC_ERROR_INTERNAL_ERROR"};
    if ((unsigned)result >= sizeof names / sizeof names[0]) return NULL;   /* as hiprtc */
    return names[result];
}

/* hiprtc 5.2 returns 9.0 ("TODO add actual version") */
hiprtcResult hiprtcVersion(int *major, int *minor) {
    if (!major || !minor) return HIPRTC_ERROR_INVALID_INPUT;
    *major = 9;
    *minor = 0;
    return HIPRTC_SUCCESS;
}

/* a null src is INVALID_INPUT (5.2 builds a std::string from it and crashes) */
hiprtcResult hiprtcCreateProgram(hiprtcProgram *prog, const char *src, const char *name,
                                 int numHeaders, ROCPY_ARG_hiprtcCreateProgram__headers headers,
                                 ROCPY_ARG_hiprtcCreateProgram__headers includeNames) {
    if (!prog) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (numHeaders < 0) return HIPRTC_ERROR_INVALID_INPUT;
    if (numHeaders && (!headers || !includeNames)) return HIPRTC_ERROR_INVALID_INPUT;
    if (!src) return HIPRTC_ERROR_INVALID_INPUT;
    for (int i = 0; i < numHeaders; i++)
        if (!headers[i] || !includeNames[i]) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = calloc(1, sizeof *p);
    if (!p) return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    p->magic = RTC_MAGIC;
    p->num_headers = numHeaders;
    p->source = strdup(src);
    p->name = name ? strdup(name) : NULL;
    p->headers = copy_strings((char *const *)headers, numHeaders);
    p->include_names = copy_strings((char *const *)includeNames, numHeaders);
    if (!p->source || (name && !p->name) || !p->headers || !p->include_names ||
        !hip_registry_add(&programs, p)) {
        program_free(p);
        return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    }
    *prog = (hiprtcProgram)(void *)p;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram *prog) {
    if (!prog) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = program(*prog);
    if (!p || !hip_registry_remove(&programs, p)) return HIPRTC_ERROR_INVALID_PROGRAM;
    program_free(p);
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char *name_expression) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!name_expression) return HIPRTC_ERROR_INVALID_INPUT;
    char **v = realloc(p->expressions, (size_t)(p->num_expressions + 1) * sizeof *v);
    if (!v) return HIPRTC_ERROR_OUT_OF_MEMORY;
    p->expressions = v;
    if (!(v[p->num_expressions] = strdup(name_expression))) return HIPRTC_ERROR_OUT_OF_MEMORY;
    char **lowered = realloc(p->lowered, (size_t)(p->num_expressions + 1) * sizeof *lowered);
    if (!lowered) {
        free(v[p->num_expressions]);
        return HIPRTC_ERROR_OUT_OF_MEMORY;
    }
    p->lowered = lowered;
    lowered[p->num_expressions++] = NULL;
    return HIPRTC_SUCCESS;
}

/* "  &scale<float> " -> "scale<float>", as rocpy.cpukern.expression names table rows */
static void bare_expression(const char *e, char *out, size_t size) {
    while (isspace((unsigned char)*e)) e++;
    while (*e == '&') e++;
    while (isspace((unsigned char)*e)) e++;
    snprintf(out, size, "%s", e);
    size_t n = strlen(out);
    while (n && isspace((unsigned char)out[n - 1])) out[--n] = '\0';
}

static void lower_names(stub_rtc_program_t *p) {
    stub_cpu_build_t *b = stub_cpukern_offer_bundle(p->code, p->code_size);
    for (int i = 0; b && i < p->num_expressions; i++) {
        char bare[1024];
        bare_expression(p->expressions[i], bare, sizeof bare);
        const char *sym = stub_cpukern_symbol(b, bare);
        p->lowered[i] = sym ? strdup(sym) : NULL;
    }
    stub_cpukern_release(b);
}

hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions,
                                  ROCPY_ARG_hiprtcCompileProgram__options options) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (numOptions < 0 || (numOptions > 0 && !options)) return HIPRTC_ERROR_INVALID_INPUT;
    free(p->log);
    free(p->code);
    p->log = NULL;
    p->code = NULL;
    p->code_size = 0;
    p->compiled = false;
    for (int i = 0; i < p->num_expressions; i++) {
        free(p->lowered[i]);
        p->lowered[i] = NULL;
    }
    /* hiprtcCompileProgram: fgpu_rdc when an option is exactly "-fgpu-rdc" */
    p->rdc = false;
    for (int i = 0; stub_rule(STUB_RULE_HIPRTC_RDC_GIVES_BITCODE) && i < numOptions; i++)
        if (options[i] && strcmp(options[i], "-fgpu-rdc") == 0) p->rdc = true;
    char target[256];
    stub_rtc_input_t in = {p->source, p->name, p->num_headers, p->headers, p->include_names,
                           numOptions, (const char *const *)options, p->num_expressions,
                           p->expressions, stub_linker_current_target(target, sizeof target), p->rdc};
    hiprtcResult rc = stub_rtc_compile(&in, &p->log, &p->code, &p->code_size);
    if (rc == HIPRTC_SUCCESS) {
        p->compiled = true;
        if (!p->rdc) lower_names(p);
    }
    return rc;
}

/* hiprtc's getMangledName: NAME_EXPRESSION_NOT_VALID for an expression that was
 * not added, or before a successful compile */
hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char *name_expression,
                                  const char **lowered_name) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!name_expression || !lowered_name) return HIPRTC_ERROR_INVALID_INPUT;
    for (int i = 0; p->compiled && i < p->num_expressions; i++)
        if (strcmp(p->expressions[i], name_expression) == 0 && p->lowered[i]) {
            *lowered_name = p->lowered[i];
            return HIPRTC_SUCCESS;
        }
    return HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
}

hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t *logSizeRet) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!logSizeRet) return HIPRTC_ERROR_INVALID_INPUT;
    *logSizeRet = p->log ? strlen(p->log) + 1 : 0;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char *dst) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!dst) return HIPRTC_ERROR_INVALID_INPUT;
    if (p->log) memcpy(dst, p->log, strlen(p->log) + 1);
    return HIPRTC_SUCCESS;
}

/* the executable: none for an rdc program (RTCCompileProgram::compile fills
 * LLVMBitcode_ instead of executable_) */
static size_t exec_size(const stub_rtc_program_t *p) { return p->rdc ? 0 : p->code_size; }

hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t *binarySizeRet) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!binarySizeRet) return HIPRTC_ERROR_INVALID_INPUT;
    *binarySizeRet = exec_size(p);
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetCode(hiprtcProgram prog, char *binaryMem) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!binaryMem) return HIPRTC_ERROR_INVALID_INPUT;
    if (exec_size(p)) memcpy(binaryMem, p->code, p->code_size);
    return HIPRTC_SUCCESS;
}

#ifdef ROCPY_HAVE_hiprtcGetBitcode
/* hiprtc.cpp hiprtcGetBitcode/Size (5.7 on): the output pointer first, then
 * RTCCompileProgram::GetBitcode(Size): false (HIPRTC_ERROR_INVALID_PROGRAM)
 * unless the program was compiled with -fgpu-rdc and has bitcode */
static bool has_bitcode(const stub_rtc_program_t *p) { return p && p->rdc && p->code_size > 0; }

hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char *bitcode) {
    if (!bitcode) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = program(prog);
    if (!has_bitcode(p)) return HIPRTC_ERROR_INVALID_PROGRAM;
    memcpy(bitcode, p->code, p->code_size);
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t *bitcode_size) {
    if (!bitcode_size) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = program(prog);
    if (!has_bitcode(p)) return HIPRTC_ERROR_INVALID_PROGRAM;
    *bitcode_size = p->code_size;
    return HIPRTC_SUCCESS;
}
#endif
