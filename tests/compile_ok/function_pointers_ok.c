/* A device function pointer's parameter (tests/corpus/abi_function_pointers.cu)
 * takes, in the default mode, the function pointer type a caller declares for
 * the value cudaMemcpyFromSymbol reads, the generated typedef's pointer, and
 * NULL; in strict mode (KSTUB_STRICT) the exact type only, so NULL is written
 * (float_fn_float *)0. In every language, C99 and C++17 included. */
#ifdef FP_STRICT
#define KSTUB_STRICT
#endif
#include "abi_function_pointers.kstub.h"
ks_status call(float *y, const float *x, float (*h_op)(float), unary_t_fn *u, binary_t_fn *add,
               unary_t_fn **table, float (*pick)(float *, int));
ks_status call(float *y, const float *x, float (*h_op)(float), unary_t_fn *u, binary_t_fn *add,
               unary_t_fn **table, float (*pick)(float *, int))
{
    ks_status s = map(ks_launch_1d(1, 32), y, x, h_op, 32);
    s = s ? s : map(ks_launch_1d(1, 32), y, x, u, 32);
    s = s ? s : map_t(ks_launch_1d(1, 1), y, h_op, 3);
    s = s ? s : zip(ks_launch_1d(1, 1), y, add, x, x);
    s = s ? s : shapes(ks_launch_1d(1, 1), (floatp_fn_floatp_int *)0, (Pair_fn_cPairp_Pair *)0,
                       (void_fn_void *)0, (int_fn_void *)0, (unary_t_fnp_fn_int_unary_t_fnp *)0,
                       h_op, table, (ops_reduce_t_fn *)0, 1.0);
    s = s ? s : apply_float_p_float(ks_launch_1d(1, 1), y, h_op, 1);
#if !defined(KSTUB_STRICT)
    s = s ? s : map(ks_launch_1d(1, 32), y, x, NULL, 32);
    s = s ? s : map_n(32, NULL, y, x, NULL, 32);
#else
    s = s ? s : map(ks_launch_1d(1, 32), y, x, (float_fn_float *)0, 32);
#endif
    (void)pick;
    return s;
}
