/* expect: saxpy */
/* c-expect: kernel saxpy, parameter x needs const float *, not another pointer type */
/* clang-c-expect: passing 'double *' to parameter of incompatible type 'struct kernel_saxpy_parameter_x_needs_const_float_pointer' */
/* only: c11 c++17 */
/* no-werror: the default mode's error, without -Werror and without KSTUB_STRICT */
/* at-line: 13 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "vector_ops.kstub.h"
void call(double *x, float *y, size_t n);
void call(double *x, float *y, size_t n)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, n); /* double * for const float * */
}
