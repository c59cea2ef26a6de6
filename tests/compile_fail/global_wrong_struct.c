/* expect: g_pairs */
#include "abi_globals.kstub.h"
void call(Padded *p);
void call(Padded *p)
{
    (void)g_pairs_get(p, NULL); /* another struct's memory */
}
