// Waits about `cycles` clock ticks, then fills p[0..n) with value: a kernel
// whose duration makes stream ordering observable.  On the stub a Python
// emulation (registered by tests/conformance/conftest.py) sleeps instead.
#ifndef __CUDACC__
#include <hip/hip_runtime.h>
#endif

extern "C" __global__ void spin_fill(unsigned *p, unsigned value, int n, long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = value;
}
