/* Devices (hipamd hip_device.cpp, hip_device_runtime.cpp): the device table
 * over the stub's devices, the per-thread current device, properties that
 * match the HSA agents the stub describes, synchronisation and reset. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hip_fatbin.h"     /* hip_launch_take_failure */
#include "hip_internal.h"

static hip_dev_t devices[STUB_MAX_DEVICES];
static int count;

void hip_device_init(void) {
    count = stub_device_count();
    for (int i = 0; i < count; i++) {
        hip_dev_t *d = &devices[i];
        d->id = i;
        d->info = stub_device(i);
        pthread_mutex_init(&d->lock, NULL);
        atomic_init(&d->flags, hipDeviceScheduleSpin);
        atomic_init(&d->active, false);
        atomic_init(&d->stack_size, 1024);
        d->null_stream = hip_stream_new_null(i);
        if (!d->null_stream) stub_abort("hipInit", "out of memory");
    }
}

int hip_device_count(void) { return count; }

hip_dev_t *hip_dev(int id) { return id >= 0 && id < count ? &devices[id] : NULL; }

hip_dev_t *hip_current_dev(void) {
    hip_tls_t *t = hip_tls();
    return &devices[t->device < 0 ? 0 : t->device];
}

hipError_t hip_get_properties(hipDeviceProp_t *props, int device) {
    if (!props) return hipErrorInvalidValue;
    hip_dev_t *dev = hip_dev(device);
    if (!dev) return hipErrorInvalidDevice;
    const stub_device_t *d = dev->info;
    const int int32_max = 0x7fffffff;
    hipDeviceProp_t p;
    memset(&p, 0, sizeof p);
    snprintf(p.name, sizeof p.name, "%s", d->name);
    p.totalGlobalMem = d->global_mem_size;
    p.sharedMemPerBlock = d->lds_size;
    p.regsPerBlock = 65536;
    p.warpSize = (int)d->wavefront_size;
    p.maxThreadsPerBlock = 1024;
    p.maxThreadsDim[0] = p.maxThreadsDim[1] = p.maxThreadsDim[2] = 1024;
    p.maxGridSize[0] = p.maxGridSize[1] = p.maxGridSize[2] = int32_max;
    p.clockRate = (int)d->max_clock_mhz * 1000;
    p.memoryClockRate = (int)d->memory_clock_mhz * 1000;
    p.memoryBusWidth = (int)d->memory_bus_width;
    p.totalConstMem = (size_t)int32_max;
    p.major = (int)(d->gfx_version / 10000);
    p.minor = (int)(d->gfx_version / 100 % 100);
    p.multiProcessorCount = (int)d->compute_units;
    p.l2CacheSize = (int)d->l2_cache_size;
    p.maxThreadsPerMultiProcessor = 2048;
    p.computeMode = 0;
    p.clockInstructionRate = 100000;   /* the 100 MHz timestamp counter, in kHz */
    p.arch.hasGlobalInt32Atomics = 1;
    p.arch.hasGlobalFloatAtomicExch = 1;
    p.arch.hasSharedInt32Atomics = 1;
    p.arch.hasSharedFloatAtomicExch = 1;
    p.arch.hasFloatAtomicAdd = 1;
    p.arch.hasGlobalInt64Atomics = 1;
    p.arch.hasSharedInt64Atomics = 1;
    p.arch.hasDoubles = 1;
    p.arch.hasWarpVote = 1;
    p.arch.hasWarpBallot = 1;
    p.arch.hasWarpShuffle = 1;
    p.arch.hasThreadFenceSystem = 1;
    p.arch.has3dGrid = 1;
    p.concurrentKernels = 1;
    p.pciDomainID = 0;
    p.pciBusID = (int)d->pci_bus_id;
    p.pciDeviceID = 0;
    p.maxSharedMemoryPerMultiProcessor = d->lds_size;
    p.canMapHostMemory = 1;
#ifdef ROCPY_HAVE_hipDeviceProp_t__gcnArch
    /* hipamd's gcnArch: major*100 + minor*10 + stepping (gfx90a -> 910); HIP 6.0 removed it */
    p.gcnArch = p.major * 100 + p.minor * 10 + (int)(d->gfx_version % 100);
#endif
    snprintf(p.gcnArchName, sizeof p.gcnArchName, "%s", d->arch);
    p.cooperativeLaunch = 1;
    p.cooperativeMultiDeviceLaunch = 1;
    p.cooperativeMultiDeviceUnmatchedFunc = 1;
    p.cooperativeMultiDeviceUnmatchedGridDim = 1;
    p.cooperativeMultiDeviceUnmatchedBlockDim = 1;
    p.cooperativeMultiDeviceUnmatchedSharedMem = 1;
    p.maxTexture1DLinear = int32_max;
    p.maxTexture1D = 16384;
    p.maxTexture2D[0] = p.maxTexture2D[1] = 16384;
    p.maxTexture3D[0] = p.maxTexture3D[1] = p.maxTexture3D[2] = 2048;
    p.memPitch = (size_t)int32_max;
    p.textureAlignment = 256;
    p.texturePitchAlignment = 256;
    p.ECCEnabled = d->sramecc;
    p.isLargeBar = 1;
    p.managedMemory = 1;
    p.concurrentManagedAccess = 1;
    p.pageableMemoryAccess = d->xnack;
    *props = p;
    return hipSuccess;
}

/* ---- API ------------------------------------------------------------- */

hipError_t hipGetDeviceCount(int *n) {
    hip_init_quiet();
    if (!n) HIP_RETURN(hipErrorInvalidValue);
    *n = count;
    HIP_RETURN(count < 1 ? hipErrorNoDevice : hipSuccess);
}

hipError_t hipDeviceGet(hipDevice_t *device, int ordinal) {
    HIP_INIT_API();
    if (!device && stub_rule(STUB_RULE_DEVICE_GET_NULL_IS_INVALID_VALUE)) HIP_RETURN(hipErrorInvalidValue);
    if (ordinal < 0 || ordinal >= count || !device) HIP_RETURN(hipErrorInvalidDevice);
    *device = ordinal;
    HIP_RETURN(hipSuccess);
}

hipError_t hipSetDevice(int device) {
    HIP_INIT_API();
    if (device < 0 || device >= count) HIP_RETURN(hipErrorInvalidDevice);
    hip_tls()->device = device;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGetDevice(int *device) {
    HIP_INIT_API();
    if (!device) HIP_RETURN(hipErrorInvalidValue);
    *device = hip_current_dev()->id;
    HIP_RETURN(hipSuccess);
}

hipError_t hipGetDeviceProperties(hipDeviceProp_t *props, int device) {
    HIP_INIT_API();
    HIP_RETURN(hip_get_properties(props, device));
}

hipError_t hipDeviceGetName(char *name, int len, hipDevice_t device) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_dev(device);
    if (!dev) HIP_RETURN(hipErrorInvalidDevice);
    if (!name || len <= 0) HIP_RETURN(hipErrorInvalidValue);
    size_t n = strlen(dev->info->name);
    if (n > (size_t)len - 1) HIP_RETURN(hipErrorInvalidValue);
    memcpy(name, dev->info->name, n + 1);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceGetUuid(hipUUID *uuid, hipDevice_t device) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_dev(device);
    if (!dev) HIP_RETURN(hipErrorInvalidDevice);
    if (!uuid) HIP_RETURN(hipErrorInvalidValue);
    /* ROCm's uuid is the agent's "GPU-<16 hex digits>" string, first 16 bytes */
    char text[32];
    snprintf(text, sizeof text, "GPU-%08x%08x", dev->info->chip_id, (unsigned)dev->info->physical);
    memcpy(uuid->bytes, text, sizeof uuid->bytes);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_dev(device);
    if (!dev) HIP_RETURN(hipErrorInvalidDevice);
    if (!bytes) HIP_RETURN(hipErrorInvalidValue);
    *bytes = dev->info->global_mem_size;
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceComputeCapability(int *major, int *minor, hipDevice_t device) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_dev(device);
    if (!dev) HIP_RETURN(hipErrorInvalidDevice);
    if (!major || !minor) HIP_RETURN(hipErrorInvalidValue);
    *major = (int)(dev->info->gfx_version / 10000);
    *minor = (int)(dev->info->gfx_version / 100 % 100);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceGetPCIBusId(char *pciBusId, int len, int device) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_dev(device);
    if (!dev) HIP_RETURN(hipErrorInvalidDevice);
    if (!pciBusId || len <= 0) HIP_RETURN(hipErrorInvalidValue);
    snprintf(pciBusId, (size_t)len, "%04x:%02x:%02x.0", 0u, dev->info->pci_bus_id, 0u);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceGetByPCIBusId(int *device, const char *pciBusId) {
    HIP_INIT_API();
    if (!device || !pciBusId) HIP_RETURN(hipErrorInvalidValue);
    unsigned domain, bus, dev;
    if (sscanf(pciBusId, "%04x:%02x:%02x", &domain, &bus, &dev) == 3) {
        for (int i = 0; i < count; i++) {
            if (domain == 0 && dev == 0 && bus == devices[i].info->pci_bus_id) {
                *device = i;
                HIP_RETURN(hipSuccess);
            }
        }
    }
    HIP_RETURN(hipErrorInvalidValue);
}

/* hipLimitStackSize and hipLimitRange are newer than the 5.2 headers: by value */
#define STUB_LIMIT_STACK_SIZE 0u
#define STUB_LIMIT_RANGE 3u
/* rocclr Device::UpdateStackSize: COMPUTE_TMPRING_SIZE.WAVE_SIZE's range per lane */
#define STUB_MAX_STACK_SIZE ((128u << 10) - 16u)

hipError_t hipDeviceGetLimit(size_t *pValue, enum hipLimit_t limit) {
    HIP_INIT_API();
    bool stack = stub_rule(STUB_RULE_LIMITS_STACK_SIZE);
    if (!pValue || (stack && (unsigned)limit >= STUB_LIMIT_RANGE)) HIP_RETURN(hipErrorInvalidValue);
    hip_dev_t *dev = hip_current_dev();
    if (stack && (unsigned)limit == STUB_LIMIT_STACK_SIZE) {
        *pValue = atomic_load(&dev->stack_size);
        HIP_RETURN(hipSuccess);
    }
    if (limit != hipLimitMallocHeapSize) HIP_RETURN(hipErrorUnsupportedLimit);
    *pValue = dev->info->global_mem_size;     /* totalGlobalMem, not the heap size set */
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceSetLimit(enum hipLimit_t limit, size_t value) {
    /* 5.2: HIP_RETURN(hipErrorNotSupported) and nothing else, no HIP_INIT_API */
    if (!stub_rule(STUB_RULE_LIMITS_STACK_SIZE)) HIP_RETURN(hipErrorNotSupported);
    HIP_INIT_API();
    if ((unsigned)limit >= STUB_LIMIT_RANGE) HIP_RETURN(hipErrorInvalidValue);
    hip_dev_t *dev = hip_current_dev();
    if ((unsigned)limit == STUB_LIMIT_STACK_SIZE) {
        if (value > STUB_MAX_STACK_SIZE) HIP_RETURN(hipErrorInvalidValue);
        atomic_store(&dev->stack_size, value);
        HIP_RETURN(hipSuccess);
    }
    if (limit == hipLimitMallocHeapSize && stub_rule(STUB_RULE_SET_LIMIT_MALLOC_HEAP)) {
        /* rocclr Device::UpdateInitialHeapSize */
        if (value >= dev->info->global_mem_size) HIP_RETURN(hipErrorInvalidValue);
        HIP_RETURN(hipSuccess);
    }
    HIP_RETURN(hipErrorUnsupportedLimit);
}

/* Cache and LDS bank configurations are fixed, as in hipamd: the getters
 * give its value, the setters change nothing; whether a setter refuses a
 * value outside its enum depends on the release (`valid`). */
#define FIXED_CONFIG(type, value, get, set, unsupported, valid)               \
    hipError_t get(type *config) {                                            \
        HIP_INIT_API();                                                       \
        if (!config) HIP_RETURN(hipErrorInvalidValue);                        \
        *config = value;                                                      \
        HIP_RETURN(hipSuccess);                                               \
    }                                                                         \
    hipError_t set(type config) {                                             \
        HIP_INIT_API();                                                       \
        if (unsupported) HIP_RETURN(hipErrorNotSupported);                    \
        if (!(valid)) HIP_RETURN(hipErrorInvalidValue);                       \
        HIP_RETURN(hipSuccess);                                               \
    }
FIXED_CONFIG(hipFuncCache_t, hipFuncCachePreferNone, hipDeviceGetCacheConfig, hipDeviceSetCacheConfig,
             stub_rule(STUB_RULE_CACHE_CONFIG_NOT_SUPPORTED),
             !stub_rule(STUB_RULE_CACHE_CONFIG_CHECKED) ||
                 (unsigned)config <= (unsigned)hipFuncCachePreferEqual)
FIXED_CONFIG(hipSharedMemConfig, hipSharedMemBankSizeFourByte, hipDeviceGetSharedMemConfig,
             hipDeviceSetSharedMemConfig, stub_rule(STUB_RULE_SHARED_MEM_CONFIG_NOT_SUPPORTED),
             !stub_rule(STUB_RULE_SHARED_MEM_CONFIG_CHECKED) ||
                 (unsigned)config <= (unsigned)hipSharedMemBankSizeEightByte)

hipError_t hipGetDeviceFlags(unsigned int *flags) {
    HIP_INIT_API();
    if (!flags) HIP_RETURN(hipErrorInvalidValue);
    *flags = atomic_load(&hip_current_dev()->flags);
    HIP_RETURN(hipSuccess);
}

hipError_t hipSetDeviceFlags(unsigned flags) {
    HIP_INIT_API();
    const unsigned supported = hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax;
    const unsigned exclusive = flags & (hipDeviceScheduleSpin | hipDeviceScheduleYield |
                                        hipDeviceScheduleBlockingSync);
    if (stub_rule(STUB_RULE_SCHEDULE_FLAGS_EXCLUSIVE) && exclusive != hipDeviceScheduleAuto &&
        exclusive != hipDeviceScheduleSpin && exclusive != hipDeviceScheduleYield &&
        exclusive != hipDeviceScheduleBlockingSync)
        HIP_RETURN(hipErrorInvalidValue);
    if (flags & ~supported) HIP_RETURN(hipErrorInvalidValue);
    atomic_store(&hip_current_dev()->flags, flags & hipDeviceScheduleMask);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDeviceSynchronize(void) {
    HIP_INIT_API();
    HIP_RETURN_ONFAIL(hip_capture_check_device_sync());
    hip_device_sync(hip_current_dev()->id);
    hip_mempool_release_freed(hip_current_dev()->id);
    HIP_RETURN(hip_launch_take_failure(hip_current_dev()->id, true));
}

static bool device_memory_of(const stub_alloc_t *a, void *ctx) {
    /* module globals (tagged) belong to their module and live until unload */
    return a->kind == STUB_MEM_DEVICE && a->device == *(int *)ctx && a->tag == NULL;
}

/* hipamd: destroy the device's streams, purge its memory objects, reset its
 * flags.  Events, host memory and modules survive. */
hipError_t hipDeviceReset(void) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_current_dev();
    hip_stream_destroy_device(dev->id);
    hip_device_sync(dev->id);
    hip_mempool_device_reset(dev->id);
    stub_mem_release_where(device_memory_of, &dev->id);
    atomic_store(&dev->flags, hipDeviceScheduleSpin);
    HIP_RETURN(hipSuccess);
}

hipError_t hipDriverGetVersion(int *driverVersion) {
    hip_init_quiet();
    if (!driverVersion) HIP_RETURN(hipErrorInvalidValue);
    *driverVersion = stub_hip_version();
    HIP_RETURN(hipSuccess);
}

hipError_t hipRuntimeGetVersion(int *runtimeVersion) {
    hip_init_quiet();
    if (!runtimeVersion) HIP_RETURN(hipErrorInvalidValue);
    *runtimeVersion = stub_hip_version();
    HIP_RETURN(hipSuccess);
}

/* ---- peers (hipamd hip_peer.cpp) -------------------------------------- */

/* Every stub device can reach every other one (one XGMI hive), but a kernel
 * touches another device's memory only while peer access to it is enabled
 * from the launching device (hip_device_peers, read when a launch is
 * enqueued; hip_launch.c): otherwise it is a GPU memory fault, as ROCclr
 * maps a GPU's memory into another's page tables (hsa_amd_agents_allow_access)
 * only for the devices enabled as its peers.  ROCclr is more permissive than
 * the stub in two ways: a disable does not unmap what was mapped
 * (Device::disableP2P), and some copy commands involving another device's
 * memory map it for every peer-capable device (validatePeerMemory); the stub
 * keeps to what the API promises, so a program working on it relies on
 * neither. */
uint64_t hip_device_peers(int device) {
    hip_dev_t *dev = hip_dev(device);
    return dev ? atomic_load(&dev->peers) : 0;
}

static hipError_t can_access_peer(int *can, int device, int peer) {
    if (!can) return hipErrorInvalidValue;
    if (device == peer) {
        *can = 0;
        return hipSuccess;
    }
    if (!hip_dev(device) || !hip_dev(peer)) return hipErrorInvalidDevice;
    *can = 1;
    return hipSuccess;
}

hipError_t hipDeviceCanAccessPeer(int *canAccessPeer, int deviceId, int peerDeviceId) {
    HIP_INIT_API();
    HIP_RETURN(can_access_peer(canAccessPeer, deviceId, peerDeviceId));
}

hipError_t hipDeviceEnablePeerAccess(int peerDeviceId, unsigned int flags) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_current_dev();
    int can = 0;
    if (flags != 0) HIP_RETURN(hipErrorInvalidValue);
    if (can_access_peer(&can, dev->id, peerDeviceId) != hipSuccess || !can)
        HIP_RETURN(hipErrorInvalidDevice);
    uint64_t before = atomic_fetch_or(&dev->peers, 1ull << peerDeviceId);
    HIP_RETURN(before & (1ull << peerDeviceId) ? hipErrorPeerAccessAlreadyEnabled : hipSuccess);
}

hipError_t hipDeviceDisablePeerAccess(int peerDeviceId) {
    HIP_INIT_API();
    hip_dev_t *dev = hip_current_dev();
    int can = 0;
    if (can_access_peer(&can, dev->id, peerDeviceId) != hipSuccess || !can)
        HIP_RETURN(hipErrorInvalidDevice);
    uint64_t before = atomic_fetch_and(&dev->peers, ~(1ull << peerDeviceId));
    HIP_RETURN(before & (1ull << peerDeviceId) ? hipSuccess : hipErrorPeerAccessNotEnabled);
}
