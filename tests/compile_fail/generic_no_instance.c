/* expect: fill */
/* c-expect: no instance of fill takes these argument types; its instances: fill_int; fill_u16 */
/* only: c11 c++17 */
/* no-werror: no instance is an error in every mode */
/* at-line: 13 */
/* max-lines: 18 */
/* clang-max-lines: 24 */
/* lacks: called object */
#include "templates.kstub.h"
void call(float *out, uint32_t n);
void call(float *out, uint32_t n)
{
    (void)fill(ks_launch_1d(1, 32), out, 1.0f, n); /* fill<float> was never instantiated */
}
