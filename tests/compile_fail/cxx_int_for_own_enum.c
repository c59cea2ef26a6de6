/* expect: Color */
/* only: c++17 gnu++17 */
/* at-line: 9 */
/* In C++ a stub takes the application's own enum (issue 30 #6): an int is no Color. */
#include "cxx_own_enums.kstub.h"
void call(float *x);
void call(float *x)
{
    (void)paint(ks_launch_1d(1, 1), 6, Act::Gelu, nn::Norm::L1, nn::AVG_POOL, Layer::CONV, x); /* an int for Color */
}
