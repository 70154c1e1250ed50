/* Kernel launches (hipamd hip_module.cpp ihipLaunchKernel_validate /
 * ihipModuleLaunchKernel, ROCclr's kernarg setup).
 *
 * Arguments are packed by the metadata's explicit argument offsets and sizes
 * into a kernarg segment; hidden arguments are filled as ROCclr fills them.
 * A launch runs the kernel's registered emulation on the stream's worker
 * with grid = gridDim * blockDim work-items.  A kernel the stub has no
 * emulation for fails the launch call with hipErrorLaunchFailure (nothing is
 * enqueued; no error is left behind for later calls).  An emulation that
 * reports a memory fault aborts the process, as ROCclr does on a GPU memory
 * fault; one that reports another failure (or raises, in Python) is a failed
 * launch: hipErrorLaunchFailure from the device's next stream or device
 * synchronization, which clears it, and from stream queries meanwhile (they
 * leave it: rocpy's waits query first); the stub's rule, hipamd has no such
 * failure (its kernels do not raise).  Python, having reported an
 * emulation's exception, clears it (rocpy_stub_clear_launch_failures).
 * So does a kernel whose global buffer argument points into, or whose
 * emulation reaches, device memory of another device to which the launching
 * device had not enabled peer access when the launch was enqueued (that
 * memory is not in its GPU's page tables; hip_device.c); host, registered and
 * managed memory are every device's.  Copies never need peer access. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "hip_fatbin.h"
#include "hip_internal.h"
#include "stub_codeobject.h"

static void put(unsigned char *buf, const stub_co_arg_t *a, uint64_t value) {
    size_t n = a->size < sizeof value ? a->size : sizeof value;
    memcpy(buf + a->offset, &value, n);   /* little endian: the low bytes */
}

static void fill_hidden(unsigned char *buf, const stub_co_arg_t *a, const uint32_t global[3],
                        const uint32_t block[3], uint32_t dynamic_lds) {
    static const char *const dims = "xyz";
    const char *k = a->value_kind;
    size_t len = strlen(k);
    int d = len ? (int)(strchr(dims, k[len - 1]) ? strchr(dims, k[len - 1]) - dims : -1) : -1;
    if (d >= 0 && strncmp(k, "hidden_block_count_", 19) == 0)
        put(buf, a, (global[d] + block[d] - 1) / block[d]);
    else if (d >= 0 && strncmp(k, "hidden_group_size_", 18) == 0)
        put(buf, a, block[d]);
    else if (d >= 0 && strncmp(k, "hidden_remainder_", 17) == 0)
        put(buf, a, global[d] % block[d]);
    else if (strcmp(k, "hidden_grid_dims") == 0)
        put(buf, a, 3);   /* hipamd's NDRange always has three dimensions */
    else if (strcmp(k, "hidden_dynamic_lds_size") == 0)
        put(buf, a, dynamic_lds);
    /* global offsets, queue and heap pointers stay 0 */
}

static hipError_t pack(const stub_co_kernel_t *k, void **params, void **extra, hip_launch_t *out,
                       const uint32_t global[3], const uint32_t block[3], uint32_t dynamic_lds) {
    const unsigned char *extra_buf = NULL;
    size_t extra_size = 0;
    if (extra) {
        if (extra[0] != HIP_LAUNCH_PARAM_BUFFER_POINTER || extra[2] != HIP_LAUNCH_PARAM_BUFFER_SIZE ||
            extra[4] != HIP_LAUNCH_PARAM_END)
            return hipErrorNotInitialized;
        extra_buf = extra[1];
        extra_size = extra[3] ? *(size_t *)extra[3] : 0;
    }
    size_t size = k->kernarg_segment_size, explicit_args = 0;
    for (uint32_t i = 0; i < k->num_args; i++) {
        const stub_co_arg_t *a = &k->args[i];
        if (a->offset + a->size > size) size = a->offset + a->size;
        if (a->kind != STUB_ARG_HIDDEN) explicit_args++;
    }
    if (explicit_args && !params && !extra) return hipErrorInvalidValue;
    out->kernarg = calloc(1, size ? size : 1);
    if (!out->kernarg) return hipErrorOutOfMemory;
    out->kernarg_size = size;
    size_t next = 0;
    for (uint32_t i = 0; i < k->num_args; i++) {
        const stub_co_arg_t *a = &k->args[i];
        if (a->kind == STUB_ARG_HIDDEN) {
            fill_hidden(out->kernarg, a, global, block, dynamic_lds);
        } else if (params) {
            memcpy(out->kernarg + a->offset, params[next++], a->size);
        } else if (extra_buf) {
            /* hipamd reads past a short buffer; the stub refuses it */
            if (a->offset + a->size > extra_size) {
                hip_launch_release(out);
                return hipErrorInvalidValue;
            }
            memcpy(out->kernarg + a->offset, extra_buf + a->offset, a->size);
        }
    }
    return hipSuccess;
}

hipError_t hip_launch_prepare(hipFunction_t f, const uint32_t global[3], const uint32_t block[3],
                              uint32_t shared_bytes, void **params, void **extra, int device,
                              hip_launch_t *out) {
    memset(out, 0, sizeof *out);
    if (!f) return hipErrorInvalidImage;
    if (params && extra) return hipErrorInvalidValue;
    for (int i = 0; i < 3; i++)
        if (!global[i] || !block[i]) return hipErrorInvalidValue;
    uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
    if (threads > 1024) return hipErrorInvalidConfiguration;
    struct ihipModuleSymbol_t *sym;
    if (hip_function_resolve(f, &sym) != hipSuccess) return hipErrorInvalidDeviceFunction;
    const stub_co_kernel_t *k = sym->kernel;
    if (k->max_flat_workgroup_size && threads > k->max_flat_workgroup_size)
        return hipErrorLaunchFailure;
    /* ROCclr refuses more LDS than the device has when capturing the args */
    if ((uint64_t)k->group_segment_fixed_size + shared_bytes > hip_dev(device)->info->lds_size)
        return hipErrorOutOfMemory;
    hipError_t status = pack(k, params, extra, out, global, block, shared_bytes);
    if (status != hipSuccess) return status;
    for (uint32_t i = 0; i < k->num_args && out->num_buffers < HIP_LAUNCH_MAX_BUFFERS; i++)
        if (k->args[i].kind == STUB_ARG_GLOBAL_BUFFER && k->args[i].size == sizeof(uint64_t))
            out->buffer_offsets[out->num_buffers++] = k->args[i].offset;
    snprintf(out->name, sizeof out->name, "%s", k->name);
    memcpy(out->grid, global, sizeof out->grid);
    memcpy(out->block, block, sizeof out->block);
    out->group_segment = k->group_segment_fixed_size + shared_bytes;
    out->cpu = hip_module_cpu_build(sym->module);
    out->device = device;
    return hipSuccess;
}

void hip_launch_release(hip_launch_t *l) {
    free(l->kernarg);
    l->kernarg = NULL;
}

hipError_t hip_launch_copy(const hip_launch_t *src, hip_launch_t *dst) {
    *dst = *src;
    dst->kernarg = malloc(src->kernarg_size ? src->kernarg_size : 1);
    if (!dst->kernarg) return hipErrorOutOfMemory;
    memcpy(dst->kernarg, src->kernarg, src->kernarg_size);
    return hipSuccess;
}

/* As ROCclr reports a GPU memory fault (its HSA system event handler), then aborts. */
_Noreturn static void memory_fault(const hip_launch_t *l, uint64_t address) {
    stub_abort("hipModuleLaunchKernel",
               "Memory access fault by GPU node-%d on address 0x%llx (kernel %s on device %d). "
               "Reason: Page not present or supervisor privilege.", l->device + 1,
               (unsigned long long)address, l->name, l->device);
}

/* The first global buffer argument into memory the launching GPU does not
 * map (another device's, without peer access), or 0.  Pointers no allocation
 * covers are left to the emulation, which faults only if it touches them. */
static uint64_t unmapped_buffer(const hip_launch_t *l) {
    for (uint32_t i = 0; i < l->num_buffers; i++) {
        uint64_t ptr;
        stub_alloc_t a;
        if (l->buffer_offsets[i] + sizeof ptr > l->kernarg_size) continue;
        memcpy(&ptr, l->kernarg + l->buffer_offsets[i], sizeof ptr);
        if (ptr && stub_mem_find((const void *)(uintptr_t)ptr, &a) &&
            !stub_mem_gpu_reaches(&a, l->device, l->peers))
            return ptr;
    }
    return 0;
}

/* devices on which a launch failed since their last synchronization */
static atomic_int failed[STUB_MAX_DEVICES];

static void run_kernel(hip_op_t *op) {
    hip_launch_t *l = HIP_OP_DATA(op, hip_launch_t);
    rocpy_stub_dispatch_t d = {l->name, l->kernarg, l->kernarg_size,
                               {l->grid[0], l->grid[1], l->grid[2]},
                               {l->block[0], l->block[1], l->block[2]},
                               l->group_segment, l->device};
    if (stub_fault_fire(ROCPY_STUB_FAULT_MEMORY_FAULT))
        stub_abort("hipModuleLaunchKernel",
                   "Memory access fault by GPU node-%d on kernel %s (injected)", l->device + 1, l->name);
    uint64_t address = unmapped_buffer(l);
    if (address) memory_fault(l, address);
    int rc = stub_kernel_run_mapped(&d, l->cpu, l->peers, &address);
    if (rc == STUB_KERNEL_MEMORY_FAULT) memory_fault(l, address);
    /* A trap fails the device's HSA queue (HSA_STATUS_ERROR_EXCEPTION); ROCclr's
     * queue callback (rocdevice.cpp callbackQueue) prints and aborts the process */
    if (rc == STUB_KERNEL_TRAP)
        stub_abort("hipModuleLaunchKernel", "Callback: Queue aborting with error : "
                   "HSA_STATUS_ERROR_EXCEPTION: a trap in kernel %s on device %d", l->name, l->device);
    if (rc != 0) {
        /* the emulation reported a failure or raised (not a GPU memory
         * fault): a failed launch, reported at the device's next
         * synchronization (hip_launch_take_failure), never an abort */
        fprintf(stderr, "rocpy stub: kernel %s failed on device %d (%s %d); the next "
                        "synchronization reports hipErrorLaunchFailure\n", l->name, l->device,
                rc < 0 ? "no emulation" : "emulation status", rc);
        if (l->device >= 0 && l->device < STUB_MAX_DEVICES) atomic_store(&failed[l->device], 1);
    }
}

hipError_t hip_launch_take_failure(int device, bool clear) {
    if (device < 0 || device >= STUB_MAX_DEVICES) return hipSuccess;
    int was = clear ? atomic_exchange(&failed[device], 0) : atomic_load(&failed[device]);
    return was ? hipErrorLaunchFailure : hipSuccess;
}

void rocpy_stub_clear_launch_failures(void) {
    for (int d = 0; d < STUB_MAX_DEVICES; d++) atomic_store(&failed[d], 0);
}

static void fini_kernel(hip_op_t *op) { free(HIP_OP_DATA(op, hip_launch_t)->kernarg); }

hipError_t hip_launch_enqueue(hip_stream_t *s, const hip_launch_t *l) {
    rocpy_stub_kernel_fn fn;
    void *user;
    if (!stub_kernel_lookup(l->name, l->cpu, &fn, &user)) return hipErrorLaunchFailure;
    if (stub_fault_fire(ROCPY_STUB_FAULT_QUEUE_ERROR)) return hipErrorLaunchFailure;
    hip_op_t *op = hip_op_new(run_kernel, sizeof(hip_launch_t));
    if (!op) return hipErrorOutOfMemory;
    hip_launch_t *copy = HIP_OP_DATA(op, hip_launch_t);
    if (hip_launch_copy(l, copy) != hipSuccess) {
        free(op);
        return hipErrorOutOfMemory;
    }
    op->fini = fini_kernel;
    copy->peers = hip_device_peers(copy->device);
    hip_stream_submit(s, op);
    return hipSuccess;
}

static hipError_t make_launch_node(hipGraph_t g, const hipGraphNode_t *deps, size_t ndeps,
                                   void *arg, hipGraphNode_t *out) {
    return hip_make_launch_node(g, deps, ndeps, arg, out);
}

static hipError_t module_launch(hipFunction_t f, const uint32_t global[3], const uint32_t block[3],
                                unsigned shared, hipStream_t stream, void **params, void **extra) {
    hip_stream_t *s;
    bool capturing;
    hipError_t status = hip_stream_begin_op(stream, &s, &capturing);
    if (status != hipSuccess) return status;
    hip_launch_t l;
    status = hip_launch_prepare(f, global, block, shared, params, extra, s->device, &l);
    if (status != hipSuccess) return status;
    status = capturing ? hip_capture_node(s, make_launch_node, &l) : hip_launch_enqueue(s, &l);
    hip_launch_release(&l);
    return status;
}

hipError_t hip_launch_module(hipFunction_t f, const uint32_t global[3], const uint32_t block[3],
                             unsigned shared, hipStream_t stream, void **params, void **extra) {
    return module_launch(f, global, block, shared, stream, params, extra);
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
                                 unsigned int gridDimZ, unsigned int blockDimX,
                                 unsigned int blockDimY, unsigned int blockDimZ,
                                 unsigned int sharedMemBytes, hipStream_t stream,
                                 void **kernelParams, void **extra) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    uint64_t gx = (uint64_t)gridDimX * blockDimX, gy = (uint64_t)gridDimY * blockDimY,
             gz = (uint64_t)gridDimZ * blockDimZ;
    if (gx > UINT32_MAX || gy > UINT32_MAX || gz > UINT32_MAX)
        HIP_RETURN(hipErrorInvalidConfiguration);
    uint32_t global[3] = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz};
    uint32_t block[3] = {blockDimX, blockDimY, blockDimZ};
    HIP_RETURN(module_launch(f, global, block, sharedMemBytes, stream, kernelParams, extra));
}

/* hipLaunchKernel (hipamd hip_module.cpp): the stream's device, the kernel
 * registered for the host stub on it (PlatformState::getStatFunc), then
 * ihipModuleLaunchKernel with grid = blocks * block size. */
hipError_t hip_launch_by_host(const void *host, dim3 grid, dim3 block, void **args, void **extra,
                              size_t shared, hipStream_t stream) {
    hip_stream_t *s;
    HIP_RETURN_ONFAIL(hip_stream_resolve(stream, &s));
    hipFunction_t f;
    HIP_RETURN_ONFAIL(hip_fatbin_function(host, s->device, &f));
    uint64_t gx = (uint64_t)grid.x * block.x, gy = (uint64_t)grid.y * block.y,
             gz = (uint64_t)grid.z * block.z;
    if (gx > UINT32_MAX || gy > UINT32_MAX || gz > UINT32_MAX) return hipErrorInvalidConfiguration;
    uint32_t global[3] = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz};
    uint32_t local[3] = {block.x, block.y, block.z};
    return module_launch(f, global, local, (unsigned)shared, stream, args, extra);
}

hipError_t hipLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
                           void **args, size_t sharedMemBytes, hipStream_t stream) {
    HIP_INIT_API();
    HIP_CHECK_STREAM_DETACHED(stream);
    HIP_RETURN(hip_launch_by_host(function_address, numBlocks, dimBlocks, args, NULL,
                                  sharedMemBytes, stream));
}
