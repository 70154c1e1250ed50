/* In a rocpy CPU build, a failed assert fails the launch (hip_cpu_device.h). */
#include_next <assert.h>
#undef assert
#define assert(e) ROCPY_CPU_ASSERT(e, #e)
