/* expect: saxpy */
/* c-expect: kernel saxpy, parameter x needs const float *, not another pointer type */
/* c-given: int * */
/* at-line: 11 */
/* max-lines: 12 */
/* clang-max-lines: 36 */
#include "vector_ops.kstub.h"
void call(int *x, float *y);
void call(int *x, float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32);   /* int * for const float * */
}
