#define T 16
/* C = A (m x k) B (k x n), row-major, 16x16 tiles in shared memory */
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int m, int n, int k) {
    __shared__ float As[T][T], Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int t0 = 0; t0 < k; t0 += T) {
        As[threadIdx.y][threadIdx.x] = row < m && t0 + threadIdx.x < k ? A[row * k + t0 + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = col < n && t0 + threadIdx.y < k ? B[(t0 + threadIdx.y) * n + col] : 0.0f;
        __syncthreads();
        for (int j = 0; j < T; j++) acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];
        __syncthreads();
    }
    if (row < m && col < n) C[row * n + col] = acc;
}
