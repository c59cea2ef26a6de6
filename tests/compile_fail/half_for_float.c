/* expect: echo_halves */
/* clang-c-expect: passing 'float' to parameter of incompatible type 'struct kernel_echo_halves_parameter_h_needs_ks_half' */
/* at-line: 12 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
/* names gcc c11: kernel_echo_halves_parameter_h_needs_ks_half | float */
/* clang-c99-max-lines: 24 */
#include "records.kstub.h"
void call(unsigned char *out, ks_half2 h2, ks_bfloat16 b, ks_bfloat162 b2);
void call(unsigned char *out, ks_half2 h2, ks_bfloat16 b, ks_bfloat162 b2)
{
    (void)echo_halves(ks_launch_1d(1, 1), out, 1.5f, h2, b, b2, 0.0f); /* float for __half */
}
