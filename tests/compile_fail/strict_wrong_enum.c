/* expect: echo_params */
/* only: c11 c++17 */
/* c-expect: kernel echo_params, parameter m needs exactly rec_Mode */
/* clang-c-expect: passing 'other_enum' (aka 'struct other_enum') to parameter of incompatible type 'struct kernel_echo_params_parameter_m_needs_rec_Mode_exactly' */
/* names clang c11: tests/compile_fail/strict_wrong_enum.c:18: */
/* max-lines: 20 */
/* clang-max-lines: 20 */
/* at-line: 18 */
/* cxx-max-lines: 20 (clang++ lists every candidate) */
/* names g++ c++17: use of deleted function | KS_WHY = kernel_echo_params_parameter_m_needs_rec_Mode_exactly */
/* names clang++ c++17: call to deleted function | KS_WHY = kernel_echo_params_parameter_m_needs_rec_Mode_exactly */
#define KSTUB_STRICT
#include "records.kstub.h"
typedef struct other_enum { uint8_t value; } other_enum;
void call(unsigned char *out, rec_Params p, other_enum e);
void call(unsigned char *out, rec_Params p, other_enum e)
{
    (void)echo_params(ks_launch_1d(1, 1), out, p, e, rec_Axis_X); /* another enum for rec::Mode */
}
