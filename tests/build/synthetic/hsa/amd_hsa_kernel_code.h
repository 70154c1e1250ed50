#ifndef SYNTH_AMD_HSA_KERNEL_CODE_H
#define SYNTH_AMD_HSA_KERNEL_CODE_H
#include <stdint.h>
typedef __attribute__((aligned(64))) struct amd_kernel_code_s { uint32_t version; uint64_t entry; } amd_kernel_code_t;
#endif
