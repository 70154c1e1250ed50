#ifndef SYNTH_HIP_RUNTIME_API_H
#define SYNTH_HIP_RUNTIME_API_H
#include <stddef.h>
#define HIP_VERSION 60300000
#define hipGetDeviceProperties hipGetDevicePropertiesR0600
#define hipDeviceProp_t hipDeviceProp_tR0600
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void*)0x01)
#define hipHostMallocPortable 0x1
#define SYNTH_DEPRECATED __attribute__((deprecated("use something else")))
typedef enum hipError_t { hipSuccess = 0, hipErrorNotSupported = 801 } hipError_t;
typedef struct { unsigned hasDoubles : 1; unsigned hasWarpVote : 1; unsigned has3dGrid : 1; } hipDeviceArch_t;
typedef struct hipDeviceProp_tR0600 { char name[256]; hipDeviceArch_t arch; size_t totalGlobalMem; } hipDeviceProp_tR0600;
hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_t *prop, int device);
SYNTH_DEPRECATED hipError_t hipOldCall(int x);
struct hipExtent { size_t width, height, depth; };
typedef struct ihipCtx_t *hipCtx_t;
typedef void *hipDeviceptr_t;
/* HIP 7.0's spellings of parameters that changed (5.x, 6.x: int *, void *) */
hipError_t hipCtxGetApiVersion(hipCtx_t ctx, unsigned int *apiVersion);
hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, const void *src, size_t sizeBytes);
/* HIP 6.4's declaration (hipamd defines size_t *, const hipChannelFormatDesc *, int) */
typedef struct ihipMemPoolHandle_t *hipMemPool_t;
hipError_t hipDeviceGetTexture1DLinearMaxWidth(hipMemPool_t *mem_pool, int device);
static inline struct hipExtent make_hipExtent(size_t w, size_t h, size_t d) {
  struct hipExtent e; e.width = w; e.height = h; e.depth = d; return e; }
#endif
