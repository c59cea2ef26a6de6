/* expect: saxpy_node */
/* c-expect: kernel saxpy, parameter y needs float *, not another pointer type */
/* clang-c-expect: passing 'int *' to parameter of incompatible type 'struct kernel_saxpy_parameter_y_needs_float_pointer' */
/* only: c11 c++17 */
/* no-werror: the default mode's error, without -Werror and without KSTUB_STRICT */
/* at-line: 14 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "vector_ops.kstub.h"
void call(ks_graph g, const float *x, int *y, size_t n);
void call(ks_graph g, const float *x, int *y, size_t n)
{
    saxpy_node_t node;
    (void)saxpy_node(g, NULL, 0, &node, ks_launch_1d(1, 32), 2.0f, x, y, n); /* int * for float * */
}
