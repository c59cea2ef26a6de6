// const_c_typedef.cu — a kernel taking a typedef'd anonymous struct from the
// application's C header as a const value (issue 18, item 2). The generated C
// names it "Dimensions", the typedef the header declares: there is no
// "struct Dimensions" in C. The const one comes first, so the type is met
// with its qualifier before without it.
#include "include/dims.h"

__global__ void dims_scale(float *x, const Dimensions d)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.w * d.h)
        x[i] *= d.scale;
}

__global__ void dims_fill(float *x, Dimensions d, const Dimensions *limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < d.w * d.h && i < limit->w * limit->h)
        x[i] = d.scale;
}
