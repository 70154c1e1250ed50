/* The ABI between the stub (stub_cpukern.c) and a CPU build of HIP kernels
 * (a shared object compiled by rocpy.cpukern with include/hip_cpu.h).  Plain
 * C, shared by both sides; bump ROCPY_CPUKERN_ABI on any change. */
#ifndef ROCPY_CPUKERN_H
#define ROCPY_CPUKERN_H

#include <stddef.h>
#include <stdint.h>

#define ROCPY_CPUKERN_ABI 2

/* What runs a kernel's dispatch. */
typedef struct rocpy_cpukern_launch {
    const void *kernarg;
    size_t kernarg_size;
    uint32_t grid[3];          /* total work-items per dimension */
    uint32_t block[3];         /* work-group size per dimension */
    uint32_t shared_bytes;     /* dynamic shared memory per block (at most) */
    uint32_t warp_size;        /* 64 on gfx9, 32 on gfx10+ */
    uint32_t workers;          /* host threads to spread blocks over (>= 1) */
    /* out: on failure, a message (NUL-terminated) and, for a memory fault,
     * the first address that faulted */
    char message[256];
    uint64_t fault_address;
} rocpy_cpukern_launch_t;

/* Statuses of rocpy_cpukern_kernel_t.run */
#define ROCPY_CPUKERN_OK 0
#define ROCPY_CPUKERN_FAILED 1         /* message says why (barrier, assert, args) */
#define ROCPY_CPUKERN_MEMORY_FAULT 2   /* fault_address says where */
#define ROCPY_CPUKERN_TRAP 3           /* a trap (device assert): message says why */

typedef struct rocpy_cpukern_kernel {
    const char *name;           /* the identifier in the source */
    const void *address;        /* the kernel function (dladdr gives its symbol) */
    int (*run)(rocpy_cpukern_launch_t *launch);
} rocpy_cpukern_kernel_t;

/* Exported by every CPU build: its kernels and their count; the ABI version. */
typedef const rocpy_cpukern_kernel_t *(*rocpy_cpukern_kernels_fn)(size_t *count);
#define ROCPY_CPUKERN_KERNELS_SYMBOL "rocpy_cpukern_kernels"
#define ROCPY_CPUKERN_ABI_SYMBOL "rocpy_cpukern_abi"

/* The offload-bundle entry id of a CPU build in a combined file. */
#define ROCPY_CPUKERN_BUNDLE_ID "host-x86_64-unknown-linux-gnu-rocpycpu"

#endif
