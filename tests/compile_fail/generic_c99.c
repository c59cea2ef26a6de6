/* expect: fill_needs_C11_call_an_instance_by_name_fill_int_fill_u16 */
/* only: c99 */
/* no-werror: an error in C99 without -Werror, not an implicit declaration and a link error (issue 39 #6) */
/* at-line: 13 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
/* lacks: implicit declaration | implicitly declaring */
#include "templates.kstub.h"
void call(int *out, uint32_t n);
void call(int *out, uint32_t n)
{
    /* fill() is C11's: under C99 the call says which instances to name */
    (void)fill(ks_launch_1d(1, 32), out, 1, n);
}
