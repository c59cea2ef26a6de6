// The sample project's one kernel file.
#include "scale_types.h"

extern "C" __global__ void scale_rows(real_t *x, real_t factor, index_t rows)
{
    index_t i = (index_t)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < rows)
        x[i] *= factor;
}
