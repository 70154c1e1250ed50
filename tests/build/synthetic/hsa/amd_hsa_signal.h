#ifndef SYNTH_AMD_HSA_SIGNAL_H
#define SYNTH_AMD_HSA_SIGNAL_H
#include <stdint.h>
typedef struct amd_signal_s { int64_t value; uint64_t event_mailbox_ptr; uint32_t event_id; } __attribute__((aligned(64))) amd_signal_t;
#endif
