/* Guard pages behind allocations ($ROCPY_STUB_GUARD_PAGES=1, read once): a
 * debugging mode in which a kernel's access past the end of a buffer is the
 * GPU memory fault the stub models, at the address it touched, instead of a
 * silent write into the allocator's slack.
 *
 * Each block is its own mapping: a header page (the mapping's length), the
 * data pages, then a PROT_NONE page; the pointer is placed so that the
 * allocation, rounded up to its alignment, ends where the guard starts.
 * Alignments up to a page are capped at GUARD_ALIGN (256 bytes, what hipMalloc
 * promises; the stub's device allocations are otherwise page-aligned):
 * a buffer of a multiple of 256 bytes has its guard right at its end.  On
 * the GPU an access past a buffer faults only where no page is mapped;
 * rounding and neighbours make that rarer there, so a clean run here says
 * more than one on hardware, never less.  A CPU build's SIGSEGV on the
 * guard becomes its memory fault (hip_cpu.h); emulations check with
 * stub_kernel_reach as always.  Costs two extra pages and an mmap per
 * allocation (benchmarks/cpukern_bench.py --guard-pages measures it). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "stub_core.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool enabled;
static size_t page;

static void init(void) {
    const char *env = getenv("ROCPY_STUB_GUARD_PAGES");
    enabled = env && *env && strcmp(env, "0") != 0;
    page = (size_t)sysconf(_SC_PAGESIZE);
}

bool stub_guard_enabled(void) {
    pthread_once(&once, init);
    return enabled;
}

typedef struct header {
    char *base;
    size_t length;
} header_t;

/* the page before p's holds the mapping's header (slack or the header page) */
static header_t *header_of(void *p) {
    return (header_t *)(((uintptr_t)p & ~(uintptr_t)(page - 1)) - page);
}

#define GUARD_ALIGN 256

void *stub_guard_alloc(size_t size, size_t align) {
    pthread_once(&once, init);
    if (align > GUARD_ALIGN && align <= page) align = GUARD_ALIGN;   /* larger: vmem granules */
    if (size > SIZE_MAX / 4 || align > SIZE_MAX / 4) return NULL;
    size_t unit = align > page ? align : page;      /* both powers of two */
    size_t rounded = (size + align - 1) / align * align;
    size_t data = (rounded + unit - 1) / unit * unit;
    size_t length = page + (unit - page) + data + page;
    char *base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    /* data starts unit-aligned after at least one page: p = start + data - rounded is aligned */
    char *start = (char *)(((uintptr_t)base + page + unit - 1) & ~(uintptr_t)(unit - 1));
    if (mprotect(start + data, page, PROT_NONE) != 0) {
        munmap(base, length);
        return NULL;
    }
    char *p = start + data - rounded;
    *header_of(p) = (header_t){base, length};
    return p;
}

void stub_guard_free(void *p) {
    if (!p) return;
    header_t h = *header_of(p);
    munmap(h.base, h.length);
}
