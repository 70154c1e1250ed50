/* device printf: one line from the first work-item of each block */
extern "C" __global__ void hello(int tag) {
    if (threadIdx.x == 0) printf("rocpy-hello tag=%d block=%d of %d\n", tag, (int)blockIdx.x, (int)gridDim.x);
}
