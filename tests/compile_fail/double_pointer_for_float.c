/* expect: blas_scale__floatp_float_int */
/* at-line: 9 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "vector_ops.kstub.h"
void call(double *x);
void call(double *x)
{
    (void)blas_scale__floatp_float_int(ks_launch_1d(1, 32), x, 2.0f, 32); /* double * for float * */
}
