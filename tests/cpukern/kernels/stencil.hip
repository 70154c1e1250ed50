#define RADIUS 3
#define BLOCK 128
/* 1D stencil with halo cells in shared memory; zero outside the array */
extern "C" __global__ void stencil(const float *in, float *out, int n) {
    __shared__ float s[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x, l = threadIdx.x + RADIUS;
    s[l] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS, right = g + BLOCK;
        s[l - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
        s[l + BLOCK] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();
    float acc = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) acc += s[l + k] * (float)(RADIUS + 1 - (k < 0 ? -k : k));
    if (g < n) out[g] = acc;
}
