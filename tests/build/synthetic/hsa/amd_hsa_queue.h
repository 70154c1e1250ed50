#ifndef SYNTH_AMD_HSA_QUEUE_H
#define SYNTH_AMD_HSA_QUEUE_H
#include "hsa.h"
typedef struct __attribute__((aligned(64))) amd_queue_s { hsa_queue_t hsa_queue; uint32_t caps; uint64_t write_dispatch_id; } amd_queue_t;
#endif
