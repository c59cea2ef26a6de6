/* expect: variable c_scale needs exactly int */
/* only: c11 c++17 */
#define KSTUB_STRICT
#include "abi_globals.kstub.h"
void call(long v);
void call(long v)
{
    (void)c_scale_set(v, NULL); /* long for int: fine in C, not here */
}
