/* In a rocpy CPU build, <hip/hip_runtime.h> is the CPU meaning of HIP's names. */
#include "../hip_cpu.h"
