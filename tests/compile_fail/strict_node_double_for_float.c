/* expect: kernel saxpy, parameter a needs exactly float */
/* only: c11 c++17 */
#define KSTUB_STRICT
#include "vector_ops.kstub.h"
void call(ks_graph_exec e, saxpy_node_t node, float *x, float *y, size_t n);
void call(ks_graph_exec e, saxpy_node_t node, float *x, float *y, size_t n)
{
    (void)saxpy_node_set(e, node, ks_launch_1d(1, 32), 2.0, x, y, n); /* 2.0 is a double */
}
