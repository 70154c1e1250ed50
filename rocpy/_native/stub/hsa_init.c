/* hsa_init / hsa_shut_down reference counting and system-wide queries
 * (ROCr core::Runtime::Acquire, Release, IsOpen, GetSystemInfo; the extension
 * queries of hsa.cpp). */
#include "hsa_internal.h"

#include <limits.h>
#include <stdatomic.h>
#include <string.h>

static pthread_mutex_t boot_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int32_t ref_count;

bool stub_hsa_is_open(void) { return atomic_load_explicit(&ref_count, memory_order_acquire) > 0; }

hsa_status_t hsa_init(void) {
    pthread_mutex_lock(&boot_lock);
    int32_t count = atomic_load(&ref_count);
    if (count == INT32_MAX) {
        pthread_mutex_unlock(&boot_lock);
        return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
    }
    if (count == 0) stub_hsa_agents_init();
    atomic_store(&ref_count, count + 1);
    pthread_mutex_unlock(&boot_lock);
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_shut_down(void) {
    pthread_mutex_lock(&boot_lock);
    int32_t count = atomic_load(&ref_count);
    if (count == 0) {
        pthread_mutex_unlock(&boot_lock);
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    }
    if (count == 1) {
        /* What ROCr's Runtime::Unload releases: queues, the copy engines,
         * the async event thread, the loader's executables.  Allocations
         * and signals the application still holds are left to it. */
        stub_hsa_queues_shutdown();
        stub_hsa_copy_shutdown();
        stub_hsa_async_shutdown();
        stub_hsa_executables_shutdown();
    }
    atomic_store(&ref_count, count - 1);
    pthread_mutex_unlock(&boot_lock);
    return HSA_STATUS_SUCCESS;
}

/* The stub implements the AMD profiler extension and nothing else, so that
 * is the only bit it sets and the only extension it reports supported. */
static void set_extension_bits(uint8_t bits[128]) {
    memset(bits, 0, 128);
    bits[HSA_EXTENSION_AMD_PROFILER / 8] |= (uint8_t)(1u << (HSA_EXTENSION_AMD_PROFILER % 8));
}

hsa_status_t hsa_system_get_info(hsa_system_info_t attribute, void *value) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(value);
    if (!stub_hsa_attribute_known(STUB_HSA_SYSTEM_INFO, (int)attribute)) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    switch ((int)attribute) {
    case HSA_SYSTEM_INFO_VERSION_MAJOR: *(uint16_t *)value = 1; break;
    case HSA_SYSTEM_INFO_VERSION_MINOR: *(uint16_t *)value = 1; break;
    case HSA_SYSTEM_INFO_TIMESTAMP: *(uint64_t *)value = stub_now_ns(); break;
    /* the stub's clock counts nanoseconds */
    case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY: *(uint64_t *)value = 1000000000ull; break;
    case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT: *(uint64_t *)value = UINT64_MAX; break;
    case HSA_SYSTEM_INFO_ENDIANNESS: *(hsa_endianness_t *)value = HSA_ENDIANNESS_LITTLE; break;
    case HSA_SYSTEM_INFO_MACHINE_MODEL: *(hsa_machine_model_t *)value = HSA_MACHINE_MODEL_LARGE; break;
    case HSA_SYSTEM_INFO_EXTENSIONS: set_extension_bits(value); break;
    case HSA_AMD_SYSTEM_INFO_BUILD_VERSION: *(const char **)value = "rocpy-stub"; break;
    /* KFD with SVM: attributes and prefetch are modelled in hsa_svm.c */
    case HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED: *(bool *)value = true; break;
    case HSA_AMD_SYSTEM_INFO_SVM_ACCESSIBLE_BY_DEFAULT:
    case STUB_AMD_SYSTEM_INFO_XNACK_ENABLED: {
        bool all = stub_hsa_gpu_count() > 0;
        for (int i = 0; i < stub_hsa_gpu_count(); i++) all = all && stub_device(i)->xnack;
        *(bool *)value = all;
        break;
    }
    case STUB_AMD_SYSTEM_INFO_MWAITX_ENABLED:
    case STUB_AMD_SYSTEM_INFO_DMABUF_SUPPORTED: *(bool *)value = false; break;
    /* hsa_vmem.c, where the headers declare the calls */
    case STUB_AMD_SYSTEM_INFO_VIRTUAL_MEM_API_SUPPORTED: *(bool *)value = stub_hsa_vmem_supported(); break;
    /* the emulated release's hsa_ext_amd.h interface version, not the headers' */
    case STUB_AMD_SYSTEM_INFO_EXT_VERSION_MAJOR: *(uint16_t *)value = 1; break;
    case STUB_AMD_SYSTEM_INFO_EXT_VERSION_MINOR: *(uint16_t *)value = (uint16_t)stub_hsa_interface_minor(); break;
    default: return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_extension_get_name(uint16_t extension, const char **name) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(name);
    switch (extension) {
    case HSA_EXTENSION_FINALIZER: *name = "HSA_EXTENSION_FINALIZER"; break;
    case HSA_EXTENSION_IMAGES: *name = "HSA_EXTENSION_IMAGES"; break;
    case HSA_EXTENSION_PERFORMANCE_COUNTERS: *name = "HSA_EXTENSION_PERFORMANCE_COUNTERS"; break;
    case HSA_EXTENSION_PROFILING_EVENTS: *name = "HSA_EXTENSION_PROFILING_EVENTS"; break;
    case HSA_EXTENSION_AMD_PROFILER: *name = "HSA_EXTENSION_AMD_PROFILER"; break;
    case HSA_EXTENSION_AMD_LOADER: *name = "HSA_EXTENSION_AMD_LOADER"; break;
    case HSA_EXTENSION_AMD_AQLPROFILE: *name = "HSA_EXTENSION_AMD_AQLPROFILE"; break;
    default:
        *name = "HSA_EXTENSION_INVALID";
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
    return HSA_STATUS_SUCCESS;
}

static bool extension_in_range(uint16_t extension) {
    return extension <= HSA_EXTENSION_STD_LAST ||
           (extension >= HSA_AMD_FIRST_EXTENSION && extension <= HSA_AMD_LAST_EXTENSION);
}

hsa_status_t hsa_system_extension_supported(uint16_t extension, uint16_t version_major,
                                            uint16_t version_minor, bool *result) {
    HSA_CHECK_OPEN();
    if (!extension_in_range(extension) || result == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = extension == HSA_EXTENSION_AMD_PROFILER && version_major == 1 && version_minor == 0;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_major_extension_supported(uint16_t extension, uint16_t version_major,
                                                  uint16_t *version_minor, bool *result) {
    HSA_CHECK_OPEN();
    HSA_CHECK_PTR(version_minor);
    HSA_CHECK_PTR(result);
    *result = extension == HSA_EXTENSION_AMD_PROFILER && version_major == 1;
    if (*result) *version_minor = 0;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_extension_supported(uint16_t extension, hsa_agent_t agent,
                                           uint16_t version_major, uint16_t version_minor,
                                           bool *result) {
    HSA_CHECK_OPEN();
    if (!extension_in_range(extension) || result == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    *result = a->is_gpu && extension == HSA_EXTENSION_AMD_PROFILER && version_major == 1 &&
              version_minor == 0;
    return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_major_extension_supported(uint16_t extension, hsa_agent_t agent,
                                                 uint16_t version_major, uint16_t *version_minor,
                                                 bool *result) {
    HSA_CHECK_OPEN();
    if (!extension_in_range(extension) || result == NULL) return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    *result = false;
    stub_hsa_agent_t *a = stub_hsa_agent(agent);
    if (!a) return HSA_STATUS_ERROR_INVALID_AGENT;
    if (a->is_gpu && extension == HSA_EXTENSION_AMD_PROFILER && version_major == 1) {
        HSA_CHECK_PTR(version_minor);
        *version_minor = 0;
        *result = true;
    }
    return HSA_STATUS_SUCCESS;
}
