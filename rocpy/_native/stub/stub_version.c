/* The emulated ROCm release and the table of behaviour that changed between
 * releases.  Each row was read in the upstream source at the tags around the
 * change: ROCm/hipamd (5.2-5.5), ROCm/clr (5.6-6.3 and amd-staging),
 * ROCm/ROCR-Runtime (5.2-6.2) and ROCm/rocm-systems release/rocm-rel-7.0
 * (ROCr 7.0).  Where the issue that asked for a rule named another release,
 * the code at the tags decided; the row's comment says so. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hip/hip_version.h>

#include "stub_core.h"
#include "stub_version.h"
#include "hsa_internal.h"

#define RELEASE(major, minor) ((major) * 100 + (minor))

typedef struct rule_row {
    const char *name;
    int since;              /* first release with the new behaviour */
    const char *upstream;   /* where it is, in that release */
    int until;              /* first release without it again; 0: none yet */
    bool hsa;               /* a rule of ROCr's: follows the HSA half's release */
} rule_row_t;

static const rule_row_t rules[STUB_RULE_COUNT] = {
    /* 5.2: hipGetErrorString returned ihipGetErrorName (the enum's name) */
    [STUB_RULE_ERROR_STRING_DESCRIPTIVE] = {
        "hipGetErrorString gives the descriptive text (\"invalid argument\")", RELEASE(5, 3),
        "hipamd src/hip_error.cpp hipGetErrorString -> ihipGetErrorString (the issue said 6.0)"},
    /* 5.3 and 5.4 have the check too, but its last term tests
     * (flags & hipDeviceScheduleAuto) != hipDeviceScheduleAuto with Auto == 0,
     * which is never true: nothing was rejected until 5.5 fixed the term */
    [STUB_RULE_SCHEDULE_FLAGS_EXCLUSIVE] = {
        "hipSetDeviceFlags refuses more than one of Spin/Yield/BlockingSync", RELEASE(5, 5),
        "hipamd src/hip_device_runtime.cpp hipSetDeviceFlags (dead check in 5.3/5.4; the issue said 5.3)"},
    [STUB_RULE_INIT_FLAGS_MUST_BE_ZERO] = {
        "hipInit(flags != 0) is hipErrorInvalidValue", RELEASE(5, 5),
        "hipamd src/hip_context.cpp hipInit"},
    [STUB_RULE_DEVICE_GET_NULL_IS_INVALID_VALUE] = {
        "hipDeviceGet(nullptr, ...) is hipErrorInvalidValue, not hipErrorInvalidDevice", RELEASE(5, 5),
        "hipamd src/hip_device.cpp ihipDeviceGet"},
    [STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_VALUE] = {
        "hipStreamWaitEvent on an unknown stream is hipErrorInvalidValue (was ContextIsDestroyed)",
        RELEASE(5, 6), "clr hipamd/src/hip_stream.cpp hipStreamWaitEvent_common"},
    [STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_HANDLE] = {
        "hipStreamWaitEvent on an unknown stream is hipErrorInvalidHandle, checked before flags",
        RELEASE(5, 7), "clr hipamd/src/hip_stream.cpp hipStreamWaitEvent_common"},
    [STUB_RULE_SHARED_MEM_CONFIG_CHECKED] = {
        "hipDeviceSetSharedMemConfig refuses a value that is no hipSharedMemConfig", RELEASE(5, 6),
        "clr hipamd/src/hip_device_runtime.cpp hipDeviceSetSharedMemConfig (the issue said 6.0)"},
    [STUB_RULE_HOST_DEVICE_POINTER_FLAGS_MUST_BE_ZERO] = {
        "hipHostGetDevicePointer(flags != 0) is hipErrorInvalidValue", RELEASE(6, 1),
        "clr hipamd/src/hip_memory.cpp hipHostGetDevicePointer"},
    /* not in release/rocm-rel-6.3.0.1, present on amd-staging after the 6.3
     * branch: the first release that has it is 6.4 */
    [STUB_RULE_CACHE_CONFIG_CHECKED] = {
        "hipDeviceSetCacheConfig refuses a value that is no hipFuncCache_t", RELEASE(6, 4),
        "clr hipamd/src/hip_device_runtime.cpp hipDeviceSetCacheConfig (the issue said 6.3)"},
    [STUB_RULE_LAST_ERROR_KEEPS_ERRORS] = {
        "HIP_RETURN records only errors (not hipSuccess, not hipErrorNotReady) as the last error",
        RELEASE(7, 0), "clr hipamd/src/hip_internal.hpp HIP_RETURN (HIP 7.0 changes: hipGetLastError)"},
    /* 5.2 and 5.5 return hipSuccess, 5.3 and 5.4 hipErrorNotSupported */
    [STUB_RULE_SHARED_MEM_CONFIG_NOT_SUPPORTED] = {
        "hipDeviceSetSharedMemConfig is hipErrorNotSupported", RELEASE(5, 3),
        "hipamd src/hip_device_runtime.cpp hipDeviceSetSharedMemConfig", RELEASE(5, 5)},
    [STUB_RULE_CACHE_CONFIG_NOT_SUPPORTED] = {
        "hipDeviceSetCacheConfig is hipErrorNotSupported", RELEASE(5, 3),
        "hipamd src/hip_device_runtime.cpp hipDeviceSetCacheConfig (clr 5.6 returns hipSuccess)",
        RELEASE(5, 6)},
    /* 5.2: hipDeviceSetLimit is HIP_RETURN(hipErrorNotSupported), hipDeviceGetLimit
     * knows hipLimitMallocHeapSize only */
    [STUB_RULE_LIMITS_STACK_SIZE] = {
        "hipDeviceGet/SetLimit: hipLimitStackSize, limit >= hipLimitRange is hipErrorInvalidValue",
        RELEASE(5, 3), "hipamd src/hip_device_runtime.cpp hipDeviceGetLimit, hipDeviceSetLimit"},
    [STUB_RULE_SET_LIMIT_MALLOC_HEAP] = {
        "hipDeviceSetLimit(hipLimitMallocHeapSize) sets the initial heap size", RELEASE(5, 6),
        "clr hipamd/src/hip_device_runtime.cpp hipDeviceSetLimit, rocclr Device::UpdateInitialHeapSize"},
    /* 5.2-5.4 refuse null arrays even for numDependencies == 0 */
    [STUB_RULE_GRAPH_REMOVE_DEPENDENCIES_CHECKED] = {
        "hipGraphRemoveDependencies takes null arrays for numDependencies 0, refuses other graphs' nodes",
        RELEASE(5, 5), "hipamd src/hip_graph.cpp hipGraphRemoveDependencies"},
    [STUB_RULE_HOST_NODE_PARAMS_NULL_USER_DATA] = {
        "hipGraph(Exec)HostNodeSetParams take a null userData (5.2-5.4: hipErrorInvalidValue)",
        RELEASE(5, 5), "hipamd src/hip_graph.cpp hipGraphHostNodeSetParams"},
    /* 5.2/5.3: (device >= g_devices.size()) -> hipErrorInvalidValue */
    [STUB_RULE_DEFAULT_MEM_POOL_INVALID_DEVICE] = {
        "hipDeviceGetDefaultMemPool of a device out of range is hipErrorInvalidDevice", RELEASE(5, 4),
        "hipamd src/hip_mempool.cpp hipDeviceGetDefaultMemPool"},
    /* 5.2-5.4 set any pool as the device's current one */
    [STUB_RULE_SET_MEM_POOL_CHECKS_DEVICE] = {
        "hipDeviceSetMemPool refuses another device's pool (hipErrorInvalidDevice)", RELEASE(5, 5),
        "hipamd src/hip_mempool.cpp hipDeviceSetMemPool (MemoryPool::Device()->deviceId())"},
    /* 5.2-5.4: hipErrorInvalidDevicePointer (hip-tests 5.7 expects clr's) */
    [STUB_RULE_IPC_GET_MEM_HANDLE_INVALID_VALUE] = {
        "hipIpcGetMemHandle of no device allocation is hipErrorInvalidValue", RELEASE(5, 5),
        "hipamd src/hip_memory.cpp hipIpcGetMemHandle (Device::IpcCreate failing)"},
    [STUB_RULE_IPC_OPEN_OWN_MEM_HANDLE_REFUSED] = {
        "hipIpcOpenMemHandle in the process that made the handle is hipErrorInvalidContext",
        RELEASE(5, 5), "hipamd src/hip_memory.cpp hipIpcOpenMemHandle (owners_process_id)"},
    /* 5.2-5.4: hipErrorInvalidHandle */
    [STUB_RULE_IPC_CLOSE_UNKNOWN_INVALID_VALUE] = {
        "hipIpcCloseMemHandle of a pointer not opened is hipErrorInvalidValue", RELEASE(5, 5),
        "hipamd src/hip_memory.cpp hipIpcCloseMemHandle (Device::IpcDetach failing)"},
    /* 5.2: hipErrorOutOfMemory */
    [STUB_RULE_HOST_REGISTER_FAILURE_INVALID_VALUE] = {
        "hipHostRegister of a range that cannot be locked is hipErrorInvalidValue", RELEASE(5, 3),
        "hipamd src/hip_memory.cpp ihipHostRegister (amd::Buffer::create failing)"},
    /* 5.2/5.3 do not read the flags */
    [STUB_RULE_HOST_REGISTER_FLAGS_CHECKED] = {
        "hipHostRegister refuses flags > 15 (hipErrorInvalidValue)", RELEASE(5, 4),
        "hipamd src/hip_memory.cpp ihipHostRegister"},
    /* 5.2-5.5: hipErrorInvalidValue */
    [STUB_RULE_OCCUPANCY_UNKNOWN_FUNCTION_INVALID_DEVICE_FUNCTION] = {
        "hipOccupancy* of a host function no module registered is hipErrorInvalidDeviceFunction",
        RELEASE(5, 6), "clr hipamd/src/hip_platform.cpp hipOccupancy* (PlatformState::getStatFunc)"},
    [STUB_RULE_CU_MASK_WGP_PAIRS] = {
        "hsa_amd_queue_cu_set_mask on gfx10+ refuses a mask enabling one CU of a WGP pair",
        RELEASE(5, 3), "ROCR-Runtime src/core/runtime/amd_aql_queue.cpp AqlQueue::SetCUMasking", 0, true},
    /* 5.x-6.2: a graph keeps a set, releases one reference per object when
     * destroyed, and hipGraphUserObjectMove unlists the object.  Changed by
     * clr e74ac6f58 (amd-staging 2024-10-08, after the 6.2 branches; taken
     * as 6.3: the local clr mirror has no rocm-6.3 tag to confirm) */
    [STUB_RULE_GRAPH_USER_OBJECT_COUNTS] = {
        "a graph releases the user-object references it retained, counted, when destroyed",
        RELEASE(6, 3), "clr hipamd/src/hip_graph.cpp hipGraphRetainUserObject, hip_graph_internal.hpp ~Graph"},
    /* rocm-6.2.0 and amd-staging 2024-10 still answer hipErrorInvalidValue;
     * rocm-systems' clr (7.x) checks isValid first with ContextIsDestroyed */
    [STUB_RULE_COOPERATIVE_BAD_STREAM_CONTEXT_DESTROYED] = {
        "hipModuleLaunchCooperativeKernel on an unknown stream is hipErrorContextIsDestroyed",
        RELEASE(7, 0), "clr hipamd/src/hip_module.cpp hipModuleLaunchCooperativeKernel (hip::isValid)"},
    [STUB_RULE_COOPERATIVE_MULTI_DEVICE_SAME_SHAPE] = {
        "hipModuleLaunchCooperativeKernelMultiDevice refuses launches of different grid, block or "
        "shared-memory sizes (hipErrorInvalidValue)",
        RELEASE(7, 0), "clr hipamd/src/hip_module.cpp ihipModuleLaunchCooperativeKernelMultiDevice"},
    /* 5.x-6.1: the attribute always answers true.  clr 8f7acbdad (2024-03-06,
     * first tag holding it in the mirror: rocm-6.2.0; 6.1 not checked) */
    [STUB_RULE_POINTER_SYNC_MEMOPS_STORED] = {
        "HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS reads what hipPointerSetAttribute stored (default false)",
        RELEASE(6, 2), "clr hipamd/src/hip_memory.cpp ihipPointerGetAttributes"},
    /* before: any value is stored as a bool.  clr 5b7258247 (2024-01-25,
     * first tag holding it in the mirror: rocm-6.2.0; 6.1 not checked) */
    [STUB_RULE_POINTER_SYNC_MEMOPS_VALUE_CHECKED] = {
        "hipPointerSetAttribute(SYNC_MEMOPS) refuses a value other than 0 or 1 (hipErrorInvalidValue)",
        RELEASE(6, 2), "clr hipamd/src/hip_memory.cpp ihipPointerSetAttribute"},
    /* 5.2: cubemap arrays are hipErrorNotSupported with surface and gather ones */
    [STUB_RULE_ARRAY_CUBEMAP_INVALID_VALUE] = {
        "hipArrayCreate & co. refuse hipArrayCubemap with hipErrorInvalidValue", RELEASE(5, 3),
        "hipamd src/hip_memory.cpp ihipArrayCreate (rocm-5.3.0)"},
    /* 5.2-5.6: hipArraySurfaceLoadStore and hipArrayTextureGather are
     * hipErrorNotSupported; clr rocm-5.7.0 drops the check */
    [STUB_RULE_ARRAY_SURFACE_GATHER_ACCEPTED] = {
        "hipArrayCreate & co. accept hipArraySurfaceLoadStore and hipArrayTextureGather",
        RELEASE(5, 7), "clr hipamd/src/hip_memory.cpp ihipArrayCreate (rocm-5.7.0)"},
    /* 5.2-5.4 check no pitch there */
    [STUB_RULE_MEMCPY3D_PITCH_BELOW_ROW] = {
        "hipMemcpy3D & co. refuse a pitch below its pointer's xsize (hipErrorInvalidPitchValue)",
        RELEASE(5, 5), "hipamd src/hip_memory.cpp ihipMemcpy3D_validate (rocm-5.5.0)"},
    /* 5.2: -fgpu-rdc is one more option for comgr; the program compiles to code */
    [STUB_RULE_HIPRTC_RDC_GIVES_BITCODE] = {
        "hiprtcCompileProgram with -fgpu-rdc gives bitcode (hiprtcGetBitcode) and no code",
        RELEASE(5, 3), "hipamd 78fe2cca src/hiprtc/hiprtc.cpp hiprtcCompileProgram (fgpu_rdc)"},
    /* 5.3-5.4: an access policy window with a NULL base_ptr is
     * hipErrorInvalidResourceHandle (Set and Get) and nothing records which
     * attribute was set; 5.2 has no such functions (answered as 5.3) */
    [STUB_RULE_KERNEL_ATTR_IN_USE] = {
        "a kernel node keeps the one attribute set: Get of another is hipErrorInvalidValue, "
        "Copy onto another is hipErrorInvalidContext; the window's hitRatio > 1, a persisting "
        "missProp and num_bytes with hitRatio 0 are refused", RELEASE(5, 5),
        "hipamd src/hip_graph_internal.hpp hipGraphKernelNode::SetAttrParams/GetAttrParams/CopyAttr"},
    [STUB_RULE_KERNEL_ATTR_WINDOW_LIMITS] = {
        "hipGraphKernelNodeSetAttribute refuses a window with hitRatio < 0 or num_bytes past "
        "the maximum window (1024 bytes; from 6.2 the device's accessPolicyMaxWindowSize, 0)",
        RELEASE(5, 7), "clr hipamd/src/hip_graph_internal.hpp hipGraphKernelNode::SetAttrParams"},
    /* clr f40c380cd (SWDEV-421025); its range test `priority < Priority::Low (1)
     * || priority > Priority::High (-1)` holds for every int, so Set refuses
     * every priority (still so in rocm-systems' newest) */
    [STUB_RULE_KERNEL_ATTR_PRIORITY] = {
        "hipGraphKernelNode{Get,Set}Attribute take hipLaunchAttributePriority (Set refuses every "
        "value), refuse a node that is not a kernel node, and check the window against the "
        "device's accessPolicyMaxWindowSize (0)", RELEASE(6, 2),
        "clr hipamd/src/hip_graph.cpp hipGraphKernelNodeSetAttribute, GraphKernelNode::SetAttrParams"},
    /* 6.4-7.2: `operation == hipStreamMemOpBarrier || hipStreamMemOpFlushRemoteWrites`
     * is always true, so every batch is hipErrorInvalidValue; fixed by
     * rocm-systems PR #3099 (ROCM-2428, merged 2026-02-05, after the 7.2
     * release: taken as 7.3) */
    [STUB_RULE_BATCH_MEM_OP_CHECKS_EACH_OP] = {
        "hipStreamBatchMemOp refuses only barrier and flush-remote-writes operations "
        "(before: every operation)", RELEASE(7, 3),
        "rocm-systems projects/clr/hipamd/src/hip_stream_ops.cpp ihipBatchMemOperation"},
    [STUB_RULE_GRAPH_MEM_NODES_PINNED] = {
        "hipGraphClone of a graph with memory nodes, hipGraphDestroyNode of one: hipErrorNotSupported",
        RELEASE(6, 3), "clr hipamd/src/hip_graph.cpp hipGraphClone, hipGraphDestroyNode (ca3c2ac18)"},
    [STUB_RULE_GRAPH_FREE_NEEDS_ALLOC_NODE] = {
        "hipGraphAddMemFreeNode takes only an alloc node's address no free node names yet",
        RELEASE(6, 3), "clr hipamd/src/hip_graph.cpp hipGraphAddMemFreeNode memAllocNodePtrs_ (cf0320a0b)"},
};

/* Info attributes ROCr added after 5.2, with the first release whose
 * GetInfo switch (runtime.cpp GetSystemInfo, amd_gpu_agent.cpp
 * GpuAgent::GetInfo, amd_memory_region.cpp MemoryRegion::GetPoolInfo)
 * has a case for them. */
typedef struct attribute_row {
    stub_hsa_info_kind_t kind;
    int attribute;
    int since;
} attribute_row_t;

static const attribute_row_t attributes[] = {
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_MEMORY_AVAIL, RELEASE(5, 3)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY, RELEASE(5, 3)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_ASIC_FAMILY_ID, RELEASE(5, 4)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_UCODE_VERSION, RELEASE(5, 5)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_SDMA_UCODE_VERSION, RELEASE(5, 5)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_IOMMU_SUPPORT, RELEASE(5, 5)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_NUM_SDMA_ENG, RELEASE(5, 6)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG, RELEASE(5, 6)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_NUM_XCC, RELEASE(5, 7)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_DRIVER_UID, RELEASE(5, 7)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_NEAREST_CPU, RELEASE(6, 0)},
    {STUB_HSA_AGENT_INFO, STUB_AMD_AGENT_INFO_MEMORY_PROPERTIES, RELEASE(6, 1)},
    {STUB_HSA_POOL_INFO, STUB_AMD_MEMORY_POOL_INFO_LOCATION, RELEASE(5, 5)},
    {STUB_HSA_POOL_INFO, STUB_AMD_MEMORY_POOL_INFO_ALLOC_REC_GRANULE, RELEASE(6, 0)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_MWAITX_ENABLED, RELEASE(5, 6)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_DMABUF_SUPPORTED, RELEASE(5, 6)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED, RELEASE(6, 0)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_XNACK_ENABLED, RELEASE(6, 0)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR, RELEASE(6, 1)},
    {STUB_HSA_SYSTEM_INFO, STUB_AMD_SYSTEM_INFO_EXT_VERSION_MINOR, RELEASE(6, 1)},
};

/* HSA_AMD_INTERFACE_VERSION_MINOR of hsa_ext_amd.h, the releases that
 * shipped it (first, last), read at ROCm/ROCR-Runtime's tags rocm-5.0.0 ...
 * rocm-6.2.4 and branch rocm-rel-6.3.0.1, ROCm/rocm-systems
 * release/rocm-rel-7.0, and the 6.4 and 7.2 header trees assembled from
 * ROCm's sources (7.1's is not known: 7.0's row stops at 7.0).  The HSA half
 * emulates the release of the HSA headers it was built against, read here
 * from their own macro, since HIP and HSA headers need not come from one
 * release (Debian 13 pairs HIP 5.7 with ROCr 6.1). */
typedef struct interface_row { unsigned minor; int first, last; } interface_row_t;

static const interface_row_t interface_minor[] = {
    {0, RELEASE(5, 0), RELEASE(5, 5)}, {1, RELEASE(5, 6), RELEASE(5, 6)},
    {3, RELEASE(5, 7), RELEASE(5, 7)}, {4, RELEASE(6, 0), RELEASE(6, 1)},
    {6, RELEASE(6, 2), RELEASE(6, 3)}, {7, RELEASE(6, 4), RELEASE(6, 4)},
    {11, RELEASE(7, 0), RELEASE(7, 0)}, {15, RELEASE(7, 2), RELEASE(7, 2)},
};
#define INTERFACE_ROWS (sizeof interface_minor / sizeof interface_minor[0])

#define BUILT RELEASE(HIP_VERSION_MAJOR, HIP_VERSION_MINOR)

#ifdef HSA_AMD_INTERFACE_VERSION_MINOR
#define HSA_HEADERS_MINOR HSA_AMD_INTERFACE_VERSION_MINOR
#else
#define HSA_HEADERS_MINOR 0
#endif

/* The HSA headers' release: HIP's when HIP's release shipped this interface
 * minor (headers of one ROCm), else the newest release that shipped it (the
 * headers declare everything that one answers); a minor missing from the
 * table counts as the newest row at or below it. */
static int hsa_built(void) {
    const interface_row_t *row = &interface_minor[0];
    for (size_t i = 0; i < INTERFACE_ROWS; i++)
        if (interface_minor[i].minor <= HSA_HEADERS_MINOR) row = &interface_minor[i];
    if (row->minor == HSA_HEADERS_MINOR && BUILT >= row->first && BUILT <= row->last) return BUILT;
    if (row->minor != HSA_HEADERS_MINOR && BUILT >= row->first) return BUILT;
    return row->last;
}

static int emulated = BUILT;
static int emulated_hsa = 0;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* ROCPY_STUB_ROCM: "<major>.<minor>" (a ".patch" tail is allowed and
 * ignored), a release from 5.0 to 7.x, for both halves; anything else is
 * refused loudly, as a silent fallback would test the wrong release. */
static void read_environment(void) {
    emulated_hsa = hsa_built();
    const char *env = getenv("ROCPY_STUB_ROCM");
    if (!env || !*env) return;
    char *end;
    long major = strtol(env, &end, 10);
    long minor = -1;
    if (end != env && *end == '.') {
        const char *m = end + 1;
        minor = strtol(m, &end, 10);
        if (end == m) minor = -1;
        if (*end == '.') {
            const char *p = end + 1;
            (void)strtol(p, &end, 10);
            if (end == p) minor = -1;
        }
    }
    if (minor < 0 || minor > 99 || *end != '\0' || major < 5 || major > 7) {
        /* not stub_abort: no runtime reads this variable, so none aborts on it */
        fprintf(stderr, "rocpy stub: ROCPY_STUB_ROCM='%s' is not a ROCm release the stub "
                "emulates: expected <major>.<minor> from 5.0 to 7.x, e.g. 6.2\n", env);
        abort();
    }
    emulated = emulated_hsa = (int)RELEASE(major, minor);
}

static int release(void) {
    pthread_once(&once, read_environment);
    return emulated;
}

static int hsa_release(void) {
    pthread_once(&once, read_environment);
    return emulated_hsa;
}

bool stub_rule(stub_rule_t rule) {
    if ((unsigned)rule >= STUB_RULE_COUNT) return false;
    int r = rules[rule].hsa ? hsa_release() : release();
    return r >= rules[rule].since && (rules[rule].until == 0 || r < rules[rule].until);
}

bool stub_hsa_attribute_known(stub_hsa_info_kind_t kind, int attribute) {
    for (size_t i = 0; i < sizeof attributes / sizeof attributes[0]; i++)
        if (attributes[i].kind == kind && attributes[i].attribute == attribute)
            return hsa_release() >= attributes[i].since;
    return true;
}

unsigned stub_hsa_interface_minor(void) {
    int r = hsa_release();
    if (r == hsa_built()) return HSA_HEADERS_MINOR;
    unsigned minor = 0;
    for (size_t i = 0; i < INTERFACE_ROWS; i++)
        if (r >= interface_minor[i].first) minor = interface_minor[i].minor;
    return minor;
}

int stub_hip_version(void) {
    int r = release();
    return r == BUILT ? HIP_VERSION : (r / 100) * 10000000 + (r % 100) * 100000;
}

int rocpy_stub_rocm_version(void) { return release(); }

int rocpy_stub_rocm_built(void) { return BUILT; }

int rocpy_stub_hsa_version(void) { return hsa_release(); }

int rocpy_stub_hsa_built(void) { return hsa_built(); }

int rocpy_stub_rule_count(void) { return STUB_RULE_COUNT; }

int rocpy_stub_rule_info(int i, const char **name, int *since, int *until, const char **upstream) {
    if (i < 0 || i >= STUB_RULE_COUNT) return 0;
    if (name) *name = rules[i].name;
    if (since) *since = rules[i].since;
    if (until) *until = rules[i].until;
    if (upstream) *upstream = rules[i].upstream;
    return 1;
}

int rocpy_stub_rule_active(int i) {
    if (i < 0 || i >= STUB_RULE_COUNT) return -1;
    return stub_rule((stub_rule_t)i);
}
