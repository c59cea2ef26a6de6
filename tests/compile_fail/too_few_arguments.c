/* expect: saxpy */
/* c-expect: kernel saxpy takes 5 arguments (launch, a, x, y, n), not 4 */
/* at-line: 19 */
/* max-lines: 8 */
/* clang-c-expect: called object type 'struct kernel_saxpy_takes_5_arguments_launch_a_x_y_n' is not a function or function pointer */
/* clang-max-lines: 8 */
/* cxx-max-lines: 10 */
/* names gcc c99: kernel_saxpy_takes_5_arguments */
/* names gcc c11: kernel saxpy takes 5 arguments (launch, a, x, y, n), not 4 */
/* names clang c99: kernel_saxpy_takes_5_arguments_launch_a_x_y_n */
/* names clang c11: kernel_saxpy_takes_5_arguments_launch_a_x_y_n */
/* names g++ c++17: use of deleted function | KS_WHY = kernel_saxpy_takes_5_arguments_launch_a_x_y_n */
/* names clang++ c++17: call to deleted function 'saxpy' | KS_WHY = kernel_saxpy_takes_5_arguments_launch_a_x_y_n */
/* lacks: macro "ks__saxpy_call" | function-like macro | undeclared | KS__WRONG_COUNT */
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y);       /* n is missing */
}
