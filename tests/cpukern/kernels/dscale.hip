/* doubles, a 64-bit count and a char argument (argument alignment) */
extern "C" __global__ void dscale(double *x, char sign, double a, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = (sign == '-' ? -a : a) * sqrt(x[i]);
}
