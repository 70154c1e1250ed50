/* Occupancy from a kernel's metadata (hipamd hip_platform.cpp at rocm-5.2.3:
 * hip_impl::ihipOccupancyMaxActiveBlocksPerMultiprocessor and the API
 * functions over it).  The kernel's .vgpr_count, .sgpr_count,
 * .group_segment_fixed_size and .wavefront_size (ROCclr's WorkGroupInfo
 * usedVGPRs_/usedSGPRs_/usedLDSSize_/wavefrontSize_) against the device's
 * SIMDs per CU, LDS per CU and register files per target generation.
 *
 * The forms taking a host function pointer (`const void *f`) look it up in
 * the registered functions (PlatformState::getStatFunc); the stub has no
 * fat-binary registration yet, so they answer hipErrorInvalidValue as hipamd
 * does for a pointer nobody registered. */
#include "hip_internal.h"
#include "hip_launch_ex.h"
#include "stub_codeobject.h"

#define MAX_WORKGROUP 1024u              /* ROCclr maxWorkGroupSize_ (hipDeviceProp) */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

typedef struct occupancy {
    int blocks_per_cu, blocks_per_grid, best_block;
} occupancy_t;

static hipError_t occupancy(const stub_co_kernel_t *k, const stub_device_t *dev, int block,
                            size_t dyn_lds, bool potential, occupancy_t *o) {
    if (!potential) {
        if (block <= 0) return hipErrorInvalidValue;
        o->best_block = 0;
        if (block > (int)MAX_WORKGROUP) {
            o->blocks_per_cu = o->blocks_per_grid = 0;
            return hipSuccess;
        }
    } else if (block <= 0 || block > (int)MAX_WORKGROUP) {
        block = (int)MAX_WORKGROUP;
    }
    unsigned major = dev->gfx_version / 10000, minor = dev->gfx_version / 100 % 100,
             stepping = dev->gfx_version % 100;
    size_t max_waves_per_simd = major <= 9 ? 8 : 16;
    size_t max_vgprs = 1024, vgpr_granule = 8;
    if (major <= 9) {
        bool gfx90a = major == 9 && minor == 0 && stepping == 10;
        max_vgprs = gfx90a ? 512 : 256;
        vgpr_granule = gfx90a ? 8 : 4;
    }
    size_t vgpr_waves = max_waves_per_simd, gpr_waves;
    /* hipamd tests usedSGPRs_ before dividing by the VGPR count (as here) */
    if (k->sgpr_count > 0 && k->vgpr_count > 0)
        vgpr_waves = max_vgprs / align_up(k->vgpr_count, vgpr_granule);
    gpr_waves = vgpr_waves;
    if (k->sgpr_count > 0) {
        size_t max_sgprs = major < 8 ? 512 : major < 10 ? 800 : SIZE_MAX;
        size_t sgpr_waves = max_sgprs / align_up(k->sgpr_count, 16);
        gpr_waves = vgpr_waves < sgpr_waves ? vgpr_waves : sgpr_waves;
    }
    size_t waves = max_waves_per_simd < gpr_waves ? max_waves_per_simd : gpr_waves;
    size_t wave = k->wavefront_size ? k->wavefront_size : dev->wavefront_size;
    int alu_threads = (int)(dev->simds_per_cu * waves * wave);
    int lds_wgs = 0x7fffffff;
    size_t lds = k->group_segment_fixed_size + dyn_lds;
    if (lds) lds_wgs = (int)(dev->lds_size / lds);
    int aligned = (int)align_up((size_t)block, wave);
    o->blocks_per_cu = alu_threads / aligned;
    if (lds_wgs < o->blocks_per_cu) o->blocks_per_cu = lds_wgs;
    o->best_block = alu_threads < aligned ? alu_threads : aligned;
    int best_per_cu = o->best_block ? alu_threads / o->best_block : 0;
    o->blocks_per_grid = (int)dev->compute_units * (best_per_cu < lds_wgs ? best_per_cu : lds_wgs);
    return hipSuccess;
}

hipError_t hip_occupancy_grid_limit(const struct ihipModuleSymbol_t *sym, int device, int block,
                                    size_t dyn_lds, int *max_blocks) {
    occupancy_t o;
    HIP_RETURN_ONFAIL(occupancy(sym->kernel, hip_dev(device)->info, block, dyn_lds, true, &o));
    *max_blocks = o.blocks_per_grid;
    return hipSuccess;
}

static hipError_t module_occupancy(hipFunction_t f, int block, size_t dyn, bool potential,
                                   occupancy_t *o) {
    struct ihipModuleSymbol_t *sym;
    HIP_RETURN_ONFAIL(hip_function_resolve(f, &sym));
    return occupancy(sym->kernel, hip_current_dev()->info, block, dyn, potential, o);
}

static hipError_t potential(int *gridSize, int *blockSize, hipFunction_t f, size_t dyn,
                            int limit) {
    if (!gridSize || !blockSize) return hipErrorInvalidValue;
    occupancy_t o;
    hipError_t status = module_occupancy(f, limit, dyn, true, &o);
    if (status == hipSuccess) {
        *blockSize = o.best_block;
        *gridSize = o.blocks_per_grid;
    }
    return status;
}

static hipError_t active(int *numBlocks, hipFunction_t f, int blockSize, size_t dyn) {
    if (!numBlocks) return hipErrorInvalidValue;
    occupancy_t o = {0, 0, 0};
    hipError_t status = module_occupancy(f, blockSize, dyn, false, &o);
    *numBlocks = o.blocks_per_cu;
    return status;
}

hipError_t hipModuleOccupancyMaxPotentialBlockSize(int *gridSize, int *blockSize, hipFunction_t f,
                                                   size_t dynSharedMemPerBlk, int blockSizeLimit) {
    HIP_INIT_API();
    HIP_RETURN(potential(gridSize, blockSize, f, dynSharedMemPerBlk, blockSizeLimit));
}

/* flags are not read (hipamd) */
hipError_t hipModuleOccupancyMaxPotentialBlockSizeWithFlags(int *gridSize, int *blockSize,
                                                            hipFunction_t f,
                                                            size_t dynSharedMemPerBlk,
                                                            int blockSizeLimit,
                                                            unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(potential(gridSize, blockSize, f, dynSharedMemPerBlk, blockSizeLimit));
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, hipFunction_t f,
                                                              int blockSize,
                                                              size_t dynSharedMemPerBlk) {
    HIP_INIT_API();
    HIP_RETURN(active(numBlocks, f, blockSize, dynSharedMemPerBlk));
}

hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    int *numBlocks, hipFunction_t f, int blockSize, size_t dynSharedMemPerBlk, unsigned int flags) {
    (void)flags;
    HIP_INIT_API();
    HIP_RETURN(active(numBlocks, f, blockSize, dynSharedMemPerBlk));
}

/* getStatFunc: no registered host function matches (see the head comment) */
static hipError_t host_function(const void *f) {
    (void)f;
    return stub_rule(STUB_RULE_OCCUPANCY_UNKNOWN_FUNCTION_INVALID_DEVICE_FUNCTION)
               ? hipErrorInvalidDeviceFunction : hipErrorInvalidValue;
}

hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *f,
                                                        int blockSize, size_t dynSharedMemPerBlk) {
    (void)blockSize;
    (void)dynSharedMemPerBlk;
    HIP_INIT_API();
    if (!numBlocks) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(host_function(f));
}

hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, const void *f,
                                                                 int blockSize,
                                                                 size_t dynSharedMemPerBlk,
                                                                 unsigned int flags) {
    (void)blockSize;
    (void)dynSharedMemPerBlk;
    (void)flags;
    HIP_INIT_API();
    if (!numBlocks) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(host_function(f));
}

hipError_t hipOccupancyMaxPotentialBlockSize(int *gridSize, int *blockSize, const void *f,
                                             size_t dynSharedMemPerBlk, int blockSizeLimit) {
    (void)dynSharedMemPerBlk;
    (void)blockSizeLimit;
    HIP_INIT_API();
    if (!gridSize || !blockSize) HIP_RETURN(hipErrorInvalidValue);
    HIP_RETURN(host_function(f));
}
