/* expect: c_scale */
/* only: c11 c++17 */
/* c-expect: variable c_scale needs exactly int */
/* clang-c-expect: passing 'long' to parameter of incompatible type 'struct variable_c_scale_needs_int_exactly' */
/* max-lines: 8 */
/* clang-max-lines: 10 */
/* at-line: 17 */
/* cxx-max-lines: 20 (clang++ lists every candidate) */
/* names clang c11: tests/compile_fail/strict_global_scalar.c:17:23: */
/* names g++ c++17: use of deleted function | KS_WHY = variable_c_scale_needs_int_exactly */
/* names clang++ c++17: call to deleted function | KS_WHY = variable_c_scale_needs_int_exactly */
#define KSTUB_STRICT
#include "abi_globals.kstub.h"
void call(long v);
void call(long v)
{
    (void)c_scale_set(v, NULL); /* long for int: fine in C, not here */
}
