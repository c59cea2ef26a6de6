/* expect: Layer_Kind */
/* only: c++17 gnu++17 */
/* at-line: 9 */
/* In C++ a stub takes the enum nested in the application's class as it is (issue 30 #6): an int is no Layer::Kind. */
#include "cxx_own_enums.kstub.h"
void call(float *x);
void call(float *x)
{
    (void)paint(ks_launch_1d(1, 1), BLUE, Act::Gelu, nn::Norm::L1, nn::AVG_POOL, 2, x); /* an int for Layer::Kind */
}
