/* The stub's linker: units of the CPU build linked into one code object.
 *
 * hipamd's hiprtc links LLVM bitcode with comgr (hiprtcInternal.cpp
 * RTCLinkProgram::LinkComplete: linkLLVMBitcode, then createExecutable); the
 * stub's counterpart of bitcode is a unit (rocpy/cpukern/_rdc.py: an offload
 * bundle holding a relocatable object of the CPU build and its kernel table's
 * entry), and its link runs `$ROCPY_PYTHON -m rocpy cpukern link UNIT... -o
 * OUT` (hip_rtc_compile.c's stub_rtc_driver), whose output is a CPU build that
 * hipModuleLoadData loads.  The stub cannot read LLVM bitcode: an input that
 * is no unit fails the link, with a log line naming it. */
#define _GNU_SOURCE  /* mkdtemp, strdup */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_internal.h"
#include "hip_rtc.h"
#include "hip_rtc_linker.h"
#include "stub_co_internal.h"

/* must equal UNIT_INFO_ID in rocpy/cpukern/_rdc.py */
#define STUB_RDC_INFO_ID "host-x86_64-unknown-linux-gnu-rocpyrdcinfo"

const char *stub_linker_current_target(char *buf, size_t size) {
    int dev = 0;
    hipDeviceProp_t props;
    if (hipGetDevice(&dev) != hipSuccess || hipGetDeviceProperties(&props, dev) != hipSuccess)
        return NULL;
    snprintf(buf, size, "%s", props.gcnArchName);
    return buf;
}

bool stub_linker_is_unit(const void *data, size_t size) {
    const uint8_t *p = data;
    if (!data || size < 32 || !stub_co_is_bundle(data, size)) return false;
    uint64_t count = stub_co_le64(p + 24), pos = 32;
    size_t id_len = strlen(STUB_RDC_INFO_ID);
    for (uint64_t i = 0; i < count; i++) {
        if (!stub_co_in_range(pos, 24, size)) return false;
        uint64_t off = stub_co_le64(p + pos), len = stub_co_le64(p + pos + 8);
        uint64_t n = stub_co_le64(p + pos + 16);
        pos += 24;
        if (!stub_co_in_range(pos, n, size) || !stub_co_in_range(off, len, size)) return false;
        if (n == id_len && memcmp(p + pos, STUB_RDC_INFO_ID, n) == 0 && len) return true;
        pos += n;
    }
    return false;
}

bool stub_linker_add(stub_linker_t *l, const void *data, size_t size, const char *name) {
    void **inputs = realloc(l->inputs, (l->count + 1) * sizeof *inputs);
    if (inputs) l->inputs = inputs;
    size_t *sizes = inputs ? realloc(l->sizes, (l->count + 1) * sizeof *sizes) : NULL;
    if (sizes) l->sizes = sizes;
    char **names = sizes ? realloc(l->names, (l->count + 1) * sizeof *names) : NULL;
    if (names) l->names = names;
    void *copy = names ? malloc(size ? size : 1) : NULL;
    char *label = copy ? strdup(name && *name ? name : "(unnamed)") : NULL;
    if (!label) {
        free(copy);
        return false;
    }
    memcpy(copy, data, size);
    l->inputs[l->count] = copy;
    l->sizes[l->count] = size;
    l->names[l->count++] = label;
    return true;
}

__attribute__((format(printf, 2, 3))) static void set_log(stub_linker_t *l, const char *fmt, ...) {
    free(l->log);
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    l->log = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (l->log) vsnprintf(l->log, (size_t)n + 1, fmt, again);
    va_end(again);
}

static bool write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

bool stub_linker_complete(stub_linker_t *l, const char *target) {
    if (l->count == 0) {
        set_log(l, "rocpy stub: link: no inputs\n");
        return false;
    }
    for (size_t i = 0; i < l->count; i++)
        if (!stub_linker_is_unit(l->inputs[i], l->sizes[i])) {
            set_log(l, "rocpy stub: link: input %zu (%s) is not a unit of the stub's CPU build "
                       "(hiprtc -fgpu-rdc, rocpy cpukern build --rdc); the stub cannot link LLVM "
                       "bitcode (no comgr)\n", i, l->names[i]);
            return false;
        }
    char dir[] = "/tmp/rocpy-hiprtc-link-XXXXXX";
    if (!mkdtemp(dir)) {
        set_log(l, "rocpy stub: link: cannot make a folder in /tmp\n");
        return false;
    }
    size_t nargs = l->count + (target ? 4 : 3);
    char **args = calloc(nargs, sizeof *args);
    char out[4200], arch[300];
    snprintf(out, sizeof out, "%s/linked.co", dir);
    snprintf(arch, sizeof arch, "--offload-arch=%s", target ? target : "");
    bool ok = args != NULL;
    if (ok) {
        args[0] = strdup("link");
        args[l->count + 1] = strdup("-o");
        args[l->count + 2] = strdup(out);
        if (target) args[l->count + 3] = strdup(arch);
    }
    for (size_t i = 0; ok && i < l->count; i++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/%zu.unit", dir, i);
        ok = write_file(path, l->inputs[i], l->sizes[i]) && (args[i + 1] = strdup(path));
    }
    for (size_t i = 0; ok && i < nargs; i++) ok = args[i] != NULL;
    free(l->log);
    l->log = NULL;
    char *data = NULL;
    size_t size = 0;
    ok = ok && stub_rtc_driver(dir, (const char *const *)args, nargs, &l->log) &&
         stub_rtc_read_file(out, &data, &size);
    for (size_t i = 0; args && i < nargs; i++) free(args[i]);
    free(args);
    stub_rtc_remove_tree(dir);
    if (!ok) {
        if (!l->log) set_log(l, "rocpy stub: link: out of memory\n");
        return false;
    }
    free(l->out);
    l->out = data;
    l->out_size = size;
    return true;
}

void stub_linker_free(stub_linker_t *l) {
    for (size_t i = 0; i < l->count; i++) {
        free(l->inputs[i]);
        free(l->names[i]);
    }
    free(l->inputs);
    free(l->sizes);
    free(l->names);
    free(l->out);
    free(l->log);
    memset(l, 0, sizeof *l);
}
