/* Device variables' accessors take what C converts without a diagnostic
 * (the element type, const added, void * outside strict mode, arrays), the
 * C mirrors of structs, halves and vectors; with GLOBALS_STRICT (C11, C++17)
 * strict mode the exact types. Compiled with -Werror as C99, C11 and C++17,
 * gcc and clang. */
#ifdef GLOBALS_STRICT
#define KSTUB_STRICT
#endif
#include <stdlib.h>
#include <string.h>
#include "abi_globals.kstub.h"
void call(float *x, const float *cx, void *v);
void call(float *x, const float *cx, void *v)
{
    float taps[16] = {0};
    ks_stream s = KS_STREAM_PER_THREAD;
    (void)c_taps_set(taps, NULL);
    (void)c_taps_write(2, cx, 4, s);
    (void)c_taps_read(0, x, 16, NULL);
    (void)c_taps_get(taps, NULL);
    (void)c_scale_set(3, NULL);
    int scale = 0;
    (void)c_scale_get(&scale, NULL);
    Padded p;
    memset(&p, 0, sizeof p);
    (void)c_params_set(p, NULL);
    (void)c_params_get(&p, NULL);
    float *where = NULL;
    (void)c_taps_address(&where);
    Pair pairs[8];
    (void)g_pairs_get(pairs, NULL);
    (void)g_pairs_write(1, pairs, 2, NULL);
    float grid[4][3];
    (void)g_grid_get(&grid[0][0], NULL);
    ks_bfloat16 bf[4];
    (void)g_bf16_get(bf, NULL);
    ks_half h;
    h.bits = bf[0].bits;
    (void)g_half_set(h, NULL);
    float4 v4;
    (void)g_vec_get(&v4, NULL);
    (void)g_vec_set(v4, NULL);
    unsigned long long count = 0;
    (void)g_count_set(count, NULL);
    (void)nn_weights_write(0, cx, 16, NULL);
    Pair one = {1, 2.0f};
    (void)nn_inner_pair_set(one, NULL);
    float *ptr = NULL;
    (void)g_ptr_set(ptr, NULL);
    (void)m_flag_set(1, NULL);
    ks_graph g = NULL;
    ks_graph_node n;
    (void)c_taps_node(g, NULL, 0, 0, taps, 16, &n);
#if !defined(GLOBALS_STRICT) && !defined(__cplusplus)
    (void)c_taps_write(0, v, 16, NULL);      /* void *, as C allows */
    (void)c_scale_set(3L, NULL);             /* a conversion C makes */
#endif
    (void)v;
}
