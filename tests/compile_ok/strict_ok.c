/* Strict mode accepts exact types, and an added const on a pointee. */
#define KSTUB_STRICT
#include "records.kstub.h"
#include "vector_ops.kstub.h"
void call(float *x, const float *cx, float *y, size_t n, unsigned char *out, rec_Params p);
void call(float *x, const float *cx, float *y, size_t n, unsigned char *out, rec_Params p)
{
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, x, y, n);
    (void)saxpy(ks_launch_1d(1, 32), 2.0f, cx, y, n);
    (void)blas_scale__floatp_float_int(ks_launch_1d(1, 32), x, 0.5f, (int)n);
    (void)echo_params(ks_launch_1d(1, 1), out, p, rec_Mode_Careful, rec_Axis_Z);
    (void)saxpy_n(n, KS_STREAM_PER_THREAD, 2.0f, cx, y, n);
    ks_status (*f)(ks_launch, float, const float *, float *, size_t) = &saxpy;   /* issue 39 #8 */
    (void)f(ks_launch_1d(1, 32), 2.0f, x, y, n);
}

/* Each kernel's descriptor is exported for the runtime's per-kernel calls. */
void tune(void);
void tune(void)
{
    (void)ks_kernel_set_max_shared(&saxpy_kernel, 65536);
    ks_kernel_attrs attrs;
    (void)ks_kernel_info(&echo_params_kernel, &attrs);
}

/* Graph nodes take the stubs' exact types too (strict mode included). */
void graph(ks_graph g, ks_graph_exec e, const ks_graph_node *deps, float *x, const float *cx, float *y,
           size_t n);
void graph(ks_graph g, ks_graph_exec e, const ks_graph_node *deps, float *x, const float *cx, float *y,
           size_t n)
{
    saxpy_node_t node, nodes[2];
    (void)saxpy_node(g, deps, 1, &node, ks_launch_1d(1, 32), 2.0f, x, y, n);
    (void)saxpy_node(g, &node.node, 1, &nodes[0], ks_launch_1d(1, 32), 2.0f, x, y, n);
    nodes[1] = node;
    (void)saxpy_node_set(e, node, ks_launch_1d(1, 32), 3.0f, cx, y, n);
    /* Many at once: the arguments as a struct per node. */
    saxpy_args args[2] = {{2.0f, cx, y, n}, {3.0f, x, y, n}};
    ks_launch launches[2] = {ks_launch_1d(1, 32), ks_launch_1d(2, 32)};
    (void)saxpy_nodes_set(e, 2, nodes, launches, args);
    (void)saxpy_nodes_set(e, 2, nodes, NULL, args);
}
