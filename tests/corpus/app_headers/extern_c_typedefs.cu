// extern_c_typedefs.cu — kernels over a C header's typedef'd anonymous
// enum and struct declared inside extern "C" (issue 39 #18).
#include "include/fbase.h"

__global__ void count_base(const fbase_t *s, fbase_t b, fseq_t q, int *n)
{
    if (s[threadIdx.x] == b && q.len > 0)
        atomicAdd(n, 1);
}
