/* expect: c_taps */
/* at-line: 9 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "abi_globals.kstub.h"
void call(const double *x);
void call(const double *x)
{
    (void)c_taps_write(0, x, 4, NULL); /* a double table into a float one */
}
