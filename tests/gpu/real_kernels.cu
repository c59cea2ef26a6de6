// real_kernels.cu — kernels for tests/gpu/real_gpu.c, written as projects
// write them (issue 14): a template kernel instantiated only by the host
// code below, and a kernel that needs 100 KiB of dynamic shared memory.
#include <cuda_runtime.h>

template <typename T, int VEC>
__global__ void scale_add(T a, const T *x, T *y, int n)
{
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
#pragma unroll
    for (int v = 0; v < VEC; v++)
        if (i + v < n)
            y[i + v] = a * x[i + v] + y[i + v];
}

// Reverses in[0..n) through shared memory: n floats of dynamic shared
// memory per block, one block.
__global__ void smem_reverse(const float *in, float *out, int n)
{
    extern __shared__ float buf[];
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        buf[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[i] = buf[n - 1 - i];
}

// The host code that instantiates scale_add: nvcc emits scale_add<float, 4>
// and scale_add<double, 1> because of it, and kstub gives both a stub.
void axpy_host(float a, const float *x, float *y, int n, cudaStream_t s)
{
    scale_add<float, 4><<<(n / 4 + 255) / 256, 256, 0, s>>>(a, x, y, n);
}

void axpy_host(double a, const double *x, double *y, int n, cudaStream_t s)
{
    scale_add<double, 1><<<(n + 255) / 256, 256, 0, s>>>(a, x, y, n);
}
