// scale.cu — the CMake example's kernel, configured by the target's
// include directories and compile definitions.
#include <cstddef>

#include "scale_config.h"

extern "C" __global__ void scale(float a, const float *__restrict__ x, float *__restrict__ y,
                                 size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i];
}
