// device_code_header.cu — a parameter's type from an app header that holds
// __global__ and __host__ __device__ code (issue 39 #19): mirrored for C and C++.
#include "include/points.h"

__global__ void lengths(const point2 *p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = norm2(p[i]);
}
