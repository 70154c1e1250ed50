/* hipRTC's compiler on the stub: rocpy's compiler driver, run as a program.
 *
 * hipamd's hiprtc hands the source to comgr (clang in-process); the stub has
 * no clang of its own, so hiprtcCompileProgram runs the driver rocpy ships,
 * `python3 -m rocpy cpukern build SRC -o OUT --offload-arch=T`, which writes
 * one bundle of the GPU code object (hipcc) and the CPU build
 * (rocpy.cpukern).  A program, not Python in-process: C and C++ programs on
 * the drop-in libraries compile the same way as rocpy.hip.Program does.  The
 * interpreter is $ROCPY_PYTHON (else python3 on PATH); rocpy is found beside
 * this library (the folder above the rocpy package that holds it goes first
 * on the child's PYTHONPATH).  Options the driver takes (-D -U -I -O -std=,
 * --offload-arch= / --gpu-architecture=) are passed on; others, which
 * comgr would take (-ffast-math, -mcumode, ...), are dropped.  Without a
 * target option the current device's (as hiprtc: hipGetDeviceProperties). */
#define _GNU_SOURCE  /* dladdr, mkdtemp */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hip_rtc.h"

extern char **environ;

typedef struct strvec {
    char **v;
    size_t n, cap;
    bool failed;
} strvec_t;

static void push(strvec_t *s, const char *text) {
    if (s->failed) return;
    if (s->n + 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 32;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            s->failed = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    if (!(s->v[s->n] = strdup(text))) {
        s->failed = true;
        return;
    }
    s->v[++s->n] = NULL;
}

static void strvec_free(strvec_t *s) {
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
}

bool stub_rtc_read_file(const char *path, char **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    bool ok = buf && fread(buf, 1, (size_t)n, f) == (size_t)n;
    fclose(f);
    if (!ok) {
        free(buf);
        return false;
    }
    buf[n] = '\0';
    *data = buf;
    *size = (size_t)n;
    return true;
}

/* write `text` to dir/rel, making rel's folders; false for a path that leaves dir */
static bool write_under(const char *dir, const char *rel, const char *text) {
    if (!*rel || rel[0] == '/' || strstr(rel, "..")) return false;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path) return false;
    for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void stub_rtc_remove_tree(const char *dir) {
    if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "rocpy stub: hiprtc left %s behind\n", dir);
}

/* the folder holding the rocpy package this library belongs to, or "" */
static void rocpy_root(char *out, size_t size) {
    Dl_info info;
    out[0] = '\0';
    if (!dladdr((void *)stub_rtc_compile, &info) || !info.dli_fname) return;
    char path[4096];
    snprintf(path, sizeof path, "%s", info.dli_fname);
    char *slash;
    while ((slash = strrchr(path, '/'))) {
        *slash = '\0';
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/rocpy/__init__.py", path);
        if (access(probe, R_OK) == 0) {
            snprintf(out, size, "%s", path[0] ? path : "/");
            return;
        }
    }
}

static bool passed_on(const char *o) {
    static const char *const prefixes[] = {"-D", "-U", "-I", "-O", "-std="};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0 && o[strlen(prefixes[i])]) return true;
    return false;
}

static const char *target_option(const char *o) {
    static const char *const prefixes[] = {"--offload-arch=", "--gpu-architecture="};
    for (size_t i = 0; i < 2; i++)
        if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0) return o + strlen(prefixes[i]);
    return NULL;
}

static char *message(const char *fmt, const char *a, const char *b) {
    size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *m = malloc(n);
    if (m) snprintf(m, n, fmt, a, b);
    return m;
}

bool stub_rtc_driver(const char *dir, const char *const *args, size_t nargs, char **log) {
    *log = NULL;
    const char *env_python = getenv("ROCPY_PYTHON");
    const char *python = env_python && *env_python ? env_python : "python3";
    char logpath[4200];
    snprintf(logpath, sizeof logpath, "%s/log", dir);
    strvec_t argv = {0}, envp = {0};
    const char *fixed[] = {python, "-m", "rocpy", "cpukern"};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) push(&argv, fixed[i]);
    for (size_t i = 0; i < nargs; i++) push(&argv, args[i]);
    char root[4096];
    rocpy_root(root, sizeof root);
    const char *pp = getenv("PYTHONPATH");
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "PYTHONPATH=", 11) != 0) push(&envp, *e);
    char pythonpath[8400];
    snprintf(pythonpath, sizeof pythonpath, "PYTHONPATH=%s%s%s", root, pp && *pp && *root ? ":" : "",
             pp ? pp : "");
    push(&envp, pythonpath);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int err = argv.failed || envp.failed ? ENOMEM : posix_spawnp(&pid, python, &fa, NULL, argv.v, envp.v);
    posix_spawn_file_actions_destroy(&fa);
    strvec_free(&argv);
    strvec_free(&envp);
    if (err) {
        *log = message("rocpy stub: hiprtc: cannot run %s (rocpy's compiler driver): %s\n", python,
                       strerror(err));
        return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char *text = NULL;
    size_t text_size = 0;
    if (!stub_rtc_read_file(logpath, &text, &text_size)) text = strdup("");
    /* the driver names the temporary folder: hiprtc's log names the program */
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s/", dir);
    for (char *p; text && (p = strstr(text, prefix));) memmove(p, p + strlen(prefix), strlen(p + strlen(prefix)) + 1);
    *log = text;
    return text && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

hiprtcResult stub_rtc_compile(const stub_rtc_input_t *in, char **log, void **code,
                              size_t *code_size) {
    *log = NULL;
    *code = NULL;
    *code_size = 0;
    char dir[] = "/tmp/rocpy-hiprtc-XXXXXX";
    if (!mkdtemp(dir)) {
        *log = message("rocpy stub: hiprtc: cannot make a folder in /tmp: %s%s\n", strerror(errno), "");
        return *log ? HIPRTC_ERROR_COMPILATION : HIPRTC_ERROR_OUT_OF_MEMORY;
    }
    /* the source under the program's name (hiprtc's diagnostics name it) */
    const char *base = in->name && *in->name ? strrchr(in->name, '/') : NULL;
    base = base ? base + 1 : in->name && *in->name ? in->name : "program.hip";
    char src[256];
    size_t len = strlen(base);
    bool ext = (len > 4 && !strcmp(base + len - 4, ".hip")) || (len > 4 && !strcmp(base + len - 4, ".cpp")) ||
               (len > 3 && !strcmp(base + len - 3, ".cu"));
    snprintf(src, sizeof src, "%.200s%s", base, ext ? "" : ".hip");
    hiprtcResult rc = HIPRTC_ERROR_COMPILATION;
    if (!write_under(dir, src, in->source)) {
        *log = message("rocpy stub: hiprtc: cannot write the source %s%s\n", src, "");
        goto done;
    }
    for (int i = 0; i < in->num_headers; i++)
        if (!write_under(dir, in->include_names[i], in->headers[i])) {
            *log = message("rocpy stub: hiprtc: cannot write the header '%s' (%s)\n",
                           in->include_names[i], "an include name must be a relative path inside the program");
            goto done;
        }
    const char *target = in->target;
    for (int i = 0; i < in->num_options; i++)
        if (in->options[i] && target_option(in->options[i])) target = target_option(in->options[i]);
    if (!target || !*target) {
        *log = message("rocpy stub: hiprtc: no target: give --offload-arch=%s%s\n", "<gfx...>", "");
        goto done;
    }
    char path[4200], out[4200], arch[300];
    snprintf(path, sizeof path, "%s/%s", dir, src);
    snprintf(out, sizeof out, "%s/out.co", dir);
    snprintf(arch, sizeof arch, "--offload-arch=%s", target);
    strvec_t args = {0};
    const char *fixed[] = {"build", path, "-o", out, arch};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) push(&args, fixed[i]);
    if (in->rdc) push(&args, "--rdc");
    for (int i = 0; i < in->num_options; i++)
        if (in->options[i] && passed_on(in->options[i])) push(&args, in->options[i]);
    for (int i = 0; i < in->num_expressions; i++) {
        push(&args, "--name-expression");
        push(&args, in->expressions[i]);
    }
    bool ran = !args.failed && stub_rtc_driver(dir, (const char *const *)args.v, args.n, log);
    strvec_free(&args);
    if (ran) {
        char *data;
        size_t size;
        if (stub_rtc_read_file(out, &data, &size)) {
            *code = data;
            *code_size = size;
            rc = HIPRTC_SUCCESS;
        }
    }
done:
    stub_rtc_remove_tree(dir);
    if (!*log && rc != HIPRTC_SUCCESS) return HIPRTC_ERROR_OUT_OF_MEMORY;
    if (!*log) *log = strdup("");
    return rc;
}
