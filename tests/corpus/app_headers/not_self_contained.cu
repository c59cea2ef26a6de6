// not_self_contained.cu — a parameter's type from an app header that needs
// <stdint.h> and <stddef.h> included before it (issue 39 #19): mirrored.
#include <stddef.h>
#include <stdint.h>
#include "include/span.h"

__global__ void fill_span(span_t s, uint32_t *out)
{
    if (threadIdx.x < s.n)
        out[threadIdx.x] = (uint32_t)s.cap;
}
