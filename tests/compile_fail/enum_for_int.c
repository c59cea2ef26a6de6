/* expect: echo_params */
#include "records.kstub.h"
void call(unsigned char *out, rec_Params p);
void call(unsigned char *out, rec_Params p)
{
    (void)echo_params(ks_launch_1d(1, 1), out, p, 1, rec_Axis_X); /* a plain int for rec::Mode */
}
