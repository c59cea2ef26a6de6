/* expect: saxpy */
/* c-expect: kernel saxpy takes 5 arguments (launch, a, x, y, n), not 6 */
/* at-line: 11 */
/* max-lines: 8 */
/* clang-max-lines: 20 */
/* lacks: macro "ks__saxpy_call" | function-like macro | undeclared */
#include "vector_ops.kstub.h"
void call(float *x, float *y);
void call(float *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32, 1); /* one too many */
}
