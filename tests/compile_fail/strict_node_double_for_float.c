/* expect: saxpy */
/* only: c11 c++17 */
/* c-expect: kernel saxpy, parameter a needs exactly float */
/* clang-c-expect: passing 'double' to parameter of incompatible type 'struct kernel_saxpy_parameter_a_needs_float_exactly' */
/* names clang c11: tests/compile_fail/strict_node_double_for_float.c:17: */
/* max-lines: 8 */
/* clang-max-lines: 12 */
/* at-line: 17 */
/* cxx-max-lines: 20 (clang++ lists every candidate) */
/* names g++ c++17: use of deleted function | KS_WHY = kernel_saxpy_parameter_a_needs_float_exactly */
/* names clang++ c++17: call to deleted function | KS_WHY = kernel_saxpy_parameter_a_needs_float_exactly */
#define KSTUB_STRICT
#include "vector_ops.kstub.h"
void call(ks_graph_exec e, saxpy_node_t node, float *x, float *y, size_t n);
void call(ks_graph_exec e, saxpy_node_t node, float *x, float *y, size_t n)
{
    (void)saxpy_node_set(e, node, ks_launch_1d(1, 32), 2.0, x, y, n); /* 2.0 is a double */
}
