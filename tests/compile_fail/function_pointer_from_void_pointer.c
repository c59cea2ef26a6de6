/* expect: map */
/* c-expect: kernel map, parameter op needs float_fn_float * or NULL, not another pointer type */
/* clang-c-expect: passing 'void *' to parameter of incompatible type 'struct kernel_map_parameter_op_needs_float_fn_float_pointer' */
/* only: c11 c++17 */
/* no-werror: the default mode's error, without -Werror and without KSTUB_STRICT */
/* at-line: 13 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "abi_function_pointers.kstub.h"
ks_status call(float *y, const float *x, void *h_op);
ks_status call(float *y, const float *x, void *h_op)
{
    return map(ks_launch_1d(1, 32), y, x, h_op, 32); /* C converts no void * to a function pointer */
}
