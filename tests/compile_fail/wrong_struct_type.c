/* expect: echo_params */
/* clang-c-expect: passing 'struct Other' to parameter of incompatible type 'struct kernel_echo_params_parameter_p_needs_struct_rec_Params' */
/* at-line: 14 */
/* max-lines: 18 */
/* clang-max-lines: 12 */
/* cxx-max-lines: 13 (clang++: a note for the enum's C++ overload too) */
/* names gcc c11: kernel_echo_params_parameter_p_needs_struct_rec_Params | struct Other */
/* clang-c99-max-lines: 24 */
#include "records.kstub.h"
struct Other { float scale; };
void call(unsigned char *out, struct Other o);
void call(unsigned char *out, struct Other o)
{
    (void)echo_params(ks_launch_1d(1, 1), out, o, rec_Mode_Fast, rec_Axis_X); /* Other for rec::Params */
}
