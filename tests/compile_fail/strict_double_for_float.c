/* expect: kernel saxpy, parameter a needs exactly float */
/* only: c11 c++17 */
#define KSTUB_STRICT
#include "vector_ops.kstub.h"
void call(float *x, float *y, size_t n);
void call(float *x, float *y, size_t n)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0, x, y, n); /* 2.0 is a double */
}
