// big_smem.cu — a kernel that needs more than 48 KiB of dynamic shared
// memory, opted in by the host code (cudaFuncSetAttribute) before launching.
#include <cuda_runtime.h>

__global__ void tile_transpose(const float *in, float *out, int rows, int cols)
{
    extern __shared__ float tile[];
    int n = rows * cols;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        tile[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[(i % cols) * rows + i / cols] = tile[i];
}

void transpose(const float *in, float *out, int rows, int cols, cudaStream_t s)
{
    size_t bytes = (size_t)rows * cols * sizeof(float);
    cudaFuncSetAttribute(tile_transpose, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    tile_transpose<<<1, 1024, bytes, s>>>(in, out, rows, cols);
}
