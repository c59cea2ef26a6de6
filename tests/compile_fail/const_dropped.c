/* expect: saxpy */
/* at-line: 9 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "vector_ops.kstub.h"
void call(const float *x, const float *y);
void call(const float *x, const float *y)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, 32);   /* const float * for float *y */
}
