/* Time and fatal diagnostics shared by the whole stub. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stub_core.h"

uint64_t stub_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void stub_abort(const char *call, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "rocpy stub: %s: ", call);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (the real runtime aborts here too)\n", stderr);
    fflush(stderr);
    abort();
}
