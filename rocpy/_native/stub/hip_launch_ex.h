/* What the cooperative and extensible launches (hip_launch_coop.c,
 * hip_launch_ex.c) share with the plain launch path and the occupancy code. */
#ifndef ROCPY_STUB_HIP_LAUNCH_EX_H
#define ROCPY_STUB_HIP_LAUNCH_EX_H

#include "hip_internal.h"

/* hip_launch.c: a launch of a module function on a stream (capture
 * included), grid in work-items: hipModuleLaunchKernel's path. */
hipError_t hip_launch_module(hipFunction_t f, const uint32_t global[3], const uint32_t block[3],
                             unsigned shared, hipStream_t stream, void **params, void **extra);

/* hip_occupancy.c: the most blocks of `block` work-items a cooperative
 * launch of sym on `device` may have (ihipOccupancyMaxActiveBlocksPerMultiprocessor's
 * numBlocksPerGrid, bestBlockSize mode, as ihipLaunchKernel_validate asks it). */
hipError_t hip_occupancy_grid_limit(const struct ihipModuleSymbol_t *sym, int device, int block,
                                    size_t dyn_lds, int *max_blocks);

/* hip_launch_coop.c: a cooperative launch of module function f, grid in
 * blocks (ihipModuleLaunchKernel with CooperativeGroups): the plain launch's
 * checks, then grid size against hip_occupancy_grid_limit
 * (hipErrorCooperativeLaunchTooLarge). */
hipError_t hip_launch_cooperative(hipFunction_t f, const uint32_t grid[3], const uint32_t block[3],
                                  unsigned shared, hipStream_t stream, void **params, void **extra);

/* hip_launch_host.c: hipLaunchCooperativeKernel_common (a host function
 * pointer registered by a fat binary) */
hipError_t hip_launch_cooperative_by_host(const void *f, dim3 grid, dim3 block, void **params,
                                          unsigned shared, hipStream_t stream);

#endif
