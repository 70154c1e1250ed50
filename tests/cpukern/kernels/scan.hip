/* inclusive scan of each block (Hillis-Steele, double-buffered in shared memory) */
extern "C" __global__ void scan(const int *in, int *out, int n) {
    __shared__ int buf[2][512];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t, src = 0;
    buf[0][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off *= 2) {
        int v = buf[src][t];
        if (t >= off) v += buf[src][t - off];
        buf[1 - src][t] = v;
        src = 1 - src;
        __syncthreads();
    }
    if (i < n) out[i] = buf[src][t];
}
