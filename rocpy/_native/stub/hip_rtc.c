/* hiprtc (hipamd src/hiprtc/hiprtc.cpp at rocm-5.2.3) without a compiler.
 *
 * Programs are created, hold their source, headers and name expressions, and
 * are destroyed as in hiprtc; hiprtcCompileProgram always fails with
 * HIPRTC_ERROR_COMPILATION and a log that says why (the stub carries no
 * compiler: hip_unsupported.c lists it).  So, as in hiprtc after a failed
 * compile, the code is empty and no name expression has a lowered name.
 * Handles are checked against a registry (hiprtc casts any pointer). */
#include <stdio.h>
#include <string.h>

#include <hip/hiprtc.h>

#include "hip_internal.h"

#define RTC_MAGIC 0x52544350u

typedef struct stub_rtc_program {
    uint32_t magic;
    char *log;                        /* NUL-terminated; size includes the NUL */
} stub_rtc_program_t;

static hip_registry_t programs = HIP_REGISTRY_INIT;

static const char COMPILE_LOG[] =
    "rocpy stub: hiprtc cannot compile here (the stub carries no compiler); "
    "compile with hipcc or on a ROCm runtime\n";

static stub_rtc_program_t *program(hiprtcProgram p) {
    return p && hip_registry_contains(&programs, p) ? (stub_rtc_program_t *)(void *)p : NULL;
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
    (void)name;
    if (!prog) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (numHeaders < 0) return HIPRTC_ERROR_INVALID_INPUT;
    if (numHeaders && (!headers || !includeNames)) return HIPRTC_ERROR_INVALID_INPUT;
    if (!src) return HIPRTC_ERROR_INVALID_INPUT;
    for (int i = 0; i < numHeaders; i++)
        if (!headers[i] || !includeNames[i]) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = calloc(1, sizeof *p);
    if (!p) return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    p->magic = RTC_MAGIC;
    if (!hip_registry_add(&programs, p)) {
        free(p);
        return HIPRTC_ERROR_PROGRAM_CREATION_FAILURE;
    }
    *prog = (hiprtcProgram)(void *)p;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram *prog) {
    if (!prog) return HIPRTC_ERROR_INVALID_INPUT;
    stub_rtc_program_t *p = program(*prog);
    if (!p || !hip_registry_remove(&programs, p)) return HIPRTC_ERROR_INVALID_PROGRAM;
    free(p->log);
    free(p);
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char *name_expression) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!name_expression) return HIPRTC_ERROR_INVALID_INPUT;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int numOptions,
                                  ROCPY_ARG_hiprtcCompileProgram__options options) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (numOptions < 0 || (numOptions > 0 && !options)) return HIPRTC_ERROR_INVALID_INPUT;
    free(p->log);
    p->log = strdup(COMPILE_LOG);
    return p->log ? HIPRTC_ERROR_COMPILATION : HIPRTC_ERROR_OUT_OF_MEMORY;
}

/* never compiled: hiprtc's getMangledName finds nothing */
hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char *name_expression,
                                  const char **lowered_name) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!name_expression || !lowered_name) return HIPRTC_ERROR_INVALID_INPUT;
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

hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t *binarySizeRet) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!binarySizeRet) return HIPRTC_ERROR_INVALID_INPUT;
    *binarySizeRet = 0;
    return HIPRTC_SUCCESS;
}

hiprtcResult hiprtcGetCode(hiprtcProgram prog, char *binaryMem) {
    stub_rtc_program_t *p = program(prog);
    if (!p) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (!binaryMem) return HIPRTC_ERROR_INVALID_INPUT;
    return HIPRTC_SUCCESS;
}
