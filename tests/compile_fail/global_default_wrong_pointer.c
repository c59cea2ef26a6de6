/* expect: c_taps */
/* c-expect: variable c_taps needs const float *, not another pointer type */
/* only: c11 c++17 */
/* no-werror: the default mode's error, without -Werror and without KSTUB_STRICT */
#include "abi_globals.kstub.h"
void call(const double *x);
void call(const double *x)
{
    (void)c_taps_write(0, x, 4, NULL); /* a double table into a float one */
}
