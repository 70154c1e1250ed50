/* Synthetic header with the hazards real ROCm headers have (test input). */
#ifndef SYNTH_HSA_H
#define SYNTH_HSA_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#if defined(__LP64__) || defined(_M_X64)
#define HSA_LARGE_MODEL
#endif
#define HSA_API __attribute__((visibility("default")))
#define SYNTH_ALIGN __attribute__((aligned(64)))
typedef enum { HSA_STATUS_SUCCESS = 0x0, HSA_STATUS_ERROR = 0x1000,
               SYNTH_FORCE_INT32 = INT32_MAX } hsa_status_t;
typedef struct hsa_queue_s {
  uint32_t type;
#ifdef HSA_LARGE_MODEL
  void *base_address;
#else
  uint32_t base_lo, base_hi;
#endif
} hsa_queue_t;
HSA_API hsa_status_t hsa_init(void);
HSA_API hsa_status_t hsa_status_string(hsa_status_t status, const char **text);
static inline uint64_t synth_flag_set64(uint64_t v, int bit) { return v | (1ull << bit); }
#endif
