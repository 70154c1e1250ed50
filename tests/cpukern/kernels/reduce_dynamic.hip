/* the same with dynamic shared memory (the launch's shared_mem) and int64 sums */
extern "C" __global__ void reduce_dynamic(const int *x, unsigned long long *total, int n) {
    extern __shared__ long long sdata[];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    sdata[t] = i < (unsigned)n ? x[i] : 0;
    __syncthreads();
    for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
        if (t < k) sdata[t] += sdata[t + k];
        __syncthreads();
    }
    if (t == 0) atomicAdd(total, (unsigned long long)sdata[0]);
}
