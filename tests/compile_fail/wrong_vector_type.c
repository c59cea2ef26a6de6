/* expect: echo_vectors */
/* clang-c-expect: passing 'float4' (aka 'struct float4') to parameter of incompatible type 'struct kernel_echo_vectors_parameter_f3_needs_float3' */
/* at-line: 12 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
/* names gcc c11: kernel_echo_vectors_parameter_f3_needs_float3 | float4 */
/* clang-c99-max-lines: 24 */
#include "records.kstub.h"
void call(unsigned char *out, float4 f4, double3 d3, char3 c3, int2 i2, ushort3 us3, float4 f3);
void call(unsigned char *out, float4 f4, double3 d3, char3 c3, int2 i2, ushort3 us3, float4 f3)
{
    (void)echo_vectors(ks_launch_1d(1, 1), out, f4, d3, c3, i2, us3, f3); /* float4 for float3 */
}
