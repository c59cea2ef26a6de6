/* expect: nn::Norm */
/* only: c++17 gnu++17 */
/* at-line: 9 */
/* In C++ a stub takes the application's own enum class (issue 30 #6): another enum's value is refused. */
#include "cxx_own_enums.kstub.h"
void call(float *x);
void call(float *x)
{
    (void)paint(ks_launch_1d(1, 1), BLUE, nn::Norm::L1, nn::Norm::L1, nn::AVG_POOL, Layer::CONV, x); /* nn::Norm for Act */
}
