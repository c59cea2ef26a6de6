/* expect: map */
/* c-expect: kernel map, parameter op needs exactly float_fn_float * */
/* clang-c-expect: passing 'void *' to parameter of incompatible type 'struct kernel_map_parameter_op_needs_float_fn_float_pointer_exactly' */
/* only: c11 */
/* at-line: 13 */
/* max-lines: 12 */
/* clang-max-lines: 13 (NULL is a macro too: one more note) */
#define KSTUB_STRICT
#include "abi_function_pointers.kstub.h"
ks_status call(float *y, const float *x);
ks_status call(float *y, const float *x)
{
    return map(ks_launch_1d(1, 32), y, x, NULL, 32); /* strict: (float_fn_float *)0 */
}
