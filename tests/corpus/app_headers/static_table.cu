// static_table.cu — a parameter's type from an app header with an unused
// static array (issue 39 #19): mirrored, since -Werror callers would fail.
#include "include/codes.h"

__global__ void weigh(const code_t *s, code_t c, int *n)
{
    if (s[threadIdx.x] == c)
        atomicAdd(n, (int)c + 1);
}
