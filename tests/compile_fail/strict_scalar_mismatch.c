/* expect: saxpy */
/* only: c11 c++17 */
/* c-expect: kernel saxpy, parameter n needs exactly size_t */
/* clang-c-expect: passing 'long' to parameter of incompatible type 'struct kernel_saxpy_parameter_n_needs_size_t_exactly' */
/* names clang c11: tests/compile_fail/strict_scalar_mismatch.c:17: */
/* max-lines: 8 */
/* clang-max-lines: 12 */
/* at-line: 17 */
/* cxx-max-lines: 20 (clang++ lists every candidate) */
/* names g++ c++17: use of deleted function | KS_WHY = kernel_saxpy_parameter_n_needs_size_t_exactly */
/* names clang++ c++17: call to deleted function | KS_WHY = kernel_saxpy_parameter_n_needs_size_t_exactly */
#define KSTUB_STRICT
#include "vector_ops.kstub.h"
void call(float *x, float *y, long n);
void call(float *x, float *y, long n)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, n); /* long for size_t: fine in C, not here */
}
