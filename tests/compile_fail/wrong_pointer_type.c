/* expect: saxpy */
/* c-expect: kernel saxpy, parameter x needs const float *, not another pointer type */
/* clang-c-expect: passing 'int *' to parameter of incompatible type 'struct kernel_saxpy_parameter_x_needs_const_float_pointer' */
/* c-given: int * */
/* at-line: 22 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
/* names gcc c99: kernel_saxpy_parameter_x_needs_const_float_pointer | const float * | of type | int * */
/* names clang c99: passing 'int *' to parameter of type 'kernel_saxpy_parameter_x_needs_const_float_pointer' (aka 'const float *') */
/* names gcc c11: kernel saxpy, parameter x needs const float * | selector of type | int * */
/* names gcc gnu17: kernel saxpy, parameter x needs const float * | selector of type | int * */
/* names clang c11: passing 'int *' | kernel_saxpy_parameter_x_needs_const_float_pointer */
/* names g++ c++17: int*& | KS_WHY = kernel_saxpy_parameter_x_needs_const_float_pointer */
/* names clang++ c++17: 'saxpy' | int *& | KS_WHY = kernel_saxpy_parameter_x_needs_const_float_pointer | from 'int *' to 'const float *__restrict' for 3rd argument */
/* Issue 30 #3: the report starts at the caller's line and names kernel,
 * parameter, the type wanted and the type given, in a few lines. */
#include "vector_ops.kstub.h"
void call(int *x, float *y);
void call(int *x, float *y)
{
    /* x, an int *, for const float *x: the report names the types, not this comment */
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32);   /* the wrong pointer */
}
