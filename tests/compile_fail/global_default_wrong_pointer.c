/* expect: c_taps */
/* c-expect: variable c_taps needs const float *, not another pointer type */
/* clang-c-expect: passing 'const double *' to parameter of incompatible type 'struct variable_c_taps_needs_const_float_pointer' */
/* only: c11 c++17 */
/* no-werror: the default mode's error, without -Werror and without KSTUB_STRICT */
/* at-line: 13 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "abi_globals.kstub.h"
void call(const double *x);
void call(const double *x)
{
    (void)c_taps_write(0, x, 4, NULL); /* a double table into a float one */
}
