/* hipApiName (hipamd hip_intercept.cpp): the name of a HIP API id of the
 * tracing interface, from the installed headers' hip_prof_str.h (the same
 * table hipamd compiles in), "unknown" for ids it does not name. */
#include "hip_internal.h"

#include <hip/amd_detail/hip_prof_str.h>

const char *hipApiName(uint32_t id) { return hip_api_name(id); }
