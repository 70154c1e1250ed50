/* Fat-binary registration (hip_fatbin.c): what hipcc's generated constructors
 * register, and how launches and symbol copies find it. */
#ifndef ROCPY_STUB_HIP_FATBIN_H
#define ROCPY_STUB_HIP_FATBIN_H

#include "hip_internal.h"

/* hipcc's registration calls (hip_fatbin.c), also in hip_fatbin.cdef so that
 * raw tests can register a bundle as a program's constructor does */
void **__hipRegisterFatBinary(const void *data);
void __hipRegisterFunction(void **modules, const void *hostFunction, char *deviceFunction,
                           const char *deviceName, unsigned int threadLimit, void *tid, void *bid,
                           dim3 *blockDim, dim3 *gridDim, int *wSize);
void __hipUnregisterFatBinary(void **modules);

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
/* the same for `size` bytes read from a file (hipModuleLoad's path) */
hipError_t hip_module_load_sized(hipModule_t *module, const void *data, size_t size, int device);
void hip_module_unload_image(hipModule_t module);
hipError_t hip_module_function(hipModule_t module, const char *name, hipFunction_t *out);
hipError_t hip_module_global(hipModule_t module, const char *name, void **ptr, size_t *size);
uint32_t hip_module_function_count(hipModule_t module);
hipFunction_t hip_module_function_at(hipModule_t module, uint32_t i);   /* NULL past the end */

/* hip_launch.c: a launch of a kernel found by host stub (hipLaunchKernel's path) */
hipError_t hip_launch_by_host(const void *host, dim3 grid, dim3 block, void **args, void **extra,
                              size_t shared, hipStream_t stream);

/* hip_launch.c: hipErrorLaunchFailure when a launch on `device` failed
 * since the last clearing call (`clear`: the synchronizations; queries only look) */
hipError_t hip_launch_take_failure(int device, bool clear);

#endif
