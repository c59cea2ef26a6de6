/* expect: saxpy */
#include "vector_ops.kstub.h"
void call(int *x, float *y);
void call(int *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32);   /* int * for const float * */
}
