/* Which ROCm release the stub behaves as, and the rules that changed between
 * releases (stub_version.c holds the one table of them).
 *
 * The emulated release is the one of the headers the stub was compiled
 * against: HIP_VERSION_MAJOR/MINOR for the HIP half, the release of
 * HSA_AMD_INTERFACE_VERSION_MINOR for the HSA half (the two may differ, as on
 * Debian 13), unless ROCPY_STUB_ROCM=<major>.<minor> names one for both; it is read once, at the first question.  Code elsewhere in
 * the stub never compares versions: it asks stub_rule(STUB_RULE_...) or
 * stub_hsa_attribute_known(), so each behaviour change is one table row
 * naming the release where it changed and the upstream function.
 */
#ifndef ROCPY_STUB_VERSION_H
#define ROCPY_STUB_VERSION_H

#include <stdbool.h>

/* ---- what Python sees (stub_version.cdef) ------------------------------ */

/* The emulated release as major * 100 + minor (ROCm 6.2 -> 602). */
int rocpy_stub_rocm_version(void);
/* The release of the headers the stub was built against, the same way. */
int rocpy_stub_rocm_built(void);
/* The HSA half's: ROCr's behaviour follows the HSA headers' release
 * (HSA_AMD_INTERFACE_VERSION_MINOR; HIP's when the two came from one ROCm),
 * or ROCPY_STUB_ROCM when it is set, for both halves. */
int rocpy_stub_hsa_version(void);
int rocpy_stub_hsa_built(void);
/* The rules table: number of rows, and row i's name, the releases (major *
 * 100 + minor) from which and until which (0: still) it holds, and its
 * upstream source; 0 when i is out of range. */
int rocpy_stub_rule_count(void);
int rocpy_stub_rule_info(int i, const char **name, int *since, int *until, const char **upstream);
/* Whether row i is in force for the emulated release (-1 out of range). */
int rocpy_stub_rule_active(int i);

/* ---- what the stub's C asks ---------------------------------------------- */

typedef enum stub_rule {
    STUB_RULE_ERROR_STRING_DESCRIPTIVE,
    STUB_RULE_SCHEDULE_FLAGS_EXCLUSIVE,
    STUB_RULE_INIT_FLAGS_MUST_BE_ZERO,
    STUB_RULE_DEVICE_GET_NULL_IS_INVALID_VALUE,
    STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_VALUE,
    STUB_RULE_WAIT_EVENT_BAD_STREAM_INVALID_HANDLE,
    STUB_RULE_SHARED_MEM_CONFIG_CHECKED,
    STUB_RULE_HOST_DEVICE_POINTER_FLAGS_MUST_BE_ZERO,
    STUB_RULE_CACHE_CONFIG_CHECKED,
    STUB_RULE_LAST_ERROR_KEEPS_ERRORS,
    STUB_RULE_SHARED_MEM_CONFIG_NOT_SUPPORTED,
    STUB_RULE_CACHE_CONFIG_NOT_SUPPORTED,
    STUB_RULE_LIMITS_STACK_SIZE,
    STUB_RULE_SET_LIMIT_MALLOC_HEAP,
    STUB_RULE_GRAPH_REMOVE_DEPENDENCIES_CHECKED,
    STUB_RULE_HOST_NODE_PARAMS_NULL_USER_DATA,
    STUB_RULE_DEFAULT_MEM_POOL_INVALID_DEVICE,
    STUB_RULE_SET_MEM_POOL_CHECKS_DEVICE,
    STUB_RULE_IPC_GET_MEM_HANDLE_INVALID_VALUE,
    STUB_RULE_IPC_OPEN_OWN_MEM_HANDLE_REFUSED,
    STUB_RULE_IPC_CLOSE_UNKNOWN_INVALID_VALUE,
    STUB_RULE_HOST_REGISTER_FAILURE_INVALID_VALUE,
    STUB_RULE_HOST_REGISTER_FLAGS_CHECKED,
    STUB_RULE_OCCUPANCY_UNKNOWN_FUNCTION_INVALID_DEVICE_FUNCTION,
    STUB_RULE_CU_MASK_WGP_PAIRS,
    STUB_RULE_GRAPH_USER_OBJECT_COUNTS,
    STUB_RULE_COOPERATIVE_BAD_STREAM_CONTEXT_DESTROYED,
    STUB_RULE_COOPERATIVE_MULTI_DEVICE_SAME_SHAPE,
    STUB_RULE_POINTER_SYNC_MEMOPS_STORED,
    STUB_RULE_POINTER_SYNC_MEMOPS_VALUE_CHECKED,
    STUB_RULE_ARRAY_CUBEMAP_INVALID_VALUE,
    STUB_RULE_ARRAY_SURFACE_GATHER_ACCEPTED,
    STUB_RULE_MEMCPY3D_PITCH_BELOW_ROW,
    STUB_RULE_HIPRTC_RDC_GIVES_BITCODE,
    STUB_RULE_KERNEL_ATTR_IN_USE,
    STUB_RULE_KERNEL_ATTR_WINDOW_LIMITS,
    STUB_RULE_KERNEL_ATTR_PRIORITY,
    STUB_RULE_BATCH_MEM_OP_CHECKS_EACH_OP,
    STUB_RULE_GRAPH_MEM_NODES_PINNED,
    STUB_RULE_GRAPH_FREE_NEEDS_ALLOC_NODE,
    STUB_RULE_COUNT
} stub_rule_t;

/* Whether the rule is in force for the emulated release. */
bool stub_rule(stub_rule_t rule);

/* Whether ROCr of the emulated release answers an info attribute (ROCr
 * returns HSA_STATUS_ERROR_INVALID_ARGUMENT for one it does not know):
 * attributes newer than ROCm 5.2 are listed with the release that added
 * them, older ones are always known. */
typedef enum stub_hsa_info_kind {
    STUB_HSA_SYSTEM_INFO,
    STUB_HSA_AGENT_INFO,
    STUB_HSA_POOL_INFO
} stub_hsa_info_kind_t;
bool stub_hsa_attribute_known(stub_hsa_info_kind_t kind, int attribute);

/* HIP_VERSION of the emulated release (hipRuntimeGetVersion): the headers'
 * own when they are that release, else major * 10000000 + minor * 100000. */
int stub_hip_version(void);

/* HSA_AMD_INTERFACE_VERSION_MINOR of the emulated release's hsa_ext_amd.h
 * (HSA_AMD_SYSTEM_INFO_EXT_VERSION_MINOR answers it; the major is 1). */
unsigned stub_hsa_interface_minor(void);

#endif
