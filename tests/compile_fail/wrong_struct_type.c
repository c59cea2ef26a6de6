/* expect: echo_params */
#include "records.kstub.h"
struct Other { float scale; };
void call(unsigned char *out, struct Other o);
void call(unsigned char *out, struct Other o)
{
    (void)echo_params(ks_launch_1d(1, 1), out, o, rec_Mode_Fast, rec_Axis_X); /* Other for rec::Params */
}
