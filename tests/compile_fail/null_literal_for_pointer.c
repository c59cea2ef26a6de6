/* expect: saxpy */
/* c-expect: kernel saxpy, parameter y needs float *, not an integer (0 is an int: pass NULL) */
/* only: c11 */
/* no-werror: C (and C++, which this case leaves out) takes 0 for a pointer; the macro form asks for NULL */
/* at-line: 12 */
/* max-lines: 10 */
/* clang-max-lines: 22 */
#include "vector_ops.kstub.h"
void call(const float *x);
void call(const float *x)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, 0, 32);   /* 0 for float *y */
}
