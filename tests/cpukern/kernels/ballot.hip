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
/* warp votes: per warp, how many lanes hold an odd value; any/all flags */
extern "C" __global__ void ballot(const int *x, int *count, int *any_all, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int odd = i < n ? (x[i] & 1) : 0;
    unsigned long long m = BALLOT(odd);
    int a = ANY(odd), b = ALL(odd);
    if (threadIdx.x % warpSize == 0) {
        int w = i / warpSize;
        count[w] = __popcll(m);
        any_all[2 * w] = a;
        any_all[2 * w + 1] = b;
    }
}
