/* expect: echo_halves */
#include "records.kstub.h"
void call(unsigned char *out, ks_half2 h2, ks_bfloat16 b, ks_bfloat162 b2);
void call(unsigned char *out, ks_half2 h2, ks_bfloat16 b, ks_bfloat162 b2)
{
    (void)echo_halves(ks_launch_1d(1, 1), out, 1.5f, h2, b, b2, 0.0f); /* float for __half */
}
