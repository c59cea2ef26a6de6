/* expect: kernel echo_params, parameter m needs exactly rec_Mode */
/* only: c11 c++17 */
#define KSTUB_STRICT
#include "records.kstub.h"
typedef struct other_enum { uint8_t value; } other_enum;
void call(unsigned char *out, rec_Params p, other_enum e);
void call(unsigned char *out, rec_Params p, other_enum e)
{
    (void)echo_params(ks_launch_1d(1, 1), out, p, e, rec_Axis_X); /* another enum for rec::Mode */
}
