// curand_header.cu — a parameter's type from an app header that includes
// curand_kernel.h (issue 39 #19): the generated header mirrors it for C.
#include "include/rng_params.h"

__global__ void draw(rng_params p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = p.mean + (float)(p.seed % 7u);
}
