// Element-wise vector kernels: the demo's first input.
#include <cstddef>
#include <cstdint>

extern "C" __global__ void saxpy(float a, const float *__restrict__ x, float *__restrict__ y,
                                 size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

namespace blas {
__global__ void __launch_bounds__(256) scale(double *x, double s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}

__global__ void scale(float *x, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= s;
}
} // namespace blas
