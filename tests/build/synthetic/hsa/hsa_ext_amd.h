#ifndef SYNTH_HSA_EXT_AMD_H
#define SYNTH_HSA_EXT_AMD_H
#include "hsa.h"
typedef struct { uint64_t address; uint32_t flags; } synth_fault_t;
typedef struct synth_event_s {
  int event_type;
  union { synth_fault_t memory_fault; uint64_t reserved; };
} synth_event_t;
typedef enum synth_mode_e { SYNTH_MODE_A = 1, SYNTH_MODE_B = SYNTH_MODE_A << 3 } synth_mode_t, synth_mode_alias_t;
hsa_status_t HSA_API hsa_amd_synth_wait(synth_event_t *event, synth_mode_t mode) __asm__("hsa_amd_synth_wait_v2");
#endif
