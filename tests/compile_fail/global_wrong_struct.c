/* expect: g_pairs */
/* at-line: 9 */
/* max-lines: 12 */
/* clang-max-lines: 12 */
#include "abi_globals.kstub.h"
void call(Padded *p);
void call(Padded *p)
{
    (void)g_pairs_get(p, NULL); /* another struct's memory */
}
