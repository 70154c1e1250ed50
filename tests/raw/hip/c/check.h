/* What the C programs here share: CHECK(call) exits with status 1, naming
 * the call and its status, unless the call returns hipSuccess. */
#ifndef ROCPY_TESTS_HIP_CHECK_H
#define ROCPY_TESTS_HIP_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <hip/hip_runtime_api.h>

#define CHECK(call)                                                                    \
    do {                                                                               \
        hipError_t e_ = (call);                                                        \
        if (e_ != hipSuccess) {                                                        \
            fprintf(stderr, "line %d: %s: %s\n", __LINE__, #call, hipGetErrorName(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

#endif
