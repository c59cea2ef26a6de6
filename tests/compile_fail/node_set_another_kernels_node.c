/* expect: saxpy_node_t */
/* no-werror: a node of another kernel is an error in every mode */
#include "vector_ops.kstub.h"
void call(ks_graph g, ks_graph_exec e, float *x, float *y, size_t n);
void call(ks_graph g, ks_graph_exec e, float *x, float *y, size_t n)
{
    saxpy_node_t node;
    (void)saxpy_node(g, NULL, 0, &node, ks_launch_1d(1, 32), 2.0f, x, y, n);
    (void)blas_scale__floatp_float_int_node_set(e, node, ks_launch_1d(1, 32), x, 0.5f, (int)n); /* saxpy's node */
}
