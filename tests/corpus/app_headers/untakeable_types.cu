// untakeable_types.cu — parameter types from an app header that neither C
// nor C++ callers can take as their own whatever the header's trials say:
// mirrored for both, and the header is never compiled alone for a verdict
// that cannot change the output (issue 38), so no note about it.
#include <stdint.h>
#include "include/untakeable.h"

__global__ void scale_all(Holder<float>::Params p, Derived d, float *out)
{
    if (threadIdx.x < p.n)
        out[threadIdx.x] = p.scale * (float)(d.a + d.b);
}
