/* HIP 5.x has the unsynchronised forms; CUDA (the nvidia backend) only the _sync ones */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define SHFL_DOWN(v, o) __shfl_down_sync(0xffffffffu, v, o)
#define BALLOT(p) __ballot_sync(0xffffffffu, p)
#define ANY(p) __any_sync(0xffffffffu, p)
#define ALL(p) __all_sync(0xffffffffu, p)
#else
#define SHFL_DOWN(v, o) __shfl_down(v, o)
#define BALLOT(p) __ballot(p)
#define ANY(p) __any(p)
#define ALL(p) __all(p)
#endif
/* warp-shuffle reduction at the device's wavefront width, one atomic per warp */
__device__ float warp_sum(float v) {
    for (int off = warpSize / 2; off > 0; off /= 2) v += SHFL_DOWN(v, off);
    return v;
}
extern "C" __global__ void warp_reduce(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = warp_sum(i < n ? x[i] : 0.0f);
    if (threadIdx.x % warpSize == 0) atomicAdd(out, v);
}
