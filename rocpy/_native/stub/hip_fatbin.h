/* Fat-binary registration (hip_fatbin.c): what hipcc's generated constructors
 * register, and how launches and symbol copies find it. */
#ifndef ROCPY_STUB_HIP_FATBIN_H
#define ROCPY_STUB_HIP_FATBIN_H

#include "hip_internal.h"

/* The kernel registered for host stub `host`, loaded for `device`
 * (PlatformState::getStatFunc): hipErrorInvalidDeviceFunction when nothing
 * registered it, the module load's status (hipErrorNoBinaryForGpu, ...)
 * when its fat binary has no code object for the device. */
hipError_t hip_fatbin_function(const void *host, int device, hipFunction_t *out);
/* The registered name of host stub `host`, or NULL. */
const char *hip_fatbin_function_name(const void *host);
/* The device copy of registered variable `host` on `device`
 * (StatCO::getStatGlobalVar): hipErrorInvalidSymbol when not registered. */
hipError_t hip_fatbin_variable(const void *host, int device, void **ptr, size_t *size);

/* hip_module.c, for the above: no API status recorded */
hipError_t hip_module_load_image(hipModule_t *module, const void *image, int device);
void hip_module_unload_image(hipModule_t module);
hipError_t hip_module_function(hipModule_t module, const char *name, hipFunction_t *out);
hipError_t hip_module_global(hipModule_t module, const char *name, void **ptr, size_t *size);

/* hip_launch.c: a launch of a kernel found by host stub (hipLaunchKernel's path) */
hipError_t hip_launch_by_host(const void *host, dim3 grid, dim3 block, void **args, void **extra,
                              size_t shared, hipStream_t stream);

/* hip_launch.c: hipErrorLaunchFailure when a launch on `device` failed
 * since the last clearing call (`clear`: the synchronizations; queries only look) */
hipError_t hip_launch_take_failure(int device, bool clear);

#endif
