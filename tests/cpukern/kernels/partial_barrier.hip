/* a barrier only the lower half of the block reaches (the rest returned) */
extern "C" __global__ void partial_barrier(int *x) {
    if (threadIdx.x >= blockDim.x / 2) return;
    x[threadIdx.x] = 1;
    __syncthreads();
    x[threadIdx.x] += 1;
}
