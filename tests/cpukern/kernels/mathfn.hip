/* the math library: fast intrinsics and libm functions */
extern "C" __global__ void mathfn(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = __expf(-v) + sinf(v) * cosf(v) + sqrtf(v) + fmaxf(v, 0.5f) + logf(1.0f + v) + rsqrtf(v + 1.0f);
    }
}
