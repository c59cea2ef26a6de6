/* expect: saxpy */
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(2.0f, x, y, 32);                        /* no ks_launch first */
}
