/* expect: kernel saxpy, parameter n needs exactly size_t */
/* only: c11 c++17 */
#define KSTUB_STRICT
#include "vector_ops.kstub.h"
void call(float *x, float *y, long n);
void call(float *x, float *y, long n)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, n); /* long for size_t: fine in C, not here */
}
