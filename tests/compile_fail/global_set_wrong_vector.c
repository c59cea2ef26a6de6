/* expect: g_vec */
/* clang-c-expect: passing 'float3' (aka 'struct float3') to parameter of incompatible type 'struct variable_g_vec_needs_float4' */
/* at-line: 14 */
/* max-lines: 10 */
/* clang-max-lines: 10 */
/* clang-c99-max-lines: 14 */
/* names gcc c11: variable_g_vec_needs_float4 | float3 */
/* names clang c11: float3 | variable_g_vec_needs_float4 */
/* A device variable's value of another struct type: one error, at the value. */
#include "abi_globals.kstub.h"
void call(float3 v);
void call(float3 v)
{
    (void)g_vec_set(v, NULL); /* float3 for float4 */
}
