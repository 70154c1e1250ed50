/* writes far outside its buffer (a wrong stride): a GPU memory fault */
extern "C" __global__ void oob(float *p, long long stride) {
    p[(long long)threadIdx.x * stride] = 1.0f;
}
