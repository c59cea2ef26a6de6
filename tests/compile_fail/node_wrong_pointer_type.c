/* expect: saxpy_node */
/* at-line: 10 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "vector_ops.kstub.h"
void call(ks_graph g, double *x, float *y, size_t n);
void call(ks_graph g, double *x, float *y, size_t n)
{
    saxpy_node_t node;
    (void)saxpy_node(g, NULL, 0, &node, ks_launch_1d(1, 32), 2.0f, x, y, n); /* double * for const float * */
}
