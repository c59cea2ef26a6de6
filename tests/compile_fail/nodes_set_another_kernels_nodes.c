/* expect: blas_scale__floatp_float_int_node_t */
/* c-expect: kernel blas_scale__floatp_float_int: the nodes must be blas_scale__floatp_float_int_node_t */
/* only: c11 c++17 */
/* no-werror: an array of another kernel's nodes is an error in every mode */
#include "vector_ops.kstub.h"
void call(ks_graph_exec e, const saxpy_node_t *nodes, const blas_scale__floatp_float_int_args *args);
void call(ks_graph_exec e, const saxpy_node_t *nodes, const blas_scale__floatp_float_int_args *args)
{
    (void)blas_scale__floatp_float_int_nodes_set(e, 2, nodes, NULL, args); /* saxpy's nodes */
}
