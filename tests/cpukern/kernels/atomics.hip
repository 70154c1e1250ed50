/* every atomic on 32/64-bit integers and floats; out[0..] collect the results */
extern "C" __global__ void atomics(const int *x, int *i32, unsigned long long *u64, float *f32,
                                   double *f64, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i];
    atomicAdd(&i32[0], v);
    atomicSub(&i32[1], v);
    atomicMin(&i32[2], v);
    atomicMax(&i32[3], v);
    atomicAnd(&i32[4], v | ~(1 << (i % 31)));
    atomicOr(&i32[5], v & 0xff);
    atomicXor(&i32[6], v);
    atomicExch(&i32[7], 7);
    int cur = i32[8], prev;                   /* an add built on compare-and-swap */
    while ((prev = atomicCAS(&i32[8], cur, cur + v)) != cur) cur = prev;
    atomicAdd(&u64[0], (unsigned long long)(v & 0xffff) << 20);
    atomicMax(&u64[1], (unsigned long long)v);
    atomicAdd(&f32[0], 0.5f);
    atomicAdd(&f64[0], (double)v * 0.25);
}
