/* expect: echo_params */
/* clang-c-expect: passing 'int' to parameter of incompatible type 'struct kernel_echo_params_parameter_m_needs_rec_Mode' */
/* at-line: 13 */
/* max-lines: 18 */
/* clang-max-lines: 12 */
/* cxx-max-lines: 13 (clang++: a note for the enum's C++ overload too) */
/* names gcc c11: kernel_echo_params_parameter_m_needs_rec_Mode | int */
/* clang-c99-max-lines: 24 */
#include "records.kstub.h"
void call(unsigned char *out, rec_Params p);
void call(unsigned char *out, rec_Params p)
{
    (void)echo_params(ks_launch_1d(1, 1), out, p, 1, rec_Axis_X); /* a plain int for rec::Mode */
}
