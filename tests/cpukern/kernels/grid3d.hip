/* 3D grids and blocks: every work-item writes its global linear index */
extern "C" __global__ void grid3d(unsigned *out, int nx, int ny, int nz) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = (unsigned)(x + 1000 * y + 1000000 * z);
}
