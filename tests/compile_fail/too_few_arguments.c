/* expect: saxpy */
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y);       /* n is missing */
}
