/* expect: saxpy */
/* c-expect: kernel saxpy, parameter y needs float *, not an integer (0 is an int: pass NULL) */
/* only: c11 */
/* no-werror: C (and C++, which this case leaves out) takes 0 for a pointer; the macro form asks for NULL */
/* clang-c-expect: passing 'int' to parameter of incompatible type 'struct kernel_saxpy_parameter_y_needs_float_pointer_not_an_integer_pass_NULL' */
/* at-line: 16 */
/* max-lines: 10 */
/* clang-max-lines: 12 */
/* names gcc c11: kernel saxpy, parameter y needs float * | 0 is an int: pass NULL */
/* names clang c11: passing 'int' | kernel_saxpy_parameter_y_needs_float_pointer_not_an_integer_pass_NULL */
/* lacks: KS__ASSERTED | static_assert */
#include "vector_ops.kstub.h"
void call(const float *x);
void call(const float *x)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, 0, 32);   /* 0 for float *y */
}
