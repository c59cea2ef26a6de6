// scale.cu — the CMake example's kernel: y[i] = a * x[i] over n elements.
#include <cstddef>

extern "C" __global__ void scale(float a, const float *__restrict__ x, float *__restrict__ y,
                                 size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}
